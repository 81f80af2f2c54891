"""Every request names the sandbox in its Host header, or it is refused.

A web page can make the browser send requests to 127.0.0.1 without knowing it (DNS rebinding: a name
of the page's own site first resolves to the site, then to 127.0.0.1). The browser then treats the
sandbox's answers as the site's own and lets the page read them; only the Host header still carries
the site's name. So the sandbox serves only the names it is reached by: 127.0.0.1, localhost, ::1
and the host it binds (the names its https certificate is for, svckit/sandbox/tls.py), plus the
names added with ``svckit sandbox --allowed-host NAME`` (``Sandbox(allowed_hosts=[...])``); ``*``
allows any. The port is not checked: a forwarded port (``ssh -L``, a container's mapping) is the
same server under another port, and a rebinding page has to name the sandbox's port anyway.

starlette's TrustedHostMiddleware makes the same check, but answers plain text that names no way
out; this one answers the areas' error body (``{"error", "status"}``), naming the option. A request
without a Host header (HTTP/1.0 tools) is served: no browser sends one.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from svckit.sandbox.http import ApiError, error_body_with_status, error_reply
from svckit.sandbox.tls import LOOPBACK_NAMES

#: binding one of these serves every interface: no one name to add
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})
OPTION = "svckit sandbox --allowed-host NAME (Sandbox(allowed_hosts=[...]))"


def host_name(value: str) -> str | None:
    """The name in a Host header value (``name``, ``name:port``, ``[v6]:port``), lower case, without
    brackets or a final dot; None for a value that is not one."""
    try:
        parts = urlsplit(f"//{value}")
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        return None
    name = parts.hostname
    if not name or parts.username is not None or parts.path or parts.query or parts.fragment:
        return None
    return name.rstrip(".")


def served_names(bind_host: str, added: Iterable[str] = ()) -> frozenset[str]:
    """The names the sandbox answers to: loopback's, the bound host's, and ``added`` (``*``: any)."""
    names = set(LOOPBACK_NAMES)
    if bind_host not in _WILDCARDS:
        names.add(bind_host)
    for value in added:
        value = str(value).strip()
        name = "*" if value == "*" else host_name(value)
        if name is None:
            raise ValueError(f"allowed_hosts: {value!r} is not a host name or address")
        names.add(name)
    return frozenset(name.lower().strip("[]").rstrip(".") for name in names)


class AllowedHosts:
    """ASGI middleware: a request whose Host is not one of ``names`` gets 400 and goes no further."""

    def __init__(self, app: ASGIApp, names: frozenset[str]) -> None:
        self.app = app
        self.names = names
        self.any = "*" in names
        self.shown = ", ".join(sorted(f"[{n}]" if ":" in n else n for n in names))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.any or scope["type"] != "http":  # (the sandbox serves no websockets)
            await self.app(scope, receive, send)
            return
        values = [value for key, value in scope["headers"] if key == b"host"]
        if not values:
            await self.app(scope, receive, send)
            return
        given = values[0].decode("latin-1")
        if len(values) == 1 and host_name(given) in self.names:
            await self.app(scope, receive, send)
            return
        await self._refusal(given if len(values) == 1 else "(several Host headers)")(scope, receive, send)

    def _refusal(self, given: str) -> JSONResponse:
        shown = given if len(given) <= 100 else given[:100] + "..."
        message = (f"Host {shown!r} is not a name this sandbox serves ({self.shown}): requests that name "
                   f"another site are refused, so a web page cannot reach the sandbox through its own "
                   f"domain name (DNS rebinding). To serve that name too, start it with {OPTION}")
        return error_reply(ApiError(400, message), error_body_with_status)
