"""The sandbox's AST policy: reject obviously dangerous code before any process starts.

This check is defence in depth, **not the boundary** (DESIGN §5). The boundary is the child
process with OS limits; anything this module lets through must still be harmless there. What the
check adds is a fast, explainable refusal: the agent gets a Japanese message naming what was
refused, why, and on which line, and can rewrite the code instead of burning an execution.

Rules (``PolicyViolation.rule``), each refused with its own Japanese message:

- ``import-not-allowed`` / ``import-relative`` / ``import-star``: only the profile's allowlist;
  submodules are listed explicitly, and ``from x import y`` needs ``x.y`` listed when ``y`` is a
  submodule on disk (found without importing anything), otherwise it is judged as ``x.y``.
- ``forbidden-builtin``: exec/eval/compile, ``__import__``, globals/locals/vars, breakpoint, help,
  input, exit/quit. ``open`` and ``dir`` stay allowed: the OS layer bounds the files.
- ``dynamic-attribute``: getattr & co. or operator.attrgetter/methodcaller without a literal name.
- ``type-creation``: ``type(name, bases, dict)``.
- ``dunder-attribute`` / ``dunder-name`` / ``dunder-string``: ``x.__class__``, ``__builtins__``,
  literals naming a dunder (Formatter fields, attrgetter paths). Docstrings are exempt.
- ``internal-attribute``: frame, traceback and generator internals (gi_frame, tb_frame, f_back).
- ``module-pivot``: a deny-list of known pivots to os/sys/ctypes through attributes of allowed
  modules (``np.os``, ``pd.io.common.os``, ``np.ctypeslib``, ``sys.modules``), on any receiver.
- ``dynamic-import`` (import_module, ``module://``), ``string-evaluation`` (typing's forward
  references, dataclasses' code generator, Jinja2 via pandas' Styler).
- ``pickle-loader``: read_pickle and any ``*pickle*`` name but to_pickle, joblib/dill/shelve/
  marshal, ``allow_pickle`` other than a literal False.
- ``pandas-eval``: pd.eval and DataFrame.eval, refused outright. ``query-expression``:
  DataFrame.query only with a literal free of ``@`` (local variables reach any object), ``__``
  and denied attributes; otherwise boolean indexing does the same job.
- ``format-string``: replacement fields walking into dunders or denied attributes
  (``"{0.__class__}"``) and ``format_map``. Format strings built at run time are not seen.
- ``external-process``: usetex, the pgf backend, animation writers, the clipboard.
- ``network-url`` (URL literals given to readers and writers, seaborn's load_dataset),
  ``host-path`` (``/proc/``, ``/etc/``, ...), ``code-too-large``, ``code-too-complex``.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import asdict, dataclass
from importlib.machinery import PathFinder

from keiri_agent.errors import BlockError
from keiri_agent.sandbox.policy_rules import (
    ATTRIBUTE_FUNCTIONS,
    DYNAMIC_IMPORT_ATTRIBUTES,
    EXTERNAL_PROCESS_ATTRIBUTES,
    EXTERNAL_PROCESS_KEYWORDS,
    EXTERNAL_PROCESS_RCPARAMS,
    FORBIDDEN_BUILTINS,
    GETTER_FACTORIES,
    HOST_PATH_PREFIXES,
    INTERNAL_ATTRIBUTES,
    IO_FUNCTIONS,
    MESSAGES,
    NETWORK_ATTRIBUTES,
    PICKLE_ATTRIBUTES,
    PICKLE_MODULES,
    PIVOT_ATTRIBUTES,
    PIVOT_MODULE_NAMES,
    PREFERRED_PACKAGES,
    SAFE_DUNDERS,
    SHADOWABLE_BUILTINS,
    STRING_EVALUATION_ATTRIBUTES,
    VARIANT_RULES,
)
from keiri_agent.sandbox.profiles import SandboxProfile

__all__ = [
    "MAX_CODE_CHARS",
    "POLICY_VIOLATION",
    "SYNTAX_ERROR",
    "PolicyError",
    "PolicyViolation",
    "check_code",
    "enforce_policy",
]

POLICY_VIOLATION = "POLICY_VIOLATION"
SYNTAX_ERROR = "SYNTAX_ERROR"
MAX_CODE_CHARS = 500_000  # far above any generated script; bounds parse time in the parent
MAX_MESSAGE_VIOLATIONS = 3  # violations quoted in PolicyError.message; details holds all
MAX_QUOTE_CHARS = 60

_DUNDER = re.compile(r"(?<![A-Za-z0-9])__[A-Za-z][A-Za-z0-9_]*__(?![A-Za-z0-9])")
_FORMAT_FIELD = re.compile(r"\{([^{}]*)\}")
_DOTTED_PART = re.compile(r"\.(\w+)")
_LINE_BREAK = re.compile(r"\r\n?|\n")
_URL = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class PolicyViolation:
    """One refused construct. ``line`` and ``col`` are 1-based; ``message`` is Japanese."""

    line: int
    col: int
    rule: str
    message: str


class PolicyError(BlockError):
    """The code breaks the sandbox policy; ``details['violations']`` lists every violation."""

    default_recoverable = True

    def __init__(self, violations: list[PolicyViolation], profile: SandboxProfile) -> None:
        shown = "／".join(
            f"{v.line} 行目: {v.message}" for v in violations[:MAX_MESSAGE_VIOLATIONS]
        )
        more = len(violations) - MAX_MESSAGE_VIOLATIONS
        super().__init__(
            f"コードにサンドボックスで許可されていない操作が {len(violations)} 件あります。{shown}"
            + (f"（ほか {more} 件）" if more > 0 else ""),
            code=POLICY_VIOLATION,
            hint=f"許可されたモジュール（{_compact_allowlist(profile)}）だけを使い、"
            "指摘された行を書き直してください。",
            details={"violations": [asdict(v) for v in violations], "profile": profile.name},
        )
        self.violations = list(violations)


def check_code(code: str, profile: SandboxProfile) -> list[PolicyViolation]:
    """Every violation of ``profile``'s policy in ``code``, sorted by line and column.

    Raises ``BlockError`` with code ``SYNTAX_ERROR`` when the code does not parse.
    """
    return _analyse(code, profile)[1]


def enforce_policy(code: str, profile: SandboxProfile) -> ast.Module:
    """The parsed ``code``; raises ``PolicyError`` listing every violation, or ``SYNTAX_ERROR``."""
    tree, violations = _analyse(code, profile)
    if violations or tree is None:
        raise PolicyError(violations, profile)
    return tree


def _analyse(code: str, profile: SandboxProfile) -> tuple[ast.Module | None, list[PolicyViolation]]:
    if len(code) > MAX_CODE_CHARS:
        message = MESSAGES["code-too-large"].format(size=len(code), limit=MAX_CODE_CHARS)
        return None, [PolicyViolation(1, 1, "code-too-large", message)]
    too_complex = [PolicyViolation(1, 1, "code-too-complex", MESSAGES["code-too-complex"])]
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        raise _syntax_error(exc, profile) from None
    except (RecursionError, MemoryError):  # the parser's own nesting limits
        return None, too_complex
    checker = _Checker(profile, code, tree)
    try:
        checker.visit(tree)
    except RecursionError:
        return None, too_complex
    return tree, sorted(set(checker.violations), key=lambda v: (v.line, v.col, v.rule, v.message))


def _syntax_error(exc: SyntaxError | ValueError, profile: SandboxProfile) -> BlockError:
    line = getattr(exc, "lineno", None) or 0
    offset = getattr(exc, "offset", None) or 0
    text = (getattr(exc, "text", None) or "").rstrip("\n")
    reason = getattr(exc, "msg", None) or str(exc)
    where = f"{line} 行目 {offset} 列" if line else "位置不明"
    return BlockError(
        f"コードに構文エラーがあります（{where}）: {reason}" + (f"\n    {text}" if text else ""),
        code=SYNTAX_ERROR,
        hint="構文を修正してください。",
        details={
            "line": line,
            "offset": offset,
            "text": text,
            "error": reason,
            "profile": profile.name,
        },
        recoverable=True,
    )


def _compact_allowlist(profile: SandboxProfile) -> str:
    tops = {name.split(".")[0] for name in profile.allowed_imports}
    first = [p for p in PREFERRED_PACKAGES if p in tops]
    return ", ".join(first + sorted(tops - set(first)))


@functools.lru_cache(maxsize=1024)
def _is_submodule(dotted: str) -> bool:
    """Whether ``dotted`` names a module on disk, found without importing anything."""
    head, *rest = dotted.split(".")
    spec = PathFinder.find_spec(head)
    for part in rest:
        if spec is None or spec.submodule_search_locations is None:
            return False
        spec = PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None


def _quote(text: str) -> str:
    return text if len(text) <= MAX_QUOTE_CHARS else text[: MAX_QUOTE_CHARS - 1] + "…"


def _callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_pgf(node: ast.expr) -> bool:
    return (_string(node) or "").lower().startswith("pgf")


def _is_false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _bound_names(tree: ast.Module) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
    return bound


class _Checker(ast.NodeVisitor):
    def __init__(self, profile: SandboxProfile, code: str, tree: ast.Module) -> None:
        self.profile = profile
        self.allowed = profile.allowed_imports
        self.lines = _LINE_BREAK.split(code)  # as the tokenizer counts lines (not \f, \u2028)
        self.bound = _bound_names(tree)
        self.violations: list[PolicyViolation] = []
        self.checked: set[int] = set()  # ids of nodes already judged by their parent call
        self.inert = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings

    def report(self, node: ast.AST, key: str, **fields: object) -> None:
        line, offset = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
        if isinstance(node, ast.Attribute) and node.end_lineno and node.end_col_offset:
            # point at the attribute name, not at the start of a long ``a.b.c`` chain
            line, offset = node.end_lineno, node.end_col_offset - len(node.attr.encode())
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        col = len(text.encode()[:offset].decode(errors="ignore")) + 1  # UTF-8 bytes -> characters
        message = MESSAGES[key].format(**fields)
        self.violations.append(PolicyViolation(line, col, VARIANT_RULES.get(key, key), message))

    # --- imports -------------------------------------------------------------------------------
    def check_module(self, node: ast.AST, module: str) -> None:
        if module in self.allowed or module == "__future__":
            return
        top = module.split(".")[0]
        if top not in self.allowed:
            allowed = _compact_allowlist(self.profile)
            self.report(node, "import-not-allowed", name=module, allowed=allowed)
            return
        subs = sorted(m for m in self.allowed if m.startswith(top + "."))
        allowed = f"{top} で使えるのは {', '.join(subs)}" if subs else f"{top} では使えません"
        self.report(node, "import-submodule", name=module, allowed=allowed)

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
            elif dotted not in self.allowed and _is_submodule(dotted):
                self.check_module(alias, dotted)
            else:  # an attribute of an allowed module: judged like ``module.name``
                self.check_attribute_name(alias, alias.name)

    # --- names and attributes ------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if not isinstance(node.ctx, ast.Load) or id(node) in self.checked:
            return
        if name in FORBIDDEN_BUILTINS:
            if not (name in SHADOWABLE_BUILTINS and name in self.bound):
                self.report(node, "forbidden-builtin", name=name, why=FORBIDDEN_BUILTINS[name])
        elif name in ATTRIBUTE_FUNCTIONS:  # passed around instead of called: name unknowable
            self.report(node, "dynamic-attribute", name=name)
        elif _DUNDER.fullmatch(name) and name not in SAFE_DUNDERS:
            self.report(node, "dunder-name", name=name)
        elif name in PIVOT_MODULE_NAMES:
            self.report(node, "module-pivot", name=name)
        elif name in PICKLE_MODULES:
            self.report(node, "pickle-loader", name=name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if id(node) not in self.checked:
            self.check_attribute_name(node, node.attr)
        self.generic_visit(node)

    def check_attribute_name(self, node: ast.AST, attr: str) -> None:
        """Judge ``attr`` as an attribute name: ``x.attr``, getattr(x, "attr"), from-imports."""
        if _DUNDER.fullmatch(attr) and attr not in SAFE_DUNDERS:
            self.report(node, "dunder-attribute", name=attr)
        elif attr in INTERNAL_ATTRIBUTES:
            self.report(node, "internal-attribute", name=attr)
        elif attr in PIVOT_ATTRIBUTES:
            self.report(node, "module-pivot", name=attr)
        elif attr in PICKLE_ATTRIBUTES or ("pickle" in attr.lower() and attr != "to_pickle"):
            self.report(node, "pickle-loader", name=attr)
        elif attr in STRING_EVALUATION_ATTRIBUTES:
            self.report(node, "string-evaluation", name=attr)
        elif attr in NETWORK_ATTRIBUTES:
            self.report(node, "network-function", name=attr)
        elif attr in DYNAMIC_IMPORT_ATTRIBUTES:
            self.report(node, "dynamic-import", name=attr)
        elif attr in GETTER_FACTORIES:  # operator.attrgetter passed around instead of called
            self.report(node, "dynamic-attribute", name=attr)
        elif attr == "eval":
            self.report(node, "pandas-eval")
        elif attr == "query":  # DataFrame.query taken as a value: its argument is not seen
            self.report(
                node, "query-expression", why="呼び出しの形以外での利用は許可されていません"
            )
        elif attr == "format_map":
            self.report(node, "format-map")
        elif attr in EXTERNAL_PROCESS_ATTRIBUTES:
            self.report(node, "external-process", name=attr)

    # --- calls ---------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name, args = _callee_name(node.func), node.args
        if name in ATTRIBUTE_FUNCTIONS or name in GETTER_FACTORIES:
            self.checked.add(id(node.func))
            self.check_attribute_argument(node, name)
        elif name == "type" and isinstance(node.func, ast.Name) and len(args) == 3:
            self.report(node, "type-creation")
        elif name == "query" and isinstance(node.func, ast.Attribute):
            self.checked.add(id(node.func))
            self.check_query(node)
        if name in ("use", "switch_backend") and any(_is_pgf(a) for a in args):
            self.report(node, "pgf-backend")
        for kw in node.keywords:
            if kw.arg in EXTERNAL_PROCESS_KEYWORDS:
                self.report(kw, "external-process", name=f"{kw.arg}=")
            elif kw.arg == "backend" and _is_pgf(kw.value):
                self.report(kw, "pgf-backend")
            elif kw.arg == "allow_pickle" and not _is_false(kw.value):
                self.report(kw, "allow-pickle")
            elif kw.arg is None and name == "load":
                self.report(kw, "load-kwargs", name=name)
        if name == "load" and len(args) >= 3:  # np.load(file, mmap_mode, allow_pickle)
            self.report(node, "allow-pickle")
        if name is not None and (name.startswith(("read_", "to_")) or name in IO_FUNCTIONS):
            for value in [*args, *(kw.value for kw in node.keywords)]:
                text = _string(value)
                if text is not None and _URL.match(text):
                    self.checked.add(id(value))
                    self.report(value, "network-url", text=_quote(text))
        self.generic_visit(node)

    def check_attribute_argument(self, node: ast.Call, name: str) -> None:
        """getattr & co. and attrgetter/methodcaller need literal, acceptable attribute names."""
        if name in ATTRIBUTE_FUNCTIONS:
            targets = node.args[1:2]
        else:
            targets = node.args if name == "attrgetter" else node.args[:1]
        if not targets:
            self.report(node, "dynamic-attribute", name=name)
        for target in targets:
            text = _string(target)
            if text is None:
                self.report(target, "dynamic-attribute", name=name)
                continue
            self.checked.add(id(target))
            for part in text.split(".") if name == "attrgetter" else [text]:
                self.check_attribute_name(target, part)

    def check_query(self, node: ast.Call) -> None:
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "expr")]
        expr = given[0] if given else None
        text = _string(expr)
        denied = PIVOT_ATTRIBUTES | INTERNAL_ATTRIBUTES | PICKLE_ATTRIBUTES
        if text is None:
            why = "条件が文字列リテラルではありません"
        elif "@" in text or "__" in text:
            why = "条件に '@'（ローカル変数の参照）か '__' が含まれています"
        elif bad := sorted(set(_DOTTED_PART.findall(text)) & denied):
            why = f"条件に使えない属性（{', '.join(bad)}）が含まれています"
        else:
            self.checked.add(id(expr))
            return
        self.report(node, "query-expression", why=why)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:  # ``case str(__class__=c)`` reads c = subject.__class__
            self.check_attribute_name(node, attr)
        self.generic_visit(node)

    # --- string literals -----------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> None:
        text = node.value
        if not isinstance(text, str) or id(node) in self.checked:
            return
        for field in _FORMAT_FIELD.findall(text):
            parts = _DOTTED_PART.findall(re.split(r"[:!]", field, maxsplit=1)[0])
            if "__" in field or any(
                p in PIVOT_ATTRIBUTES or p in INTERNAL_ATTRIBUTES for p in parts
            ):
                self.report(node, "format-string", text=_quote(text))
                return
        if text.startswith("module://"):
            self.report(node, "dynamic-import", name=_quote(text))
        elif text.startswith(HOST_PATH_PREFIXES):
            self.report(node, "host-path", text=_quote(text))
        elif text.startswith(EXTERNAL_PROCESS_RCPARAMS):
            self.report(node, "external-process", name=_quote(text))
        elif id(node) in self.inert:
            return
        elif dunders := [m for m in _DUNDER.findall(text) if m not in SAFE_DUNDERS]:
            self.report(node, "dunder-string", text=_quote(text), name=dunders[0])
