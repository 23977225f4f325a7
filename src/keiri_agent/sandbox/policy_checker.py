"""The AST policy's visitor: every rule of ``policy.py``'s docstring, judged node by node.

The rules are general on purpose, so that a new spelling of an old trick meets the same rule:
an attribute name is judged the same way wherever it appears (``x.a``, ``getattr(x, "a")``,
``attrgetter("a")``, ``update_wrapper(assigned=("a",))``, ``case C(a=...)``, ``from m import a``,
a format field ``{0.a}``); a module reached through attributes is judged like its import; a
string that Python evaluates as code (annotations) is checked as code; keyword arguments hidden
in ``**`` mappings must be visible.
"""

from __future__ import annotations

import ast
import re

from keiri_agent.sandbox.policy_rules import (
    ATTRIBUTE_FUNCTIONS,
    ATTRIBUTE_NAME_PARAMETERS,
    ATTRIBUTE_RULES,
    DEFINABLE_DUNDERS,
    EXTERNAL_PROCESS_KEYWORDS,
    FORBIDDEN_BUILTINS,
    IO_FUNCTIONS,
    MESSAGES,
    NAME_RULES,
    PICKLE_POSITIONAL,
    PUBLIC_SUBMODULES,
    SAFE_DUNDERS,
    SAFE_PRIVATE_ATTRIBUTES,
    SHADOWABLE_BUILTINS,
    TYPE_TESTS,
    VARIANT_RULES,
)
from keiri_agent.sandbox.policy_scope import (
    TreeFacts,
    callee_name,
    compact_allowlist,
    is_false,
    is_pgf,
    is_submodule,
    quote,
    string,
)
from keiri_agent.sandbox.policy_strings import DUNDER, MAX_ANNOTATION_NESTING, StringRules
from keiri_agent.sandbox.profiles import SandboxProfile

__all__ = ["Checker", "Violation"]

_LINE_BREAK = re.compile(r"\r\n?|\n")
_URL = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")
_OWN_RECEIVERS = frozenset({"self", "cls"})


def _listed(name: str, rules: tuple[tuple[frozenset[str], str], ...]) -> str | None:
    """The rule of the first set in ``rules`` that holds ``name``, None when none does."""
    return next((rule for names, rule in rules if name in names), None)


Violation = tuple[int, int, str, str]  # line, column (1-based, characters), rule, message


class Checker(StringRules, ast.NodeVisitor):
    def __init__(self, profile: SandboxProfile, code: str, tree: ast.Module) -> None:
        self.profile = profile
        tops = {name.split(".")[0] for name in profile.allowed_imports}
        public = {m for m in PUBLIC_SUBMODULES if m.split(".")[0] in tops}
        self.allowed = profile.allowed_imports | public
        self.lines = _LINE_BREAK.split(code)  # as the tokenizer counts lines (not \f, \u2028)
        self.facts = TreeFacts.of(tree)
        self.violations: list[Violation] = []
        self.checked: set[int] = set()  # ids of nodes already judged by their parent call
        self.called: set[int] = set()  # ids of expressions in the function position of a call
        self.inert = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings
        self.public_paths: set[int] = set()  # ids of module paths inside an allowed one

    def run(self, tree: ast.Module) -> None:
        self.visit(tree)
        self.check_annotation_strings(self.facts.annotations, MAX_ANNOTATION_NESTING)

    def report(self, node: ast.AST, key: str, **fields: object) -> None:
        line, offset = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
        if isinstance(node, ast.Attribute) and node.end_lineno and node.end_col_offset:
            # point at the attribute name, not at the start of a long ``a.b.c`` chain
            line, offset = node.end_lineno, node.end_col_offset - len(node.attr.encode())
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        col = len(text.encode()[: max(offset, 0)].decode(errors="ignore")) + 1
        message = MESSAGES[key].format(**fields)
        self.violations.append((line, col, VARIANT_RULES.get(key, key), message))

    # --- imports and modules -------------------------------------------------------------------
    def check_module(self, node: ast.AST, module: str, key: str = "import-submodule") -> None:
        if module in self.allowed or module == "__future__":
            return
        top = module.split(".")[0]
        if top not in self.allowed:
            allowed = compact_allowlist(self.profile)
            self.report(node, "import-not-allowed", name=module, allowed=allowed)
            return
        subs = sorted(m for m in self.profile.allowed_imports if m.startswith(top + "."))
        allowed = f"{top} で使えるのは {', '.join(subs)}" if subs else f"{top} では使えません"
        self.report(node, key, name=module, allowed=allowed)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.check_module(alias, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.report(node, "import-relative")
            return
        self.check_module(node, module)
        if module not in self.allowed:
            return
        for alias in node.names:
            dotted = f"{module}.{alias.name}"
            if alias.name == "*":
                self.report(alias, "import-star", name=module)
            elif dotted not in self.allowed and is_submodule(dotted):
                self.check_module(alias, dotted)
            elif alias.name not in ATTRIBUTE_NAME_PARAMETERS:  # those: judged where used
                self.check_attribute_name(alias, alias.name)  # like ``module.name``

    def module_of(self, node: ast.expr) -> str | None:
        """The dotted module ``node`` stands for (``pd``, ``pd.core``), when the code shows it."""
        if isinstance(node, ast.Name):
            return self.facts.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.module_of(node.value)
            dotted = f"{base}.{node.attr}" if base else None
            return dotted if dotted and is_submodule(dotted) else None
        return None

    def check_module_attribute(self, node: ast.AST, receiver: ast.expr, attr: str) -> None:
        base = self.module_of(receiver)
        if base is None:
            return
        if is_submodule(f"{base}.{attr}"):
            self.check_module(node, f"{base}.{attr}", "attribute-submodule")

    # --- names and attributes ------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if not isinstance(node.ctx, ast.Load):
            if DUNDER.fullmatch(name) and name not in DEFINABLE_DUNDERS:
                self.report(node, "dunder-definition", name=name)
            return
        if id(node) in self.checked:
            return
        if name in FORBIDDEN_BUILTINS:
            if not (name in SHADOWABLE_BUILTINS and name in self.facts.bound):
                self.report(node, "forbidden-builtin", name=name, why=FORBIDDEN_BUILTINS[name])
        elif name in ATTRIBUTE_FUNCTIONS:  # passed around instead of called: name unknowable
            self.report(node, "dynamic-attribute", name=name)
        elif DUNDER.fullmatch(name) and name not in SAFE_DUNDERS:
            self.report(node, "dunder-name", name=name)
        elif (rule := _listed(name, NAME_RULES)) is not None:
            self.report(node, rule, name=name)
        elif self.facts.aliases.get(name) in PICKLE_POSITIONAL:
            self.check_used_as_call(node, name)
        elif (
            self.facts.aliases.get(name) in ATTRIBUTE_NAME_PARAMETERS
            and id(node) not in self.called
        ):
            self.report(node, "dynamic-attribute", name=name)
        elif name == "type" and id(node) not in self.called:
            self.report(node, "type-creation")

    def check_used_as_call(self, node: ast.expr, name: str) -> None:
        if id(node) not in self.called and id(node) not in self.facts.alias_values:
            self.report(node, "pickle-value", name=name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if id(node) in self.public_paths:  # np.lib in np.lib.stride_tricks: judged as a whole
            self.generic_visit(node)
            return
        if id(node) not in self.checked:
            self.check_attribute_name(node, node.attr, node.value)
            self.check_module_attribute(node, node.value, node.attr)
            if self.module_of(node) in self.allowed:
                self.public_paths.add(id(node.value))
            if node.attr in PICKLE_POSITIONAL:
                self.check_used_as_call(node, node.attr)
            if node.attr == "format" and id(node) not in self.called:
                self.check_format_receiver(node, node.value, None)
        if not isinstance(node.ctx, ast.Load) and self.module_of(node.value):
            self.report(node, "module-assignment", name=node.attr)
        self.generic_visit(node)

    def check_attribute_name(
        self, node: ast.AST, attr: str, receiver: ast.expr | None = None
    ) -> None:
        """Judge ``attr`` as an attribute name: ``x.attr``, getattr(x, "attr"), from-imports."""
        own = isinstance(receiver, ast.Name) and receiver.id in _OWN_RECEIVERS
        if DUNDER.fullmatch(attr) and attr not in SAFE_DUNDERS:
            self.report(node, "dunder-attribute", name=attr)
        elif (rule := _listed(attr, ATTRIBUTE_RULES)) is not None:
            self.report(node, rule, name=attr)
        elif "pickle" in attr.lower() and attr != "to_pickle":
            self.report(node, "pickle-loader", name=attr)
        elif attr in ATTRIBUTE_NAME_PARAMETERS and attr not in ATTRIBUTE_FUNCTIONS:
            if id(node) not in self.called:  # attrgetter & co. passed around, not called
                self.report(node, "dynamic-attribute", name=attr)
        elif attr == "eval":
            self.report(node, "pandas-eval")
        elif attr == "query":  # DataFrame.query taken as a value: its argument is not seen
            self.report(
                node, "query-expression", why="呼び出しの形以外での利用は許可されていません"
            )
        elif attr == "format_map":
            self.report(node, "format-map")
        elif (
            attr.startswith("_")
            and not DUNDER.fullmatch(attr)
            and not own
            and attr not in SAFE_PRIVATE_ATTRIBUTES
        ):
            self.report(node, "private-attribute", name=attr)

    # --- definitions ---------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if DUNDER.fullmatch(node.name) and node.name not in DEFINABLE_DUNDERS:
            self.report(node, "dunder-definition", name=node.name)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.visit_FunctionDef(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for keyword in node.keywords:
            if keyword.arg == "metaclass" or keyword.arg is None:
                self.report(keyword, "metaclass")
        for base in node.bases:  # ``class Meta(type)``: a metaclass by inheritance
            if isinstance(base, ast.Name) and base.id == "type":
                self.checked.add(id(base))
                self.report(base, "metaclass")
        self.generic_visit(node)

    # --- calls ---------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self.called.add(id(node.func))
        name, args = callee_name(node.func), node.args
        if isinstance(node.func, ast.Name):
            name = self.facts.aliases.get(node.func.id, name)
        if name in TYPE_TESTS and len(args) == 2:  # isinstance(x, type): no class is made
            tested = args[1].elts if isinstance(args[1], ast.Tuple) else [args[1]]
            self.called |= {id(t) for t in tested if isinstance(t, ast.Name) and t.id == "type"}
        if name in ATTRIBUTE_NAME_PARAMETERS:
            self.checked.add(id(node.func))
            self.check_attribute_argument(node, name)
        elif name == "type" and isinstance(node.func, ast.Name) and len(args) != 1:
            self.report(node, "type-creation")
        elif isinstance(node.func, ast.Call) and callee_name(node.func.func) == "type":
            self.report(node, "type-creation")  # ``type(x)(...)``: type(type) makes classes
        elif name == "query" and isinstance(node.func, ast.Attribute):
            self.checked.add(id(node.func))
            self.check_query(node)
        elif name == "format" and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            # df.style.format(...): pandas' Styler formats cell values, the code's own data
            if not (isinstance(receiver, ast.Attribute) and receiver.attr == "style"):
                given = [*args, *(k.value for k in node.keywords)]
                self.check_format_receiver(node, receiver, given)
        if name in ("use", "switch_backend") and any(is_pgf(a) for a in args):
            self.report(node, "pgf-backend")
        for kw in self.visible_keywords(node, name):
            if kw.arg in EXTERNAL_PROCESS_KEYWORDS:
                self.report(kw, "external-process", name=f"{kw.arg}=")
            elif kw.arg == "backend" and is_pgf(kw.value):
                self.report(kw, "pgf-backend")
            elif kw.arg == "allow_pickle" and not is_false(kw.value):
                self.report(kw, "allow-pickle")
        if name in PICKLE_POSITIONAL:
            position = PICKLE_POSITIONAL[name]
            if any(isinstance(a, ast.Starred) for a in args[: position + 1]):
                self.report(node, "pickle-starred", name=name)
            elif len(args) > position and not is_false(args[position]):
                self.report(node, "allow-pickle")
        if name is not None and (name.startswith(("read_", "to_")) or name in IO_FUNCTIONS):
            for value in [*args, *(kw.value for kw in node.keywords)]:
                text = string(value)
                if text is not None and _URL.match(text):
                    self.checked.add(id(value))
                    self.report(value, "network-url", text=quote(text))
        self.generic_visit(node)

    def visible_keywords(self, node: ast.Call, name: str | None) -> list[ast.keyword]:
        """The call's keywords, with ``**{"k": v}`` and ``**name`` (a name only ever bound to
        such dict literals) expanded. Any other ``**`` mapping is refused where a hidden keyword
        could turn pickles on (np.load and its aliases), unless it forwards the function's own
        ``**kwargs`` (their callers are checked); elsewhere what it could hide (usetex, a pgf
        backend: an external program) is stopped by the sandbox's exec ban."""
        found: list[ast.keyword] = []
        for kw in node.keywords:
            mappings: list[ast.Dict] = []
            if kw.arg is not None:
                found.append(kw)
                continue
            if isinstance(kw.value, ast.Dict) and all(string(k) for k in kw.value.keys):
                mappings = [kw.value]
            elif isinstance(kw.value, ast.Name) and kw.value.id in self.facts.literal_dicts:
                mappings = self.facts.literal_dicts[kw.value.id]
            elif name in PICKLE_POSITIONAL and not (
                isinstance(kw.value, ast.Call) and callee_name(kw.value.func) == "dict"
                and not kw.value.args
            ) and id(kw.value) not in self.facts.forwarded:  # fmt: skip
                self.report(kw.value, "dynamic-keyword", name=name)
            for mapping in mappings:
                for key, value in zip(mapping.keys, mapping.values, strict=True):
                    found.append(ast.copy_location(ast.keyword(arg=string(key), value=value), kw))
        return found

    def check_attribute_argument(self, node: ast.Call, name: str) -> None:
        """Attribute names given to getattr & co., attrgetter, update_wrapper... must be
        literals (a string, or a tuple/list of strings) and acceptable attribute names."""
        positions, keywords = ATTRIBUTE_NAME_PARAMETERS[name]
        given = node.args
        args = given if positions is None else [given[i] for i in positions if i < len(given)]
        targets = [*args, *(k.value for k in node.keywords if k.arg in keywords)]
        hidden = any(k.arg is None for k in node.keywords) or any(
            isinstance(a, ast.Starred) for a in given
        )
        if hidden or (not targets and not keywords):  # names passed where they are not seen
            self.report(node, "dynamic-attribute", name=name)
        receiver = node.args[0] if name in ATTRIBUTE_FUNCTIONS and node.args else None
        for target in targets:
            items = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
            for item in items:
                text = string(item)
                if text is None:
                    self.report(item, "dynamic-attribute", name=name)
                    continue
                self.checked.add(id(item))
                for part in text.split(".") if name == "attrgetter" else [text]:
                    self.check_attribute_name(item, part, receiver)
                    if receiver is not None:
                        self.check_module_attribute(item, receiver, part)
                        if name in ("setattr", "delattr") and self.module_of(receiver):
                            self.report(item, "module-assignment", name=part)
                        if part == "format":
                            self.check_format_receiver(item, receiver, None)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:  # ``case str(__class__=c)`` reads c = subject.__class__
            self.check_attribute_name(node, attr)
        self.generic_visit(node)
