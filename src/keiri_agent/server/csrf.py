"""Cross-site requests to a server without keys are refused (CSRF).

Without keys (``KEIRI_API_KEYS_FILE`` / ``KEIRI_API_KEY`` unset, the loopback default) a request
carries no secret, so any web page the user opens could make the browser send one: a "simple"
request (``text/plain``, a form, ``multipart/form-data``) needs no CORS preflight and would
start tasks. :class:`CrossSiteGuard` therefore accepts a state-changing request (every method
but GET, HEAD and OPTIONS) only when it is provably not cross-site:

- a browser's request says where it comes from: an ``Origin`` equal to the server's own
  (scheme, host and port of the request: the ``Host`` header and the scheme uvicorn applied,
  ``X-Forwarded-Proto`` from a trusted proxy included), or ``Sec-Fetch-Site: same-origin`` /
  ``none`` (typed by the user), is the server's own page; any other ``Origin`` (``null``
  included) or ``Sec-Fetch-Site: cross-site`` / ``same-site`` is refused with 403
  ``CROSS_SITE_REQUEST``. Pages cannot forge these headers (the browser sets them).
- a request with neither header comes from a program, not a browser page (every current
  browser sends ``Origin`` with a POST): it is accepted with a JSON body
  (``Content-Type: application/json``, which a page can send cross-site only after a preflight
  that this server never grants) or with no body at all (cancel, retry); any other body is
  refused with 403 ``ORIGIN_REQUIRED``: a program uploading files says ``Origin``.

The progress page (``static/``) posts JSON, or multipart from its own origin, so it is not
affected. With keys the guard is not installed: the key travels in an ``Authorization``
header, which a page cannot send cross-site without a preflight either.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from keiri_agent.errors import ErrorCode
from keiri_agent.server.errors import ApiError

__all__ = ["SAFE_METHODS", "CrossSiteGuard", "request_origin", "same_origin"]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})  # they change nothing on this server
JSON_MEDIA_TYPE = "application/json"
_OWN_FETCH_SITES = frozenset({"same-origin", "none"})  # Sec-Fetch-Site of the server's own page
_DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_SHOWN = 200  # characters of a header value repeated in an error's details

Origin = tuple[str, str, int]  # scheme, host (lower case, IPv6 without brackets), port


def _origin(url: str) -> Origin | None:
    """The (scheme, host, port) of ``url``, or None when it has no such parts."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:  # a port that is not a number, an unbalanced bracket
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]


def request_origin(scope: Scope) -> Origin | None:
    """The origin the request was sent to: its scheme (as uvicorn applied the proxy's
    ``X-Forwarded-Proto``) and its ``Host`` header; None without a usable ``Host``."""
    host = Headers(scope=scope).get("host")
    if not host:
        return None
    return _origin(f"{scope.get('scheme', 'http')}://{host}")


def _shown(origin: Origin | None) -> str:
    if origin is None:
        return "<このサーバーの URL>"
    scheme, host, port = origin
    name = f"[{host}]" if ":" in host else host
    return f"{scheme}://{name}" if _DEFAULT_PORTS[scheme] == port else f"{scheme}://{name}:{port}"


def same_origin(scope: Scope) -> bool | None:
    """True when the browser says the request comes from the server's own origin, False when
    it says another site, None when it says nothing (not a browser page)."""
    headers = Headers(scope=scope)
    origins = headers.getlist("origin")
    fetch_sites = [value.strip().lower() for value in headers.getlist("sec-fetch-site")]
    if not origins and not fetch_sites:
        return None
    own = request_origin(scope)
    if any(own is None or _origin(value) != own for value in origins):
        return False
    return all(site in _OWN_FETCH_SITES for site in fetch_sites)


def _json_or_empty(headers: Headers) -> bool:
    content_type = headers.get("content-type")
    if content_type is None:
        chunked = "transfer-encoding" in headers
        return not chunked and headers.get("content-length", "0").strip() == "0"
    return content_type.split(";", 1)[0].strip().lower() == JSON_MEDIA_TYPE


class CrossSiteGuard:
    """ASGI middleware: 403 for a state-changing request not proven to come from the server's
    own origin (see the module docstring); installed only on a server without keys."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
        else:
            await refusal.response()(scope, receive, send)

    @staticmethod
    def _refusal(scope: Scope) -> ApiError | None:
        site = same_origin(scope)
        if site is True:
            return None
        headers = Headers(scope=scope)
        own = _shown(request_origin(scope))
        if site is False:
            return ApiError(
                403,
                ErrorCode.CROSS_SITE_REQUEST,
                "別のサイトの画面から送られた要求は受け付けません（API キーのないサーバーは、"
                "このサーバー自身の画面と API を直接呼ぶプログラムからの要求だけを受け付けます）。",
                hint=f"進捗画面は {own}/ を開いて使ってください。別のサイトから使うときは"
                " API キー（KEIRI_API_KEYS_FILE か KEIRI_API_KEY）を設定してください。",
                details={
                    "origin": headers.get("origin", "")[:_MAX_SHOWN] or None,
                    "sec_fetch_site": headers.get("sec-fetch-site", "")[:_MAX_SHOWN] or None,
                },
            )
        if _json_or_empty(headers):
            return None
        return ApiError(
            403,
            ErrorCode.ORIGIN_REQUIRED,
            "JSON 以外の本文（"
            f"{headers.get('content-type', 'Content-Type なし')[:_MAX_SHOWN]}）は、"
            "送り元がこのサーバー自身の画面だとわかる要求でだけ受け付けます。",
            hint="API を直接呼ぶときは Content-Type: application/json で JSON を送ってください。"
            f"ファイルを multipart で送るときは Origin: {own} ヘッダーを付けてください"
            "（または API キーを設定してください）。",
        )
