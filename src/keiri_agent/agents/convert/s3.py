"""S3 access for the conversion pipeline: the client, listing, downloads and the retry policy.

``make_s3_client`` builds a boto3 client from the settings: ``KEIRI_S3_ENDPOINT_URL`` reaches
MinIO or any S3-compatible store (with path-style addressing), ``KEIRI_S3_REGION`` sets the
region, and credentials come from boto3's own chain (``AWS_ACCESS_KEY_ID``, ``AWS_PROFILE``...).
botocore's retries are switched off so that the policy is this module's alone, visible in the
log and countable in tests.

``S3Reader`` runs every call (one listing page, one download) under that policy: a transient
failure (5xx, throttling, connection, read and streaming errors) is retried ``retries`` times
with exponential backoff and then raised as ``FetchError(transient=True, attempts=...)``, the
seed's "fallback after 3 retries"; anything else (missing bucket or key, access denied, wrong
region, no credentials) is raised at once with a Japanese explanation and hint.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, NamedTuple, TypeVar

import boto3  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]
from botocore.exceptions import (  # type: ignore[import-untyped]
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    CredentialRetrievalError,
    EndpointConnectionError,
    HTTPClientError,
    IncompleteReadError,
    NoCredentialsError,
    ParamValidationError,
    PartialCredentialsError,
    ProxyConnectionError,
    SSLError,
)

from keiri_agent.agents.convert.models import FetchError
from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import ErrorCode, cause_of

__all__ = [
    "CHUNK_BYTES",
    "DEFAULT_BACKOFF_S",
    "FETCH_RETRIES",
    "S3_CONNECT_TIMEOUT_S",
    "S3_PAGE_SIZE",
    "S3_READ_TIMEOUT_S",
    "S3Object",
    "S3Reader",
    "is_s3_url",
    "is_transient",
    "make_s3_client",
    "parse_s3_url",
]

FETCH_RETRIES = 3  # retries after the first attempt (seed 003: "3 回リトライ後")
DEFAULT_BACKOFF_S = 0.5  # doubled after each failed attempt: 0.5, 1, 2 s
S3_PAGE_SIZE = 1000  # list_objects_v2 MaxKeys (S3's own maximum)
S3_CONNECT_TIMEOUT_S = 10.0
S3_READ_TIMEOUT_S = 60.0
CHUNK_BYTES = 1024 * 1024

_T = TypeVar("_T")
Log = Callable[[str], None]

# Error codes that a later attempt can succeed at, whatever their HTTP status.
_TRANSIENT_CODES = frozenset(
    {
        "InternalError",
        "ServiceUnavailable",
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "RequestTimeout",
        "RequestTimeoutException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
    }
)
# botocore's network failures: connection refused or reset, timeouts, broken streams.
_NETWORK_ERRORS = (
    HTTPClientError,
    EndpointConnectionError,
    ConnectTimeoutError,
    ProxyConnectionError,
    IncompleteReadError,
)
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.\-_]{1,254}")
_CREDENTIALS_HINT = (
    "AWS_ACCESS_KEY_ID と AWS_SECRET_ACCESS_KEY（または AWS_PROFILE）を設定し、"
    "そのユーザーにバケットの一覧（s3:ListBucket）と読み取り（s3:GetObject）の権限があるか確認してください。"
)
_ENDPOINT_HINT = (
    "接続先（KEIRI_S3_ENDPOINT_URL、未設定なら AWS）とリージョン（KEIRI_S3_REGION）、"
    "ネットワークを確認してください。"
)


class S3Object(NamedTuple):
    """One listed object: its key relative to the URL, the full key and its size in bytes."""

    rel: str
    key: str
    size: int


def is_s3_url(source: str) -> bool:
    return source.strip().lower().startswith("s3://")


def parse_s3_url(url: str) -> tuple[str, str]:
    """``s3://bucket/key/or/prefix`` → ``(bucket, key)``; the key may be empty or end in "/"."""
    text = url.strip()
    bucket, _sep, key = text[len("s3://") :].partition("/")
    if not is_s3_url(text) or not _BUCKET.fullmatch(bucket):
        raise FetchError(
            f"S3 の指定 '{url}' を読み取れません。",
            source=url,
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="s3://バケット名/フォルダー/ の形で指定してください（例: s3://keiri-data/2024/）。",
        )
    return bucket, key


def make_s3_client(settings: Settings | None = None) -> Any:
    """A boto3 S3 client from the settings, with botocore's own retries switched off."""
    settings = settings or load_settings()
    endpoint = settings.keiri_s3_endpoint_url
    config = Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        connect_timeout=S3_CONNECT_TIMEOUT_S,
        read_timeout=S3_READ_TIMEOUT_S,
        # MinIO and most S3-compatible stores serve buckets as paths, not as host names.
        s3={"addressing_style": "path"} if endpoint else None,
    )
    try:
        return boto3.session.Session().client(
            "s3", endpoint_url=endpoint, region_name=settings.keiri_s3_region, config=config
        )
    except ValueError as exc:  # botocore's "Invalid endpoint"
        raise FetchError(
            f"S3 の接続先 '{endpoint}' が URL として正しくありません。",
            source=str(endpoint),
            code=ErrorCode.CONFIGURATION_ERROR,
            hint="KEIRI_S3_ENDPOINT_URL を http://host:9000 のような URL にしてください。",
            details={"cause": cause_of(exc)},
        ) from exc


def is_transient(exc: BaseException) -> bool:
    """Whether retrying the same call can succeed (5xx, 429, throttling, network trouble)."""
    if isinstance(exc, ClientError):
        return _status(exc) >= 500 or _status(exc) == 429 or _code(exc) in _TRANSIENT_CODES
    if isinstance(exc, SSLError):
        return False  # a certificate problem does not go away by retrying
    return isinstance(exc, _NETWORK_ERRORS)


class S3Reader:
    """Lists and downloads the objects one ``s3://`` URL names, under the retry policy."""

    def __init__(
        self,
        client: Any,
        url: str,
        *,
        retries: int = FETCH_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        log: Log | None = None,
    ) -> None:
        self.client = client
        self.url = url.strip()
        self.bucket, self.key = parse_s3_url(self.url)
        self.retries = max(0, retries)
        self.backoff_s = max(0.0, backoff_s)
        self.log: Log = log or (lambda _msg: None)

    def list(
        self, page_size: int = S3_PAGE_SIZE, *, max_objects: int | None = None
    ) -> list[S3Object]:
        """The objects the URL names, in key order; folder markers (keys ending "/") excluded.

        ``s3://b/key`` naming an existing object gives that object alone; otherwise the key is
        a folder and everything under ``key/`` is listed, page by page. ``max_objects`` stops
        the listing early (one more than it, so the caller can tell "too many").
        """
        found: list[S3Object] = []
        token: str | None = None
        while True:
            params: dict[str, Any] = {
                "Bucket": self.bucket,
                "Prefix": self.key,
                "MaxKeys": page_size,
            }
            if token:
                params["ContinuationToken"] = token
            page = self.call(
                f"{self.url} の一覧取得", partial(self.client.list_objects_v2, **params)
            )
            for item in page.get("Contents", []):
                key, size = str(item["Key"]), int(item.get("Size", 0))
                if self.key and not self.key.endswith("/") and key == self.key:
                    # The URL names one object: the exact key sorts before anything under it.
                    return [S3Object(key.rsplit("/", 1)[-1], key, size)]
                rel = self._relative(key)
                if rel and not key.endswith("/"):
                    found.append(S3Object(rel, key, size))
                if max_objects is not None and len(found) > max_objects:
                    return found
            token = page.get("NextContinuationToken") if page.get("IsTruncated") else None
            if not token:
                return found

    def download(self, key: str, consume: Callable[[Iterable[bytes]], _T]) -> _T:
        """Stream one object's body into ``consume``; a failed attempt is retried from scratch."""

        def attempt() -> _T:
            body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"]
            try:
                return consume(body.iter_chunks(CHUNK_BYTES))
            finally:
                body.close()

        return self.call(f"s3://{self.bucket}/{key} の取得", attempt)

    def call(self, what: str, fn: Callable[[], _T]) -> _T:
        """Run one S3 call; retry transient failures, translate every failure to FetchError."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return fn()
            except (BotoCoreError, ClientError) as exc:
                if not is_transient(exc):
                    raise self._permanent(exc) from exc
                if attempt > self.retries:
                    message, hint = self._describe(exc)
                    raise FetchError(
                        f"{what}に {attempt} 回失敗しました。{message}",
                        source=self.url,
                        attempts=attempt,
                        code=ErrorCode.API_ERROR,
                        hint=hint,
                        transient=True,
                        details={"error": _error_text(exc)},
                    ) from exc
                delay = self.backoff_s * 2 ** (attempt - 1)
                self.log(
                    f"{what}に失敗しました（{_error_text(exc)}）。{delay:g} 秒後に再試行します"
                    f"（{attempt}/{self.retries}）"
                )
                time.sleep(delay)

    def _relative(self, key: str) -> str | None:
        if not self.key or self.key.endswith("/"):
            return key[len(self.key) :]
        prefix = self.key + "/"
        return key[len(prefix) :] if key.startswith(prefix) else None

    def _permanent(self, exc: Exception) -> FetchError:
        message, hint = self._describe(exc)
        if isinstance(exc, NoCredentialsError | PartialCredentialsError | CredentialRetrievalError):
            code = ErrorCode.CONFIGURATION_ERROR
        elif isinstance(exc, ParamValidationError):
            code = ErrorCode.INPUT_VALIDATION_FAILED
        elif isinstance(exc, ClientError):
            code = ErrorCode.PERMISSION_DENIED if _status(exc) == 403 else ErrorCode.FILE_UNREADABLE
        else:
            code = ErrorCode.API_ERROR
        return FetchError(
            message, source=self.url, code=code, hint=hint, details={"error": _error_text(exc)}
        )

    def _describe(self, exc: Exception) -> tuple[str, str]:
        """A Japanese message and hint for one botocore failure."""
        where = f"s3://{self.bucket}/{self.key}"
        if isinstance(exc, NoCredentialsError | PartialCredentialsError | CredentialRetrievalError):
            return "S3 の認証情報が見つかりません。", _CREDENTIALS_HINT
        if isinstance(exc, ParamValidationError):
            return f"S3 の指定 '{where}' がバケット名・キーの決まりに合いません。", (
                "バケット名とフォルダー名を確認してください。"
            )
        if isinstance(exc, SSLError):
            return "S3 の接続先の証明書を検証できません。", (
                "KEIRI_S3_ENDPOINT_URL が https の場合は証明書を、http で良い場合は URL を確認してください。"
            )
        if isinstance(exc, EndpointConnectionError | ConnectTimeoutError | ProxyConnectionError):
            return "S3 の接続先に接続できません。", _ENDPOINT_HINT
        if not isinstance(exc, ClientError):
            return f"S3 との通信に失敗しました（{type(exc).__name__}）。", _ENDPOINT_HINT
        status, code = _status(exc), _code(exc)
        if code == "NoSuchBucket":
            return f"S3 バケット '{self.bucket}' が見つかりません。", (
                "バケット名と接続先（KEIRI_S3_ENDPOINT_URL）を確認してください。"
            )
        if code in ("NoSuchKey", "404") or status == 404:
            return (
                f"S3 に '{where}' が見つかりません。",
                "キー（フォルダー・ファイル名）の綴りを確認してください。",
            )
        if status == 403 or code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            return (
                f"S3 '{where}' へのアクセスが拒否されました（{code or status}）。",
                _CREDENTIALS_HINT,
            )
        if status == 301 or code in ("PermanentRedirect", "AuthorizationHeaderMalformed"):
            return f"S3 バケット '{self.bucket}' は別のリージョンにあります（{code}）。", (
                "KEIRI_S3_REGION にバケットのリージョン（例: ap-northeast-1）を設定してください。"
            )
        if is_transient(exc):
            return f"S3 が一時的なエラーを返しました（{status} {code}）。", (
                "しばらく待ってから再実行してください。続く場合は S3 の稼働状況と " + _ENDPOINT_HINT
            )
        return f"S3 がエラーを返しました（{status} {code}）。", _ENDPOINT_HINT


def _status(exc: Any) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)


def _code(exc: Any) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _error_text(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        return f"{_status(exc)} {_code(exc)}".strip()
    return type(exc).__name__
