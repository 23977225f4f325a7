"""Which ``Host`` headers the server answers: a defence against DNS rebinding.

A web page on an attacker's domain can make the browser resolve that domain to 127.0.0.1 and
then talk to a server on the loopback address with ``Host: attacker.example``; with no API key
configured, that page could run tasks and download results. The server therefore answers only
the host names it is meant to be reached by: ``localhost`` and the loopback addresses, the
address it is bound to, and the names listed in ``KEIRI_ALLOWED_HOSTS`` (comma-separated;
``*`` accepts any name). Any other ``Host`` is refused with 400 and a Japanese JSON body.

The matching is Starlette's ``TrustedHostMiddleware`` (exact names and ``*.example.com``
patterns); :class:`AllowedHosts` only replaces its plain-text refusal with ours.
"""

from __future__ import annotations

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keiri_agent.config import Settings
from keiri_agent.errors import ErrorCode
from keiri_agent.server.errors import ApiError

__all__ = ["LOCAL_HOSTS", "AllowedHosts", "allowed_hosts"]

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")  # Starlette keeps IPv6 brackets
_WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::"})  # every interface: no single name to add
_ADMITTED = "keiri.host_admitted"


def allowed_hosts(settings: Settings, bind_host: str | None = None) -> list[str]:
    """The host names to answer: localhost names, the bind address, KEIRI_ALLOWED_HOSTS."""
    hosts = list(LOCAL_HOSTS)
    bare = (bind_host or "").strip("[]").lower()
    if bare not in _WILDCARD_BINDS:
        hosts.append(f"[{bare}]" if ":" in bare else bare)
    for name in settings.keiri_allowed_hosts.split(","):
        if name.strip():
            hosts.append(name.strip().lower())
    return list(dict.fromkeys(hosts))


class AllowedHosts(TrustedHostMiddleware):
    """Starlette's host check with a Japanese JSON refusal (400 ``HOST_NOT_ALLOWED``)."""

    def __init__(self, app: ASGIApp, hosts: list[str]) -> None:
        super().__init__(self._admit, allowed_hosts=hosts, www_redirect=False)
        self.next_app = app
        self.hosts = hosts

    async def _admit(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[_ADMITTED] = True
        await self.next_app(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return

        async def admitted_only(message: Message) -> None:
            if scope.get(_ADMITTED):  # Starlette's own refusal is dropped; ours goes out below
                await send(message)

        await super().__call__(scope, receive, admitted_only)
        if not scope.get(_ADMITTED):
            shown = ", ".join(self.hosts)
            refusal = ApiError(
                400,
                ErrorCode.HOST_NOT_ALLOWED,
                "このホスト名ではサーバーに接続できません（Host ヘッダーが許可されていません）。",
                hint=f"許可されているホスト名: {shown}。別の名前やアドレスで接続するときは、"
                "サーバーを起動する前に KEIRI_ALLOWED_HOSTS にその名前を追加してください"
                "（カンマ区切り）。",
            ).response()
            await refusal(scope, receive, send)
