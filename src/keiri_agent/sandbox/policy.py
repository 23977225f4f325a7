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
- ``dynamic-attribute``: every parameter that names attributes (getattr & co., attrgetter,
  methodcaller, functools.update_wrapper/wraps ``assigned``/``updated``) takes literals only,
  each judged like ``x.name``; such functions passed around as values are refused.
- ``type-creation``: ``type(name, bases, dict)``, ``type(x)(...)``, ``type`` as a value.
- ``dunder-attribute`` / ``dunder-name`` / ``dunder-string``: ``x.__class__``, ``__builtins__``,
  literals naming a dunder (Formatter fields, attrgetter paths). Docstrings are exempt. Defining
  a dunder other than the plain protocols (``__instancecheck__``, ``__match_args__``...) too.
- ``metaclass``: ``metaclass=`` and ``class M(type)`` (hooks into isinstance and ``match``).
- ``private-attribute``: ``_name`` attributes and imports (typing._eval_type, sys._getframe),
  except on ``self``/``cls``.
- ``internal-attribute``: every prefixed attribute of frames, tracebacks, generators,
  coroutines and code objects (read from the types), and currentframe & co.
- ``module-pivot``: a deny-list of known pivots to os/sys/ctypes/inspect through attributes of
  allowed modules (``np.os``, ``dataclasses.inspect``, ``sys.modules``), on any receiver.
- ``import-not-allowed`` also for a submodule reached through attributes (``pd.core...``,
  ``np.lib``): judged like its import; public namespaces (``pd.api.types``) are listed.
- ``module-assignment``: replacing a module's attribute (``json.dumps = ...``).
- ``dynamic-import`` (import_module, ``module://``), ``string-evaluation`` (typing's forward
  references, dataclasses' code generator, Jinja2 via pandas' Styler). String annotations are
  parsed and checked as code (typing and functools.singledispatch evaluate them);
  ``annotation-string`` when one is not an expression.
- ``pickle-loader``: read_pickle and any ``*pickle*`` name but to_pickle, joblib/dill/shelve/
  marshal, ``allow_pickle`` other than a literal False, also positionally, through ``*`` or an
  alias (``from numpy import load as L``); ``load`` passed around as a value.
- ``dynamic-keyword``: ``**mapping`` other than a literal dict (expanded and checked) or the
  function's own ``**kwargs`` forwarded unchanged: keywords are always visible.
- ``pandas-eval``: pd.eval and DataFrame.eval, refused outright. ``query-expression``:
  DataFrame.query only with a literal free of ``@`` (local variables reach any object), ``__``
  and denied attributes; otherwise boolean indexing does the same job.
- ``format-string``: replacement fields walking into dunders, private or denied attributes
  (``"{0.__class__}"``), ``format_map``, string.Formatter's get_field/vformat, and ``.format``
  on a template the checker cannot see (not a literal, nor a name bound only to literals)
  unless every argument is a literal.
- ``external-process``: usetex, the pgf backend, animation writers, the clipboard.
- ``network-url`` (URL literals given to readers and writers, seaborn's load_dataset),
  ``host-path`` (``/proc/``, ``/etc/``, ...), ``code-too-large``, ``code-too-complex``.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass

from keiri_agent.errors import BlockError
from keiri_agent.sandbox.policy_checker import Checker
from keiri_agent.sandbox.policy_rules import MESSAGES
from keiri_agent.sandbox.policy_scope import compact_allowlist
from keiri_agent.sandbox.profiles import SandboxProfile
from keiri_agent.sandbox.syntax_words import syntax_problem

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
            hint=f"許可されたモジュール（{compact_allowlist(profile)}）だけを使い、"
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
    try:
        checker = Checker(profile, code, tree)
        checker.run(tree)
    except RecursionError:
        return None, too_complex
    found = {PolicyViolation(*v) for v in checker.violations}
    return tree, sorted(found, key=lambda v: (v.line, v.col, v.rule, v.message))


def _syntax_error(exc: SyntaxError | ValueError, profile: SandboxProfile) -> BlockError:
    line = getattr(exc, "lineno", None) or 0
    offset = getattr(exc, "offset", None) or 0
    text = (getattr(exc, "text", None) or "").rstrip("\n")
    reason = getattr(exc, "msg", None) or str(exc)
    where = f"{line} 行目 {offset} 列" if line else "位置不明"
    return BlockError(
        f"コードに構文エラーがあります（{where}）: {syntax_problem(reason)}"
        + (f"\n    {text}" if text else ""),
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
