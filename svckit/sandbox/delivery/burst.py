"""The queue account's ``max_requests_per_second``: at most that many requests to the queue area in a
second, the rest answered 429 with the ``Burst-RateLimit-*`` headers the SDKs read (qstash's
``RateLimitExceededError``, @upstash/qstash's ``QstashRatelimitError``). Publishing is not counted
(``/v2/publish``, ``/v2/enqueue``, ``/v2/batch``, ``/v2/notify``, and the sandbox's ``/v2/trigger``):
the hosted service bounds those by the day (:mod:`.quota`). The limit is read from the live account record at the start of each second, so a
plan upgrade lifts it within the second.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from svckit.sandbox.delivery.quota import UPGRADE
from svckit.sandbox.http import ApiError, error_reply

EXEMPT = ("/v2/publish/", "/v2/enqueue/", "/v2/batch", "/v2/trigger/", "/v2/notify")


class BurstLimit:
    """ASGI middleware over the queue area's routes (module docstring)."""

    def __init__(self, app: ASGIApp, limit: Callable[[], int]) -> None:
        self.app, self.limit = app, limit
        self._second, self._count, self._allowed = -1, 0, 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not any(part in scope["path"] for part in EXEMPT):
            second = int(time.time())
            if second != self._second:
                self._second, self._count, self._allowed = second, 0, self.limit()
            self._count += 1
            if self._count > self._allowed:
                headers = {"Burst-RateLimit-Limit": str(self._allowed), "Burst-RateLimit-Remaining": "0",
                           "Burst-RateLimit-Reset": str(second + 1), "Retry-After": "1"}
                refused = ApiError(429, f"too many requests: the queue account's max_requests_per_second is "
                                        f"{self._allowed}; wait a second, or {UPGRADE}", headers)
                await error_reply(refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)
