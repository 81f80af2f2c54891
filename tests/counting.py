"""Transports that count what a client sends over real HTTP: the requests, the most in flight at
once, and the round trips they took one after another.

A request's round trip number is one more than the highest of those that had finished before it
started, so requests sent side by side share a number and ``round_trips`` is the longest chain: what
a user far from the service waits for. ``hold=n`` (or ``clear(hold=n)``) keeps each of the next ``n``
requests until all ``n`` have arrived (or ``wait`` seconds passed), so requests a client means to
overlap are seen in flight together on any machine, however fast the sandbox answers.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx


class _Tally:
    def __init__(self, hold: int) -> None:
        self.hold = hold
        self.requests: list[httpx.Request] = []
        self.peak = 0
        self.round_trips = 0
        self._in_flight = 0
        self._finished_at = 0  # the highest round trip number of the requests finished so far

    def start(self, request: httpx.Request) -> int:
        self.requests.append(request)
        self._in_flight += 1
        self.peak = max(self.peak, self._in_flight)
        return self._finished_at + 1

    def end(self, number: int) -> None:
        self._in_flight -= 1
        self._finished_at = max(self._finished_at, number)
        self.round_trips = max(self.round_trips, number)

    def held(self) -> bool:
        return len(self.requests) < self.hold

    def paths(self) -> list[str]:
        return [r.url.path for r in self.requests]

    def clear(self, hold: int = 0) -> None:
        self.requests.clear()
        self.peak = self.round_trips = self._finished_at = 0
        self.hold = hold


class CountingTransport(httpx.HTTPTransport, _Tally):
    """A real HTTP transport (threads) that counts what it sends (see the module)."""

    def __init__(self, hold: int = 0, wait: float = 5.0, **options: Any) -> None:
        httpx.HTTPTransport.__init__(self, **options)
        _Tally.__init__(self, hold)
        self._wait = wait
        self._cond = threading.Condition()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self._cond:
            number = self.start(request)
            self._cond.notify_all()
            self._cond.wait_for(lambda: not self.held(), timeout=self._wait)
        try:
            return super().handle_request(request)
        finally:
            with self._cond:
                self.end(number)


class AsyncCountingTransport(httpx.AsyncHTTPTransport, _Tally):
    """The asyncio twin of :class:`CountingTransport`."""

    def __init__(self, hold: int = 0, wait: float = 5.0, **options: Any) -> None:
        httpx.AsyncHTTPTransport.__init__(self, **options)
        _Tally.__init__(self, hold)
        self._wait = wait
        self._arrived = asyncio.Event()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        number = self.start(request)
        if self.held():
            try:
                await asyncio.wait_for(self._arrived.wait(), self._wait)
            except TimeoutError:
                pass
        else:
            self._arrived.set()
        try:
            return await super().handle_async_request(request)
        finally:
            self.end(number)

    def clear(self, hold: int = 0) -> None:
        super().clear(hold)
        self._arrived = asyncio.Event()
