"""svckit.kv.keyspace's one keyspace walk (``walk_keys`` / ``awalk_keys``): a key SCAN returns twice
is dropped, each step is exactly one SCAN call, cancel stops between two calls with exact counts,
progress hooks get :class:`~svckit.kv.Progress` objects. Fake clients serve fixed SCAN replies so
the counts are exact; ``KV.scan_iter`` / ``AsyncKV.scan_iter`` (walks too) run against the sandbox."""

from __future__ import annotations

import threading
from typing import Any

from svckit.kv import (
    KV,
    AsyncKV,
    KeyScan,
    Progress,
    ascan_keys,
    awalk_keys,
    plan_bulk,
    scan_keys,
    walk_keys,
)
from tests.kv.conftest import afill, fill

#: cursor -> SCAN reply: "b" comes back in the second reply and "a" in the third (as across a rehash)
REPLIES: dict[int, tuple[int, list[str]]] = {0: (7, ["a", "b"]), 7: (9, ["b", "c"]), 9: (0, ["a", "d"])}


class FakeScan:
    """A client whose SCAN serves :data:`REPLIES` (COUNT 2 each) and records every call."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def scan(self, cursor: int = 0, match: Any = None, count: int | None = None, type: str | None = None) -> Any:
        self.calls.append({"cursor": cursor, "match": match, "count": count, "type": type})
        return REPLIES[cursor]

    def dbsize(self) -> int:
        return 5

    @property
    def cursors(self) -> list[int]:
        return [call["cursor"] for call in self.calls]


class AsyncFakeScan(FakeScan):
    async def scan(self, *args: Any, **kw: Any) -> Any:  # type: ignore[override]
        return super().scan(*args, **kw)


def test_the_walk_drops_a_key_scan_returned_twice() -> None:
    steps = list(walk_keys(FakeScan(), "*", count=2))
    assert [new for _, new in steps] == [["a", "b"], ["c"], ["d"]]
    state = steps[-1][0]
    assert state.keys == ["a", "b", "c", "d"] and state.complete and state.calls == 3
    # without de-duplication (flat memory: analysis, scan_iter) the repeats come through, as SCAN sent them
    undeduped = list(walk_keys(FakeScan(), "*", count=2, dedupe=False, keep=False))
    assert [new for _, new in undeduped] == [["a", "b"], ["b", "c"], ["a", "d"]]
    assert undeduped[-1][0].keys == []  # keep=False: only the caller sees the keys


def test_each_step_is_one_scan_call_and_cancel_stops_between_two() -> None:
    fake = FakeScan()
    cancel = threading.Event()
    steps = walk_keys(fake, KeyScan("user:*", "hash", count=2), cancel=cancel)
    assert fake.calls == []  # lazy: nothing is sent before the first step is asked for
    state, new = next(steps)
    assert fake.calls == [{"cursor": 0, "match": "user:*", "count": 2, "type": "hash"}] and new == ["a", "b"]
    state, new = next(steps)
    assert fake.cursors == [0, 7] and new == ["c"]
    cancel.set()
    assert list(steps) == []  # the walk ends before a third SCAN call
    assert fake.cursors == [0, 7]
    assert (state.calls, state.scanned, state.cursor, state.complete) == (2, 4, 9, False)
    assert state.keys == ["a", "b", "c"]
    # the same state carries on from its cursor once the user asks again
    assert [new for _, new in walk_keys(fake, state)] == [["d"]] and state.complete and fake.cursors == [0, 7, 9]


def test_a_cancel_set_before_the_walk_sends_nothing() -> None:
    fake = FakeScan()
    assert list(walk_keys(fake, "*", cancel=lambda: True)) == []
    assert fake.calls == []


def test_scan_keys_stops_at_its_bounds_without_reading_ahead() -> None:
    fake = FakeScan()
    scan = scan_keys(fake, "*", count=2, max_calls=1)  # type: ignore[arg-type]
    assert fake.cursors == [0] and scan.keys == ["a", "b"] and not scan.complete
    scan_keys(fake, scan, limit=3)  # type: ignore[arg-type]
    assert fake.cursors == [0, 7] and scan.keys == ["a", "b", "c"]
    scan_keys(fake, scan, limit=3)  # type: ignore[arg-type]
    assert fake.cursors == [0, 7]  # at the limit already: no call


def test_the_walk_reports_scan_progress_capped_at_the_total() -> None:
    seen: list[Progress] = []
    list(walk_keys(FakeScan(), "*", count=2, total=5, progress=seen.append))
    # COUNT hints add up to 2, 4, 6: capped at DBSIZE (5), and all of it once the scan is complete
    assert seen == [Progress("scan", 2, 5, "keys", "2 matching", 1),
                    Progress("scan", 4, 5, "keys", "3 matching", 2), Progress("scan", 5, 5, "keys", "4 matching", 3)]
    assert seen[-1].fraction == 1.0 and seen[0].text().startswith("scan: 2 of 5 keys · 2 matching · 1 round trip · ")
    assert seen[0].text().endswith("s left") and seen[-1].eta == 0  # the time left at the rate so far
    seen.clear()
    list(walk_keys(FakeScan(), "*", count=2, progress=seen.append))
    assert [(p.done, p.total) for p in seen] == [(2, None), (4, None), (6, None)]


def test_the_dry_run_reports_the_walk_of_dbsize() -> None:
    seen: list[Progress] = []
    plan = plan_bulk(FakeScan(), "*", scan_count=2, progress=seen.append)  # type: ignore[arg-type]
    assert (plan.count, plan.sample, plan.calls, plan.complete) == (4, ["a", "b", "c", "d"], 3, True)
    assert seen == [Progress("scan", 2, 5, "keys", "2 matching", 1),
                    Progress("scan", 4, 5, "keys", "3 matching", 2), Progress("scan", 5, 5, "keys", "4 matching", 3)]
    seen.clear()
    plan_bulk(FakeScan(), "*", scan_count=2, total=3, progress=seen.append)  # type: ignore[arg-type]
    assert [(p.done, p.total) for p in seen] == [(2, 3), (3, 3), (3, 3)]  # a DBSIZE the caller read
    cancelled = plan_bulk(FakeScan(), "*", scan_count=2, progress=False, cancel=lambda: True)  # type: ignore[arg-type]
    assert (cancelled.count, cancelled.calls, cancelled.complete) == (0, 0, False)


async def test_the_async_walk_drops_repeats_and_stops_on_cancel() -> None:
    steps = [new async for _, new in awalk_keys(AsyncFakeScan(), "*", count=2)]
    assert steps == [["a", "b"], ["c"], ["d"]]
    fake = AsyncFakeScan()
    cancel = threading.Event()
    seen: list[Progress] = []
    walk = awalk_keys(fake, "*", count=2, cancel=cancel, progress=seen.append)
    async for state, _ in walk:
        cancel.set()
    assert fake.cursors == [0] and (state.calls, state.keys, state.complete) == (1, ["a", "b"], False)
    assert walk.cancelled and walk.requests == 1 and state.cancelled
    assert seen == [Progress("scan", 2, None, "keys", "2 matching", 1)]
    scan = await ascan_keys(AsyncFakeScan(), "*", count=2, limit=3)  # type: ignore[arg-type]
    assert scan.keys == ["a", "b", "c"] and scan.calls == 2


def test_scan_iter_yields_every_key(kv: KV[str]) -> None:
    keys = {f"user:{i}" for i in range(2500)} | {f"other:{i}" for i in range(40)}
    fill(kv, {k: "v" for k in keys})
    kv.rpush("list:1", "x")
    iterator = kv.scan_iter(count=100)
    assert next(iterator) in keys | {"list:1"}
    seen = list(kv.scan_iter(count=100))
    assert len(seen) == len(set(seen)) and set(seen) == keys | {"list:1"}
    assert set(kv.scan_iter("user:*")) == {k for k in keys if k.startswith("user:")}
    assert list(kv.scan_iter(type="list")) == ["list:1"]


async def test_async_scan_iter_yields_every_key(akv: AsyncKV[str]) -> None:
    await afill(akv, {f"k{i}": "v" for i in range(700)})
    assert {key async for key in akv.scan_iter("k*", count=50)} == {f"k{i}" for i in range(700)}


def test_a_progress_line_says_round_trips_and_the_time_left() -> None:
    step = Progress("scan", 3, 10, "keys", "2 matching", round_trips=1, eta=125.4)
    assert step.text() == "scan: 3 of 10 keys · 2 matching · 1 round trip · 2 min 05 s left"
    assert Progress("describe", 5, None, round_trips=12).text() == "describe: 5 · 12 round trips"


def test_a_cancelled_walk_says_so_on_its_run_and_its_scan_state() -> None:
    cancel = threading.Event()
    steps = walk_keys(FakeScan(), "*", count=2, cancel=cancel)
    state, _ = next(steps)
    cancel.set()
    assert list(steps) == [] and steps.cancelled and state.cancelled and not state.complete
    assert steps.requests == 1  # one SCAN call in this walk
    assert scan_keys(FakeScan(), "*", cancel=lambda: True).cancelled
    assert not scan_keys(FakeScan(), "*", limit=1).cancelled  # stopped by its limit, not cancelled
    plan = plan_bulk(FakeScan(), "*", progress=False, cancel=lambda: True)  # type: ignore[arg-type]
    assert plan.cancelled and not plan.complete


class FakeElements:
    """A client whose HSCAN serves three pages of two fields from cursor 0, recording the cursors."""

    def __init__(self) -> None:
        self.cursors: list[int] = []
        self.pages = {0: (4, {"f0": "0", "f1": "1"}), 4: (8, {"f2": "2", "f3": "3"}), 8: (0, {"f4": "4", "f5": "5"})}

    def hscan(self, key: Any, cursor: int = 0, match: Any = None, count: int | None = None) -> Any:
        self.cursors.append(cursor)
        return self.pages[cursor]


def test_scan_iters_stop_at_their_limit_and_on_cancel_with_progress() -> None:
    fake = FakeElements()
    seen: list[Progress] = []
    fields = KV._scan_elements(fake, "hscan", "h", None, None, seen.append, None, 3)  # type: ignore[arg-type]
    assert list(fields) == [("f0", "0"), ("f1", "1"), ("f2", "2")]
    assert fake.cursors == [0, 4] and not fields.complete  # 2 HSCAN calls, not 3
    assert [(p.done, p.round_trips, p.unit) for p in seen] == [(2, 1, "fields"), (3, 2, "fields")]
    fake = FakeElements()
    calls = iter([False, True])
    stopped = KV._scan_elements(fake, "hscan", "h", None, None, False, lambda: next(calls), None)  # type: ignore[arg-type]
    assert dict(stopped) == {"f0": "0", "f1": "1"} and stopped.cancelled and fake.cursors == [0]
    fake = FakeScan()
    keys = KV.scan_iter(fake, count=2, limit=3)  # type: ignore[arg-type]
    assert list(keys) == ["a", "b", "b"] and len(fake.calls) == 2 and keys.count == 3
