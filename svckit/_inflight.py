"""Requests in flight side by side: the one way svckit overlaps requests that do not depend on each
other, bounded, with results handed back in the order they were asked for.

A user 40 ms from the service pays a round trip per request. A long job is a chain of requests that
depend on each other (a SCAN cursor, a range cursor) plus work that does not (the pipelines acting on
the keys each SCAN call brought, the batches of a fetch). The chain sets the job's length; the rest
should run beside it, a few at a time, so it adds no round trips of its own::

    with InFlight(limit=8) as flight:
        for state, keys in walk_keys(kv, "session:*"):            # the chain, on this thread
            flight.submit(unlink, keys, then=count_removed)       # beside it, at most 8 at a time
    # leaving the block waits for the last ones; count_removed ran for each, in submission order

``then`` callbacks run on the caller's thread, in submission order, so they may update the job's
tallies and progress without a lock. An error raised by a request is raised on the caller's thread
by the ``submit`` or ``drain`` that hands its result back; the calls still running are waited for,
and no new one starts, so nothing runs on after the job has failed.

The async clients overlap with :func:`agather` (a bounded ``asyncio.gather``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Self, TypeVar

__all__ = ["DEFAULT_IN_FLIGHT", "InFlight", "agather", "batches"]

T = TypeVar("T")

#: requests a job keeps in flight beside its chain: enough to hide a round trip of 20-100 ms behind
#: the chain's own, few enough not to crowd the service or the connection pool (100 connections)
DEFAULT_IN_FLIGHT = 8


def batches(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """``items`` cut into batches of ``size`` (the last one shorter), one request each."""
    return [items[start:start + size] for start in range(0, len(items), size)]


class InFlight:
    """At most ``limit`` calls running on worker threads beside the caller; see the module docs."""

    def __init__(self, limit: int = DEFAULT_IN_FLIGHT) -> None:
        if limit < 1:
            raise ValueError(f"InFlight needs a limit >= 1, got {limit!r}")
        self.limit = limit
        self._pool = ThreadPoolExecutor(limit, thread_name_prefix="svckit-inflight")
        self._queue: deque[tuple[Future[Any], Callable[[Any], Any] | None]] = deque()

    def submit(self, fn: Callable[..., T], *args: Any, then: Callable[[T], Any] | None = None) -> Future[T]:
        """Start ``fn(*args)`` on a worker; first hand back every finished result at the head of the
        queue, and wait for the oldest while ``limit`` calls are running. Returns the call's future,
        for a caller that wants to look at it before it is handed back."""
        self._settle(block=len(self._queue) >= self.limit)
        future = self._pool.submit(fn, *args)
        self._queue.append((future, then))
        return future

    def drain(self) -> None:
        """Wait for every call, handing back their results in order."""
        while self._queue:
            self._settle(block=True)

    @property
    def running(self) -> int:
        """Calls submitted whose results were not handed back yet."""
        return len(self._queue)

    def _settle(self, *, block: bool) -> None:
        while self._queue and (block or self._queue[0][0].done()):
            future, then = self._queue.popleft()
            result = future.result()  # an error leaves the block, whose exit waits for the rest
            if then is not None:
                then(result)
            block = block and len(self._queue) >= self.limit

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            if exc_type is None:
                self.drain()
        finally:
            self._queue.clear()
            # the pool has ``limit`` workers and the queue at most ``limit`` calls, so every call
            # left has started: wait for them, so nothing runs on after the job, even one that failed
            self._pool.shutdown(wait=True)


async def agather(awaitables: Iterable[Awaitable[T]], limit: int = DEFAULT_IN_FLIGHT) -> list[T]:
    """``asyncio.gather`` with at most ``limit`` awaitables running at once; results in order. The
    first error cancels the rest and is raised."""
    if limit < 1:
        raise ValueError(f"agather needs a limit >= 1, got {limit!r}")
    gate = asyncio.Semaphore(limit)

    async def one(item: Awaitable[T]) -> T:
        try:
            async with gate:
                return await item
        finally:
            if asyncio.iscoroutine(item):
                item.close()  # one cancelled before it started is closed, not left "never awaited"

    tasks = [asyncio.ensure_future(one(item)) for item in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
