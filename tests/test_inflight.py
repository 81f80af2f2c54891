"""svckit._inflight: requests side by side, bounded, handed back in the order they were asked for."""

from __future__ import annotations

import asyncio
import threading
import warnings

import pytest

from svckit._inflight import InFlight, agather


class Gauge:
    """Counts the calls running at once (synchronised by a lock, no sleeps)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0

    def __enter__(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.now -= 1


def test_results_come_back_in_submission_order_on_the_caller_s_thread() -> None:
    first_may_end = threading.Event()
    seen: list[tuple[int, str]] = []

    def call(i: int) -> int:
        if i == 0:
            assert first_may_end.wait(10)  # the first call ends last ...
        elif i == 3:
            first_may_end.set()
        return i

    caller = threading.current_thread().name
    with InFlight(limit=4) as flight:
        for i in range(4):
            flight.submit(call, i, then=lambda r: seen.append((r, threading.current_thread().name)))
    assert seen == [(0, caller), (1, caller), (2, caller), (3, caller)]  # ... and is handed back first


def test_no_more_than_limit_calls_run_at_once() -> None:
    gauge, release = Gauge(), threading.Semaphore(0)

    def call(i: int) -> int:
        with gauge:
            release.acquire(timeout=10)
        return i

    done: list[int] = []
    with InFlight(limit=3) as flight:
        for i in range(10):
            release.release()
            flight.submit(call, i, then=done.append)
            assert flight.running <= 3
    assert done == list(range(10)) and 1 <= gauge.most <= 3


def test_an_error_is_raised_to_the_caller_and_nothing_runs_after_it() -> None:
    ran: list[int] = []
    gate = threading.Event()

    def call(i: int) -> int:
        if i == 1:
            raise ValueError("batch 1 failed")
        gate.wait(10)
        ran.append(i)
        return i

    with pytest.raises(ValueError, match="batch 1 failed"), InFlight(limit=2) as flight:
        flight.submit(call, 0)
        flight.submit(call, 1)
        gate.set()
        for i in range(2, 50):
            flight.submit(call, i)
    assert ran == [0]  # the other call running when it failed; none was started after it
    assert not [t for t in threading.enumerate() if t.name.startswith("svckit-inflight")]  # none left running


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="limit >= 1"):
        InFlight(limit=0)


async def test_agather_keeps_order_and_its_bound() -> None:
    running = most = 0

    async def call(i: int) -> int:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0)  # let the others start, if the gate lets them
        await asyncio.sleep(0)
        running -= 1
        return i

    assert await agather((call(i) for i in range(20)), limit=4) == list(range(20))
    assert most == 4


async def test_agather_cancels_the_rest_on_an_error_and_leaves_no_coroutine_unawaited() -> None:
    started: list[int] = []

    async def call(i: int) -> int:
        started.append(i)
        await asyncio.sleep(0)
        if i == 0:
            raise ValueError("first failed")
        await asyncio.Event().wait()  # would wait for ever unless cancelled
        return i

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would fail the test
        with pytest.raises(ValueError, match="first failed"):
            await agather((call(i) for i in range(10)), limit=2)
    assert len(started) <= 3
