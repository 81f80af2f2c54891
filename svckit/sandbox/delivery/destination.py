"""Where a message goes: the destination of ``/v2/publish/{destination}`` (a URL or a URL group's
name), and the sandbox's rule that it delivers to this machine only (sans I/O).

The SDKs put the destination into the request path as it is, unencoded (``/v2/publish/https://
example.com/hook?x=1``), so its query string arrives as the request's own: the destination is the path
after the route's prefix, plus ``?`` and the raw query when there is one.

The loopback rule: the sandbox is a development server on the user's machine, so it delivers only to
``localhost``, ``127.0.0.0/8`` and ``::1`` (and to the hosts the user allows by name with
``svckit sandbox --allow-destination HOST`` or ``Sandbox(allow_destinations=[...])``). Anything else
is refused with a 400 naming the rule, before the message is kept. Redirects are not followed when
delivering, so a loopback destination cannot send a delivery elsewhere.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

#: a URL group's, queue's, schedule's or label's name
NAME = re.compile(r"^[A-Za-z0-9._-]{1,256}$")
LOOPBACK_NAMES = frozenset({"localhost"})
ALLOW_OPTION = "svckit sandbox --allow-destination HOST (Sandbox(allow_destinations=[...]))"


class DestinationError(ValueError):
    """A destination the sandbox does not deliver to; the request is refused (400) with this text."""


@dataclass(frozen=True)
class Destination:
    """A URL (``url``) or the name of a URL group (``group``)."""

    url: str | None = None
    group: str | None = None


def from_path(raw: str, query: str = "") -> Destination:
    """The destination of a publish path (``raw``: what follows ``/v2/publish/``, undecoded)."""
    if not raw:
        raise DestinationError("give a destination after the route: a URL (http:// or https://) or a URL "
                               "group's name")
    if raw.lower().startswith(("http://", "https://")):
        return Destination(url=raw + (f"?{query}" if query else ""))
    if "://" in raw or "/" in raw:
        raise DestinationError(f"destination {raw!r}: a URL must start with http:// or https://")
    if not NAME.match(raw):
        raise DestinationError(f"destination {raw!r}: a URL group's name holds only letters, digits, '.', '_' "
                               "and '-'")
    return Destination(group=raw)


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower().rstrip(".")
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, allowed: Collection[str] = (), *, what: str = "destination") -> str:
    """``url`` when the sandbox delivers to it (http or https, a host on loopback or allowed by name);
    else a DestinationError naming the rule and the option that lifts it."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # a port that is not a number is refused here, not at delivery
    except ValueError as exc:
        raise DestinationError(f"{what} {url!r} is not a URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise DestinationError(f"{what} {url!r}: give an http:// or https:// URL with a host")
    if is_loopback(host) or host.lower() in {h.lower() for h in allowed}:
        return url
    raise DestinationError(
        f"{what} {url!r}: the sandbox delivers only to this machine (localhost, 127.0.0.0/8, ::1), the loopback "
        f"rule of a local development server; {host!r} is not on loopback. Run your endpoint locally, or allow "
        f"the host with {ALLOW_OPTION}")
