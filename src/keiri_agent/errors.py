"""The exception tree of keiri-agent: everything raised on purpose is a ``KeiriError``.

Every failure a user sees is a ``BlockError`` or carries the same code, message and hint.

Seed 002 §9 forbids silent fallbacks: a failure is raised as a structured error with a code,
a Japanese message, the details needed to find the cause, a snapshot of the inputs, a hint on
how to fix it, and whether re-running can succeed. The UI, the CLI and the SSE stream all
render the same ``to_dict()`` form.

Every exception class of the package whose name ends in ``Error`` derives from ``KeiriError``;
the tree below lists them all, each with the module that defines it when that is not this one
(``tests/test_error_tree.py`` imports every module and compares, both ways). Signals that are
not failures stay apart: ``blocks.base.InputRequired`` (a node pauses for the user's input),
``plan._run.output_store.NotPersistable``, ``blocks.table.grouping.Unreadable`` (a cell a column
function cannot read, carried to the block that names it in its BlockError), and private
helpers such as ``_RefError``.

Exception tree::

    KeiriError                                            base of all this package raises on purpose
     ├── BlockError                                       user-facing: code, message, hint, details
     │    ├── ConfigurationError                          CONFIGURATION_ERROR: a setting is wrong
     │    │    └── CredentialsMissingError                an LLM provider's key is not set
     │    ├── LLMError                                    API_ERROR: the provider failed, retried
     │    │    ├── LLMTimeoutError                        TIMEOUT_ERROR: every attempt timed out
     │    │    └── LLMOutputError                         OUTPUT_SCHEMA_MISMATCH (OUTPUT_TRUNCATED,
     │    │                                               OUTPUT_FILTERED, OUTPUT_EMPTY by finish)
     │    ├── PathEscapeError                             PERMISSION_DENIED: a path leaves its root
     │    ├── FileProcessingError                         a file is not what it claims to be:
     │    │                                               FILE_UNREADABLE, FILE_ENCRYPTED,
     │    │                                               FILE_TOO_LARGE, UNSUPPORTED_FORMAT,
     │    │                                               ARCHIVE_UNSAFE; details['file'] names it
     │    ├── PolicyError (sandbox.policy)                code breaks the sandbox's AST policy
     │    ├── IsolationError (sandbox.layers)             a layer failed: the code does not run
     │    ├── FetchError (agents.convert.models)          a conversion source cannot be fetched
     │    ├── SchemaRefError (blocks.schema)              a spec's schema $ref does not resolve
     │    ├── ReferenceSyntaxError (plan._dsl.refs)       INVALID_REFERENCE: a malformed ${...}
     │    ├── ReferencePathError (plan._dsl.refs)         a reference leads nowhere in the data
     │    ├── ReferenceValueError (plan._dsl.refs)        a value cannot be put into text
     │    ├── ExpressionSyntaxError (plan._dsl.expr)      INVALID_EXPRESSION: does not parse
     │    ├── ExpressionEvalError (plan._dsl.expr)        INVALID_EXPRESSION: wrong values
     │    └── ApiError (server.errors)                    an HTTP failure with its own status
     ├── LayerUnavailableError (sandbox.layers)           no seccomp/Landlock here: the layer
     │                                                    is reported inactive with the Japanese
     │                                                    ``reason``, the other layers still apply
     ├── UnsupportedFormatError (agents.convert.models)   also ValueError: the conversion's
     ├── UnsupportedVizParamError (agents.convert.models)  fallback triggers, with to_dict()
     ├── YamlLimitError (plan._dsl.yaml_read)             also yaml.YAMLError: YAML_LIMIT
     └── FieldError (blocks.ui.field_types)                    a wrong answer to ui.interactive_input

Codes are the seed's list plus the ones later work needs; new codes go into ``ErrorCode``. Plan
validation and dry-run findings have their own codes: ``IssueCode`` (docs/issue-codes.md).

A library's exception text is English (``[Errno 13] Permission denied``, PyYAML's ``mapping values
are not allowed here``): a message never shows it. ``reason_of(exc)`` says in Japanese why the
operation failed (by errno, by the line and column of a YAML or JSON error, ...) and
``cause_of(exc)`` keeps the library's own words for ``details['cause']`` (support and logs);
``tests/test_code_rules.py`` refuses an f-string that puts an exception's text into a message.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Final

from keiri_agent.byte_place import decode_failure_place, where
from keiri_agent.yaml_words import yaml_reason

__all__ = [
    "CODE_WORDS",
    "LOCAL_MODEL_HINT",
    "BlockError",
    "ConfigurationError",
    "CredentialsMissingError",
    "ErrorCode",
    "FileProcessingError",
    "KeiriError",
    "LLMError",
    "LLMOutputError",
    "LLMTimeoutError",
    "PathEscapeError",
    "UserFile",
    "cause_of",
    "check_choice",
    "code_word",
    "input_error",
    "reason_of",
]


class ErrorCode(StrEnum):
    """Error codes of seed 002 §9.1, extended where later work needs a distinct one."""

    INPUT_VALIDATION_FAILED = "INPUT_VALIDATION_FAILED"
    OUTPUT_SCHEMA_MISMATCH = "OUTPUT_SCHEMA_MISMATCH"
    DEPENDENCY_NOT_FOUND = "DEPENDENCY_NOT_FOUND"
    API_ERROR = "API_ERROR"
    TIMEOUT_ERROR = "TIMEOUT_ERROR"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    # Extensions beyond the seed's list.
    CONFIGURATION_ERROR = "CONFIGURATION_ERROR"
    FILE_UNREADABLE = "FILE_UNREADABLE"  # malformed, truncated, empty or mislabelled
    FILE_ENCRYPTED = "FILE_ENCRYPTED"  # password-protected PDF, ZIP member, workbook
    FILE_TOO_LARGE = "FILE_TOO_LARGE"  # over a size, page or member limit
    UNSUPPORTED_FORMAT = "UNSUPPORTED_FORMAT"  # a format the file layer does not read
    ARCHIVE_UNSAFE = "ARCHIVE_UNSAFE"  # zip-slip, symlink member, bomb, too deep nesting
    CANCELLED = "CANCELLED"
    PLAN_INVALID = "PLAN_INVALID"  # a plan file fails validation (details['errors'] lists them)
    BLOCK_NOT_FOUND = "BLOCK_NOT_FOUND"  # no block spec with that id (and version)
    INVALID_REFERENCE = "INVALID_REFERENCE"  # a malformed ${...} in a plan
    INVALID_EXPRESSION = (
        "INVALID_EXPRESSION"  # a when/while expression that does not parse or evaluate
    )
    LOOP_LIMIT_REACHED = "LOOP_LIMIT_REACHED"  # a required while loop still true at max_iterations
    OUTPUT_TRUNCATED = "OUTPUT_TRUNCATED"  # the model's reply was cut at its length limit
    OUTPUT_FILTERED = "OUTPUT_FILTERED"  # the provider's content filter stopped the reply
    OUTPUT_EMPTY = "OUTPUT_EMPTY"  # the model replied with nothing, even after repair rounds
    SANDBOX_BUSY = "SANDBOX_BUSY"  # another action is running in the same sandbox workdir
    # Generated code (CodeAct) ran out of turns without making what was asked for.
    CODE_EXECUTION_FAILED = "CODE_EXECUTION_FAILED"
    # An analysis report that no code run with visible output backs (its figures are unverified).
    RESULT_UNVERIFIED = "RESULT_UNVERIFIED"
    # A plan version that is not approved, where only approved versions may run.
    APPROVAL_REQUIRED = "APPROVAL_REQUIRED"
    # A record kept for audits (plan versions, their reviews) no longer matches its hashes.
    INTEGRITY_FAILED = "INTEGRITY_FAILED"
    # The API's own (server/): a request the server refuses, in HTTP's terms.
    ADMIN_REQUIRED = "ADMIN_REQUIRED"
    API_KEY_REQUIRED = "API_KEY_REQUIRED"
    INVALID_API_KEY = "INVALID_API_KEY"
    CROSS_SITE_REQUEST = "CROSS_SITE_REQUEST"
    ORIGIN_REQUIRED = "ORIGIN_REQUIRED"
    HOST_NOT_ALLOWED = "HOST_NOT_ALLOWED"
    SIGNATURE_INVALID = "SIGNATURE_INVALID"
    SIGNATURE_REPLAYED = "SIGNATURE_REPLAYED"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    HTTP_ERROR = "HTTP_ERROR"
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
    UPLOAD_TOO_LARGE = "UPLOAD_TOO_LARGE"
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    TASK_NOT_FOUND = "TASK_NOT_FOUND"
    TASK_ACTIVE = "TASK_ACTIVE"
    TASK_FINISHED = "TASK_FINISHED"
    TASK_NOT_WAITING = "TASK_NOT_WAITING"
    TASK_NOT_INTERRUPTED = "TASK_NOT_INTERRUPTED"
    TASK_NOT_RETRYABLE = "TASK_NOT_RETRYABLE"
    TOO_MANY_TASKS = "TOO_MANY_TASKS"
    TOO_MANY_TASKS_PER_USER = "TOO_MANY_TASKS_PER_USER"
    INVALID_LAST_EVENT_ID = "INVALID_LAST_EVENT_ID"
    SERVER_STOPPING = "SERVER_STOPPING"
    INTERNAL_ERROR = "INTERNAL_ERROR"


# Each error code as people call it (the app's エラーの種類): the one table of the codes' words.
CODE_WORDS: Final[Mapping[str, str]] = {
    ErrorCode.INPUT_VALIDATION_FAILED: "入力の誤り",
    ErrorCode.OUTPUT_SCHEMA_MISMATCH: "出力の形の誤り",
    ErrorCode.DEPENDENCY_NOT_FOUND: "必要なものが見つからない",
    ErrorCode.API_ERROR: "AI サービスの失敗",
    ErrorCode.TIMEOUT_ERROR: "時間切れ",
    ErrorCode.PERMISSION_DENIED: "使えない場所",
    ErrorCode.CONFIGURATION_ERROR: "設定の誤り",
    ErrorCode.FILE_UNREADABLE: "読めないファイル",
    ErrorCode.FILE_ENCRYPTED: "パスワード付きのファイル",
    ErrorCode.FILE_TOO_LARGE: "大きすぎるファイル",
    ErrorCode.UNSUPPORTED_FORMAT: "扱えない形式",
    ErrorCode.ARCHIVE_UNSAFE: "安全でない圧縮ファイル",
    ErrorCode.CANCELLED: "取り消し",
    ErrorCode.PLAN_INVALID: "Plan の誤り",
    ErrorCode.BLOCK_NOT_FOUND: "ないブロック",
    ErrorCode.INVALID_REFERENCE: "参照の誤り",
    ErrorCode.INVALID_EXPRESSION: "条件式の誤り",
    ErrorCode.LOOP_LIMIT_REACHED: "繰り返しの上限",
    ErrorCode.OUTPUT_TRUNCATED: "AI の応答が途中で切れた",
    ErrorCode.OUTPUT_FILTERED: "AI の応答が止められた",
    ErrorCode.OUTPUT_EMPTY: "AI の応答が空",
    ErrorCode.SANDBOX_BUSY: "実行環境が使用中",
    ErrorCode.CODE_EXECUTION_FAILED: "生成したコードの失敗",
    ErrorCode.RESULT_UNVERIFIED: "裏付けのない結果",
    ErrorCode.APPROVAL_REQUIRED: "承認が必要",
    ErrorCode.INTEGRITY_FAILED: "記録の改ざん・破損",
    ErrorCode.ADMIN_REQUIRED: "管理者だけの操作",
    ErrorCode.API_KEY_REQUIRED: "API キーがない",
    ErrorCode.INVALID_API_KEY: "API キーの誤り",
    ErrorCode.CROSS_SITE_REQUEST: "別のサイトからの送信",
    ErrorCode.ORIGIN_REQUIRED: "送信元の分からないリクエスト",
    ErrorCode.HOST_NOT_ALLOWED: "許可されていないホスト名",
    ErrorCode.SIGNATURE_INVALID: "署名の誤り",
    ErrorCode.SIGNATURE_REPLAYED: "使用済みの署名",
    ErrorCode.NOT_FOUND: "ないアドレス",
    ErrorCode.METHOD_NOT_ALLOWED: "使えない送り方",
    ErrorCode.HTTP_ERROR: "リクエストの失敗",
    ErrorCode.REQUEST_TOO_LARGE: "大きすぎるリクエスト",
    ErrorCode.UPLOAD_TOO_LARGE: "大きすぎるアップロード",
    ErrorCode.FILE_NOT_FOUND: "ないファイル",
    ErrorCode.TASK_NOT_FOUND: "ないタスク",
    ErrorCode.TASK_ACTIVE: "実行中のタスク",
    ErrorCode.TASK_FINISHED: "終了したタスク",
    ErrorCode.TASK_NOT_WAITING: "入力待ちでないタスク",
    ErrorCode.TASK_NOT_INTERRUPTED: "中断していないタスク",
    ErrorCode.TASK_NOT_RETRYABLE: "やり直せないタスク",
    ErrorCode.TOO_MANY_TASKS: "タスクが多すぎる",
    ErrorCode.TOO_MANY_TASKS_PER_USER: "一人のタスクが多すぎる",
    ErrorCode.INVALID_LAST_EVENT_ID: "イベント番号の誤り",
    ErrorCode.SERVER_STOPPING: "サーバーの停止中",
    ErrorCode.INTERNAL_ERROR: "内部の誤り",
}


def code_word(code: str) -> str:
    """Error code ``code`` as people call it (その他 for a code the table lacks)."""
    return CODE_WORDS.get(code, "その他")


class KeiriError(Exception):
    """Base class of every exception keiri-agent raises deliberately."""


class BlockError(KeiriError):
    """A structured, user-facing error (seed 002 §9.1).

    ``message`` and ``hint`` are Japanese and shown to the user as they are; ``details`` holds
    machine-readable context (node_id, field, actual_value, ...); ``input_snapshot`` the inputs
    at the time of the failure, so a rerun can start from them.
    """

    FIELDS: ClassVar[tuple[str, ...]] = (
        "code",
        "message",
        "details",
        "input_snapshot",
        "hint",
        "recoverable",
    )
    default_code: ErrorCode = ErrorCode.INTERNAL_ERROR
    default_recoverable: bool = False

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | str | None = None,
        hint: str = "",
        details: dict[str, Any] | None = None,
        input_snapshot: dict[str, Any] | None = None,
        recoverable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.code: str = str(code) if code is not None else str(self.default_code)
        self.message = message
        self.hint = hint
        self.details: dict[str, Any] = dict(details or {})
        self.input_snapshot: dict[str, Any] = dict(input_snapshot or {})
        self.recoverable = self.default_recoverable if recoverable is None else recoverable

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.hint:
            text += f"（ヒント: {self.hint}）"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used by run logs, the UI and the API (the keys of ``FIELDS``)."""
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BlockError:
        """Rebuild an error from ``to_dict()`` output (for example, read back from a run log)."""
        return BlockError(
            str(data.get("message", "")),
            code=str(data.get("code", ErrorCode.INTERNAL_ERROR)),
            hint=str(data.get("hint", "")),
            details=dict(data.get("details") or {}),
            input_snapshot=dict(data.get("input_snapshot") or {}),
            recoverable=bool(data.get("recoverable", False)),
        )


def input_error(message: str, hint: str, /, **details: Any) -> BlockError:
    """An INPUT_VALIDATION_FAILED BlockError: the user's input, not the program, is wrong.

    ``details`` are its machine-readable context (field, value, node...).
    """
    return BlockError(message, code=ErrorCode.INPUT_VALIDATION_FAILED, hint=hint, details=details)


class ConfigurationError(BlockError):
    """A setting is missing or malformed; fixing the environment or ``.env`` fixes it."""

    default_code = ErrorCode.CONFIGURATION_ERROR
    default_recoverable = True


# Said with a missing OpenAI key: a model on the user's own machine needs no key at all.
LOCAL_MODEL_HINT = (
    " 手元のモデル（Ollama・vLLM などの OpenAI 互換サーバー）を使うなら、キーの代わりに"
    " OPENAI_BASE_URL（例: http://localhost:11434/v1）と KEIRI_LLM_MODEL=openai:<モデル名> を"
    "設定します。"
)


class CredentialsMissingError(ConfigurationError):
    """An LLM provider was needed but its credentials are not configured."""

    def __init__(self, provider: str, variables: list[str], *, purpose: str = "") -> None:
        names = "、".join(variables)
        for_what = f"（用途: {purpose}）" if purpose else ""
        super().__init__(
            f"LLM プロバイダー '{provider}' を使うための設定がありません{for_what}: {names}",
            hint=f"環境変数または .env に {names} を設定してください。"
            + (LOCAL_MODEL_HINT if provider == "openai" else "")
            + " 設定の確認は `keiri-agent doctor` で行えます。",
            details={"provider": provider, "missing": list(variables), "purpose": purpose},
        )
        self.provider = provider
        self.missing = list(variables)


class LLMError(BlockError):
    """The model provider returned an error that retries did not overcome."""

    default_code = ErrorCode.API_ERROR
    default_recoverable = True


class LLMTimeoutError(LLMError):
    """Every attempt of an LLM call exceeded its timeout."""

    default_code = ErrorCode.TIMEOUT_ERROR


class LLMOutputError(LLMError):
    """The model answered, but the answer does not validate against the requested schema."""

    default_code = ErrorCode.OUTPUT_SCHEMA_MISMATCH


class PathEscapeError(BlockError):
    """A path would read or write outside the directory it is confined to."""

    default_code = ErrorCode.PERMISSION_DENIED
    default_recoverable = False


class FileProcessingError(BlockError):
    """A file cannot be processed; ``details['file']`` names it and ``code`` says why.

    Use one of FILE_UNREADABLE, FILE_ENCRYPTED, FILE_TOO_LARGE, UNSUPPORTED_FORMAT or
    ARCHIVE_UNSAFE. Not recoverable by rerunning: the user has to supply another file.
    """

    default_code = ErrorCode.FILE_UNREADABLE
    default_recoverable = False

    def __init__(
        self,
        file: str,
        message: str,
        *,
        code: ErrorCode | str | None = None,
        hint: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, code=code, hint=hint, details={"file": file, **(details or {})})
        self.file = file


@dataclass(frozen=True)
class UserFile:
    """What to tell the user when a file they named cannot be read: one of these per kind of file.

    ``missing`` and ``unreadable`` are message templates over ``{file}`` (the path the message
    names); the unreadable message gets ``: <error>`` appended. A missing file is
    INPUT_VALIDATION_FAILED with ``hint`` (when ``missing`` is empty, it is unreadable like any
    other failure); any other failure is ``unreadable_code`` with ``unreadable_hint``.
    ``details[missing_key]`` names the file of a missing-file error, ``details['file']`` otherwise.
    """

    missing: str
    hint: str
    unreadable: str = "{file} を読めません"
    unreadable_hint: str = "UTF-8 のテキストファイルか、読み取り権限があるかを確認してください。"
    unreadable_code: ErrorCode = ErrorCode.FILE_UNREADABLE
    missing_key: str = "file"

    @contextmanager
    def reading(
        self,
        file: Path | str,
        *,
        errors: tuple[type[Exception], ...] = (OSError, UnicodeDecodeError),
        named: Path | str | None = None,
    ) -> Iterator[None]:
        """Turn ``errors`` raised in the block (reading ``file``, parsing it) into BlockErrors.

        ``named`` is the path a missing-file message names when it is not ``file`` itself (the
        folder the user gave, say).
        """
        caught: tuple[type[Exception], ...] = (FileNotFoundError, *errors)
        try:
            yield
        except caught as exc:
            if not (isinstance(exc, FileNotFoundError) and self.missing):
                raise self._unreadable(file, exc) from exc
            shown = str(file if named is None else named)
            raise input_error(
                self.missing.format(file=shown), self.hint, **{self.missing_key: shown}
            ) from None

    def read_text(self, file: Path) -> str:
        """The UTF-8 text of ``file`` (BlockError as above when it cannot be read), without the
        byte-order mark an editor such as Notepad may put first (it is no character of it)."""
        with self.reading(file):
            return file.read_text(encoding="utf-8-sig")

    def _unreadable(self, file: Path | str, exc: BaseException) -> BlockError:
        return BlockError(
            f"{self.unreadable.format(file=file)}: {reason_of(exc)}",
            code=self.unreadable_code,
            hint=self.unreadable_hint,
            details={"file": str(file), "cause": cause_of(exc)},
        )


def check_choice(
    option: str,
    value: str,
    choices: Sequence[str],
    *,
    message: str | None = None,
    hint: str | None = None,
) -> None:
    """Refuse ``value`` for ``option`` (``--mode``) unless it is one of ``choices``.

    ``message`` and ``hint`` replace the default wording (``--mode 'x' は使えません。``, the list
    of choices); ``details`` names the option without its dashes either way.
    """
    if value not in choices:
        raise input_error(
            f"{option} '{value}' は使えません。" if message is None else message,
            f"{' / '.join(choices)} のいずれかを指定してください。" if hint is None else hint,
            **{option.lstrip("-"): value},
        )


# What an OSError's errno means to a person (the errno names of the ``errno`` module).
_ERRNO_REASONS: Final[dict[str, str]] = {
    "ENOENT": "ファイルまたはフォルダがありません",
    "EACCES": "アクセスする権限がありません",
    "EPERM": "この操作をする権限がありません",
    "ENOSPC": "ディスクの空きがありません",
    "EDQUOT": "ディスクの使用量の上限に達しています",
    "EISDIR": "ファイルではなくフォルダです",
    "ENOTDIR": "パスの途中にフォルダではないものがあります",
    "EEXIST": "同じ名前のファイルまたはフォルダがすでにあります",
    "ENOTEMPTY": "フォルダが空ではありません",
    "EROFS": "読み取り専用の場所です",
    "ENAMETOOLONG": "ファイル名が長すぎます",
    "EMFILE": "同時に開いているファイルが多すぎます",
    "ENFILE": "同時に開いているファイルが多すぎます",
    "EBUSY": "ほかの処理が使用中です",
    "EIO": "ディスクの読み書き中に装置のエラーが起きました",
    "EFBIG": "ファイルが大きすぎます",
    "ELOOP": "シンボリックリンクが循環しています",
    "ECONNREFUSED": "接続先が接続を受け付けませんでした",
    "ECONNRESET": "接続先が接続を切りました",
    "ETIMEDOUT": "接続先から時間内に応答がありません",
    "EHOSTUNREACH": "接続先に届きません",
    "ENETUNREACH": "ネットワークに届きません",
}
_BY_ERRNO: Final[dict[int, str]] = {
    getattr(errno, name): text for name, text in _ERRNO_REASONS.items() if hasattr(errno, name)
}


def _os_reason(exc: OSError) -> str | None:
    if exc.errno in _BY_ERRNO:
        return _BY_ERRNO[exc.errno]
    if isinstance(exc, TimeoutError):
        return "時間内に応答がありません"
    if isinstance(exc, ConnectionError):
        return "接続先とつながりません"
    if isinstance(exc.errno, int):
        return f"OS がファイルまたは接続の操作を拒みました（{type(exc).__name__}、エラー番号 {exc.errno}）"
    return None  # a library's OSError without an errno (PIL's unreadable image, say)


def _validation_reason(exc: Any) -> str:
    places = sorted({".".join(str(part) for part in e["loc"]) or "全体" for e in exc.errors()})
    return f"{exc.error_count()} 件の値が決まりに合いません（{'、'.join(places)}）"


# (module, class, reason) for libraries a message may meet; the class is looked up only in a
# module already imported (an exception of a module never imported cannot have been raised), so
# this layer imports none of them. The first match in this order wins.
_LIBRARY_REASONS: Final[tuple[tuple[str, str, Any], ...]] = (
    (
        "json",
        "JSONDecodeError",
        lambda e: f"{e.lineno} 行 {e.colno} 列目が JSON として正しくありません",
    ),
    ("yaml.error", "MarkedYAMLError", yaml_reason),
    ("yaml.error", "YAMLError", lambda e: "YAML として読めません"),
    ("pydantic_core", "ValidationError", _validation_reason),
    ("zipfile", "BadZipFile", lambda e: "ZIP 形式（Excel ブックなどの入れ物）として壊れています"),
    (
        "openpyxl.utils.exceptions",
        "InvalidFileException",
        lambda e: "Excel ブックとして開けない形式です",
    ),
    (
        "sqlite3",
        "OperationalError",
        lambda e: "データベースを使えません（使用中か、開けない状態です）",
    ),
    (
        "sqlite3",
        "DatabaseError",
        lambda e: "データベースのファイルが壊れているか、データベースではありません",
    ),
    ("csv", "Error", lambda e: "CSV の書き方に誤りがあります"),
    ("re", "error", lambda e: f"正規表現の書き方に誤りがあります（{(e.pos or 0) + 1} 文字目）"),
)


def reason_of(exc: BaseException) -> str:
    """Why ``exc`` happened, in Japanese, without the library's English text.

    This package's own exceptions say their Japanese message; an OSError by its errno, a
    decoding error by its encoding and where it stops (``byte_place``: the line, and the byte
    counted from 1 in the bytes it holds; ``byte_place.decode_text`` gives it all of a file
    with a BOM), a YAML or JSON error by its line and column, a Pydantic
    error by the fields it names; anything else a generic reason with the exception's type.
    The library's own text goes into ``details['cause']`` (``cause_of``).
    """
    if isinstance(exc, KeiriError):  # this package's own: Japanese already
        return str(getattr(exc, "message", None) or exc)
    if isinstance(exc, UnicodeDecodeError):
        place = where(*decode_failure_place(exc))
        return f"文字コードが {exc.encoding.upper()} ではなく、{place}以降を読めません"
    if isinstance(exc, UnicodeEncodeError):
        return f"{exc.encoding.upper()} で表せない文字があります（{exc.start + 1} 文字目）"
    if isinstance(exc, OSError) and (said := _os_reason(exc)) is not None:
        return said
    for module, name, reason in _LIBRARY_REASONS:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return str(reason(exc))
    if isinstance(exc, AttributeError) and exc.name:
        return f"{exc.name} という名前が見つかりません"
    if isinstance(exc, KeyError) and exc.args:
        return f"必要な項目 {exc.args[0]} がありません"
    if isinstance(exc, MemoryError):
        return "メモリが足りません"
    if isinstance(exc, ImportError):
        return (
            f"必要なモジュール {exc.name} を読み込めません"
            if exc.name
            else "必要なモジュールがありません"
        )
    return f"予期しないエラーが起きました（{type(exc).__name__}）"


def cause_of(exc: BaseException) -> str:
    """The library's own words for ``exc`` (its type and text), for ``details['cause']``."""
    return f"{type(exc).__name__}: {exc}"
