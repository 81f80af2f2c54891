"""Vendor header aliases: the hosted service's SDKs send ``Upstash-*`` where the spec says ``Service-*``.

The spec names every request header with the neutral word Service (``Service-Encoding``); the hosted
service's own clients (upstash-redis, upstash-vector, qstash, upstash-ratelimit) send the vendor
spelling (``Upstash-Encoding: base64`` on every request of ``upstash_redis.Redis(url, token)``).
:class:`VendorHeaders` renames, before any area sees the request, every ``upstash-<x>`` header to
``service-<x>``, so each area reads only the neutral names. When a request carries both spellings of
one header, the neutral one wins and the vendor one is dropped.

The rewrite is by prefix, so it needs no table; :data:`HEADER_ALIASES` is the one documented list of
what the SDKs send and what the sandbox does with it (the OpenAPI document and
docs/sdk-compatibility.md show it, and a test checks that it names every ``Upstash-*`` header the
installed SDKs send).
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

NEUTRAL_PREFIX = "Service-"
VENDOR_PREFIX = "Upstash-"
_NEUTRAL = NEUTRAL_PREFIX.lower().encode()
_VENDOR = VENDOR_PREFIX.lower().encode()

IGNORED = "accepted and ignored"


@dataclass(frozen=True)
class HeaderAlias:
    """One request header by its name after the prefix (``Encoding``; ``Forward-*`` for a family)."""

    suffix: str
    area: str
    sent_by: str
    sandbox: str

    @property
    def neutral(self) -> str:
        return NEUTRAL_PREFIX + self.suffix

    @property
    def vendor(self) -> str:
        return VENDOR_PREFIX + self.suffix


#: every request header the sandbox reads, and every vendor header an installed SDK sends.
HEADER_ALIASES: tuple[HeaderAlias, ...] = (
    # the spec's headers: read by the areas under their neutral name
    HeaderAlias("Encoding", "kv", "upstash-redis (base64, the default)", "base64-encoded replies (rule 5)"),
    HeaderAlias("Response-Format", "kv", "-", "json or resp2 replies (rule 6)"),
    HeaderAlias("Workflow-RunId", "queue", "workflow SDKs", "run id of a resumed or triggered run"),
    HeaderAlias("Retries", "queue", "qstash (publish, schedules)", "retries of a resumed or triggered run"),
    HeaderAlias("Flow-Control-Key", "queue", "qstash (publish, schedules)", "flow control key of a run"),
    HeaderAlias("Flow-Control-Value", "queue", "qstash (publish, schedules)", "flow control value of a run"),
    HeaderAlias("Label", "queue", "qstash (publish, schedules)", "label of a triggered run"),
    # client bookkeeping: nothing to do on a single local node
    HeaderAlias("Telemetry-Sdk", "all", "upstash-redis, upstash-vector, upstash-ratelimit", IGNORED),
    HeaderAlias("Telemetry-Runtime", "all", "upstash-redis, upstash-vector", IGNORED),
    HeaderAlias("Telemetry-Platform", "all", "upstash-redis, upstash-vector", IGNORED),
    HeaderAlias("Telemetry-Retry", "all", "upstash-redis (retried requests)", IGNORED),
    HeaderAlias("Sync-Token", "kv", "upstash-redis (read_your_writes)",
                IGNORED + ": one node, so every read sees every earlier write"),
    # qstash message and schedule options: their endpoints are outside the spec
    *(HeaderAlias(suffix, "queue", "qstash (publish, schedules)",
                  IGNORED + ": the sandbox serves no publish or schedule endpoint")
      for suffix in ("Method", "Forward-*", "Callback", "Callback-*", "Failure-Callback", "Failure-Callback-*",
                     "Retry-Delay", "Delay", "Not-Before", "Deduplication-Id", "Content-Based-Deduplication",
                     "Timeout", "Cron", "Schedule-Id", "Queue-Name", "Redact-Fields")),
)


def vendor_alias(neutral: str) -> str | None:
    """``Service-Encoding`` -> ``Upstash-Encoding`` for a header of the table, else None."""
    for alias in HEADER_ALIASES:
        if alias.neutral.lower() == neutral.lower():
            return alias.vendor
    return None


def neutral_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """ASGI headers (lower-case names) with every ``upstash-<x>`` renamed ``service-<x>``; a vendor
    header whose neutral name is also present is dropped (the neutral one wins)."""
    sent = {name for name, _ in headers if name.startswith(_NEUTRAL)}
    out = []
    for name, value in headers:
        if name.startswith(_VENDOR):
            name = _NEUTRAL + name[len(_VENDOR):]
            if name in sent:
                continue
        out.append((name, value))
    return out


class VendorHeaders:
    """Pure-ASGI middleware applying :func:`neutral_headers`. A request without vendor headers goes
    through untouched (one pass over its header list, no copy)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, _ in scope["headers"]:
                if name.startswith(_VENDOR):
                    scope = {**scope, "headers": neutral_headers(scope["headers"])}
                    break
        await self.app(scope, receive, send)
