"""The keyspace walk's rules as a caller sees them: the keys each step yields, the SCAN calls sent,
where a resumed scan carries on and what it remembers, the counts and progress it reports.

A fake client serves fixed SCAN replies (COUNT is not honoured: the replies are the script) and
records every call, so the keys and counts are exact.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from svckit.errors import InvalidArgument
from svckit.kv import KeyScan, Progress, ascan_keys, awalk_keys, scan_keys, walk_keys
from svckit.kv.keyspace import SCAN_COUNT

#: cursor -> reply; "b" comes back at cursor 5 and "a" at 8, as SCAN may across a rehash; the server's
#: cursors arrive as text, as the REST interface sends them
SCRIPT: dict[int, tuple[Any, list[str]]] = {0: ("5", ["a", "b"]), 5: ("8", ["b", "c"]), 8: ("0", ["a", "d"])}


class Fake:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def scan(self, cursor: int = 0, match: Any = None, count: int | None = None, type: str | None = None) -> Any:
        self.calls.append({"cursor": cursor, "match": match, "count": count, "type": type})
        return SCRIPT[cursor]


class AsyncFake(Fake):
    async def scan(self, *args: Any, **kw: Any) -> Any:  # type: ignore[override]
        return super().scan(*args, **kw)


def yielded(steps: Any) -> list[list[str]]:
    return [list(new) for _, new in steps]


def test_a_resumed_scan_remembers_the_keys_it_had() -> None:
    # a scan saved after its first call (keys a, b; cursor 5), made again from its fields
    resumed = KeyScan("*", keys=["a", "b"], cursor=5, calls=1, scanned=2)
    fake = Fake()
    assert yielded(walk_keys(fake, resumed)) == [["c"], ["d"]]  # b and a again are not new
    assert resumed.keys == ["a", "b", "c", "d"] and resumed.complete and resumed.calls == 3
    assert [c["cursor"] for c in fake.calls] == [5, 8]


def test_a_resumed_scan_counts_what_it_had_in_its_progress() -> None:
    seen: list[Progress] = []
    resumed = KeyScan("*", keys=["a", "b"], cursor=5, calls=1, scanned=2, count=2)
    list(walk_keys(Fake(), resumed, total=10, progress=seen.append))
    assert seen == [Progress("scan", 4, 10, "keys", "3 matching", 2), Progress("scan", 10, 10, "keys", "4 matching", 3)]


def test_the_scan_calls_sent() -> None:
    fake = Fake()
    list(walk_keys(fake, KeyScan("user:*", "hash", count=50)))
    assert fake.calls == [{"cursor": 0, "match": "user:*", "count": 50, "type": "hash"},
                          {"cursor": 5, "match": "user:*", "count": 50, "type": "hash"},
                          {"cursor": 8, "match": "user:*", "count": 50, "type": "hash"}]
    fake = Fake()
    list(walk_keys(fake, KeyScan("", "", count=50), count=7))  # empty match and type: not sent
    assert fake.calls[0] == {"cursor": 0, "match": None, "count": 7, "type": None}
    fake = Fake()
    list(walk_keys(fake, None))
    assert fake.calls[0] == {"cursor": 0, "match": None, "count": SCAN_COUNT, "type": None}
    fake = Fake()
    list(walk_keys(fake, "k*", type="set", count=3))
    assert fake.calls[-1] == {"cursor": 8, "match": "k*", "count": 3, "type": "set"}
    fake = Fake()
    list(walk_keys(fake, "k*"))
    assert fake.calls[0]["count"] == 1000 == SCAN_COUNT


def test_a_scan_needs_a_count_of_at_least_one() -> None:
    with pytest.raises(InvalidArgument, match=r"^count: KeyScan needs a COUNT >= 1, got 0$"):
        KeyScan(count=0)
    assert KeyScan(count=1).count == 1


def test_each_reply_moves_the_cursor_and_adds_its_count_hint() -> None:
    scan = KeyScan("*", count=10)
    assert scan.feed(SCRIPT[0]) == 2
    assert (scan.cursor, scan.calls, scan.scanned, scan.complete) == (5, 1, 10, False)
    assert scan.feed(SCRIPT[5], count=4) == 1  # "b" again: one new key
    assert (scan.cursor, scan.calls, scan.scanned, scan.complete, scan.keys) == (8, 2, 14, False, ["a", "b", "c"])
    assert scan.feed(SCRIPT[8]) == 1
    assert (scan.cursor, scan.calls, scan.scanned, scan.complete) == (0, 3, 24, True)


def test_a_step_without_dedupe_or_keep() -> None:
    scan = KeyScan("*")
    assert scan.step(("5", ["a", "a", "b"]), dedupe=False, keep=False) == ["a", "a", "b"] and scan.keys == []
    assert scan.step(("8", ["a", "b", "b", "c"])) == ["a", "b", "c"] and scan.keys == ["a", "b", "c"]
    assert scan.step(("0", ["c", "d"]), keep=False) == ["d"] and scan.keys == ["a", "b", "c"]
    assert scan.step(("0", ["d", "e"])) == ["e"]  # the seen-set held d although it was not kept


def test_keys_walked_capped_at_the_total_and_all_of_it_once_complete() -> None:
    scan = KeyScan("*", count=10)
    assert scan.walked() == 0 and scan.walked(5) == 0
    scan.feed(SCRIPT[0])
    assert scan.walked() == 10 and scan.walked(25) == 10 and scan.walked(6) == 6 and scan.walked(10) == 10
    scan.feed(SCRIPT[5])
    scan.feed(SCRIPT[8])
    assert scan.walked() == 30 and scan.walked(100) == 100 and scan.walked(0) == 0


def test_wants_more_until_complete_limit_or_calls() -> None:
    scan = KeyScan("*", keys=["a", "b"])
    assert scan.wants_more(None, 0, None) and scan.wants_more(3, 4, 5)
    assert not scan.wants_more(2, 0, None) and not scan.wants_more(1, 0, None)
    assert not scan.wants_more(None, 5, 5) and not scan.wants_more(None, 6, 5)
    scan.complete = True
    assert not scan.wants_more(None, 0, None)


def test_scan_keys_bounds_count_the_calls_of_this_run() -> None:
    fake = Fake()
    scan = scan_keys(fake, "*", max_calls=1)
    assert scan.keys == ["a", "b"] and scan.calls == 1
    assert scan_keys(fake, scan, max_calls=1) is scan  # one more call in this run, though two in all
    assert scan.keys == ["a", "b", "c"] and scan.calls == 2
    scan_keys(fake, scan, limit=1)
    assert scan.calls == 2  # the limit was reached already
    scan_keys(fake, scan)
    assert scan.complete and scan.keys == ["a", "b", "c", "d"] and len(fake.calls) == 3
    scan_keys(fake, scan)
    assert len(fake.calls) == 3  # complete: nothing more to send
    assert scan_keys(Fake(), "*", limit=4).keys == ["a", "b", "c", "d"]
    assert scan_keys(Fake(), "*", limit=3).keys == ["a", "b", "c"]


def test_scan_keys_passes_its_type_count_total_and_progress() -> None:
    fake = Fake()
    seen: list[Progress] = []
    scan = scan_keys(fake, "k*", type="zset", count=2, total=9, progress=seen.append)
    assert fake.calls[0] == {"cursor": 0, "match": "k*", "count": 2, "type": "zset"}
    assert [p.done for p in seen] == [2, 4, 9] and [p.total for p in seen] == [9, 9, 9] and scan.complete


def test_scan_keys_stops_on_cancel() -> None:
    fake = Fake()
    assert scan_keys(fake, "*", cancel=lambda: True).calls == 0 and fake.calls == []


def test_the_walk_asks_a_callable_total_at_every_step() -> None:
    totals = iter([None, 7, 7])
    seen: list[Progress] = []
    list(walk_keys(Fake(), "*", count=3, total=lambda: next(totals), progress=seen.append))
    assert [(p.done, p.total) for p in seen] == [(3, None), (6, 7), (7, 7)]
    assert [p.round_trips for p in seen] == [1, 2, 3] and [p.note for p in seen][-1] == "4 matching"


def test_a_cancel_between_steps_ends_the_walk() -> None:
    cancel = threading.Event()
    fake = Fake()
    for state, _ in walk_keys(fake, "*", cancel=cancel):
        cancel.set()
    assert len(fake.calls) == 1 and not state.complete


async def test_the_async_walk_and_scan_follow_the_same_rules() -> None:
    resumed = KeyScan("*", keys=["a", "b"], cursor=5, calls=1, scanned=2, count=2)
    seen: list[Progress] = []
    fake = AsyncFake()
    steps = [list(new) async for _, new in awalk_keys(fake, resumed, total=10, progress=seen.append)]
    assert steps == [["c"], ["d"]] and resumed.keys == ["a", "b", "c", "d"]
    assert seen == [Progress("scan", 4, 10, "keys", "3 matching", 2), Progress("scan", 10, 10, "keys", "4 matching", 3)]
    fake = AsyncFake()
    undeduped = [list(new) async for _, new in awalk_keys(fake, "u*", type="list", count=2, dedupe=False,
                                                           keep=False)]
    assert undeduped == [["a", "b"], ["b", "c"], ["a", "d"]]
    assert fake.calls[0] == {"cursor": 0, "match": "u*", "count": 2, "type": "list"}
    cancel = threading.Event()
    async for state, _ in awalk_keys(AsyncFake(), "*", cancel=cancel):
        cancel.set()
    assert state.calls == 1 and not state.complete
    fake = AsyncFake()
    seen.clear()
    scan = await ascan_keys(fake, "k*", type="hash", count=2, max_calls=2, total=9, progress=seen.append)
    assert scan.keys == ["a", "b", "c"] and scan.calls == 2 and [p.done for p in seen] == [2, 4]
    assert fake.calls[0] == {"cursor": 0, "match": "k*", "count": 2, "type": "hash"}
    assert (await ascan_keys(fake, scan, max_calls=1)).complete
    assert (await ascan_keys(AsyncFake(), "*", limit=2)).keys == ["a", "b"]
    assert (await ascan_keys(AsyncFake(), "*", cancel=lambda: True)).calls == 0


def test_by_default_every_key_and_no_progress_bar(capsys) -> None:
    fake = Fake()
    assert [k for _, new in walk_keys(fake) for k in new] == ["a", "b", "c", "d"]
    assert fake.calls[0]["match"] == "*"
    fake = Fake()
    assert scan_keys(fake).keys == ["a", "b", "c", "d"] and fake.calls[0]["match"] == "*"
    assert capsys.readouterr() == ("", "")


async def test_by_default_the_async_walk_is_every_key_and_no_progress_bar(capsys) -> None:
    fake = AsyncFake()
    assert [k async for _, new in awalk_keys(fake) for k in new] == ["a", "b", "c", "d"]
    assert fake.calls[0]["match"] == "*"
    fake = AsyncFake()
    assert (await ascan_keys(fake)).keys == ["a", "b", "c", "d"] and fake.calls[0]["match"] == "*"
    assert capsys.readouterr() == ("", "")


def test_a_run_count_overrides_the_scans_for_that_run_only() -> None:
    fake = Fake()
    scan = KeyScan("*", count=50)
    list(walk_keys(fake, scan, count=2))
    assert [c["count"] for c in fake.calls] == [2, 2, 2] and scan.scanned == 6 and scan.count == 50
    fake = Fake()
    scan = scan_keys(fake, KeyScan("*", count=50), count=2, max_calls=1)
    assert fake.calls[0]["count"] == 2 and scan.scanned == 2
    scan_keys(fake, scan)
    assert [c["count"] for c in fake.calls] == [2, 50, 50] and scan.scanned == 102


def test_a_new_scan_keeps_the_count_it_was_made_with() -> None:
    fake = Fake()
    scan = scan_keys(fake, "*", count=3, max_calls=1)
    assert scan.count == 3
    scan_keys(fake, scan)  # carried on without a count: the scan's own
    assert [c["count"] for c in fake.calls] == [3, 3, 3]
    state, _ = next(walk_keys(Fake(), "*", count=4))
    assert state.count == 4


def test_max_calls_counts_every_call_of_the_run() -> None:
    fake = Fake()
    assert scan_keys(fake, "*", max_calls=2).calls == 2 and len(fake.calls) == 2


async def test_the_async_run_count_and_bounds() -> None:
    fake = AsyncFake()
    scan = KeyScan("*", count=50)
    async for _ in awalk_keys(fake, scan, count=2):
        pass
    assert [c["count"] for c in fake.calls] == [2, 2, 2] and scan.scanned == 6
    fake = AsyncFake()
    scan = await ascan_keys(fake, KeyScan("*", count=50), count=2, max_calls=2)
    assert [c["count"] for c in fake.calls] == [2, 2] and scan.scanned == 4 and scan.calls == 2
    fake = AsyncFake()
    scan = await ascan_keys(fake, "*", count=3, max_calls=1)
    await ascan_keys(fake, scan)
    assert [c["count"] for c in fake.calls] == [3, 3, 3] and scan.count == 3
    state = None
    async for state, _ in awalk_keys(AsyncFake(), "*", count=4):
        break
    assert state is not None and state.count == 4
    seen: list[Progress] = []
    await ascan_keys(AsyncFake(), "*", count=2, total=5, progress=seen.append)
    assert [(p.done, p.total) for p in seen] == [(2, 5), (4, 5), (5, 5)]
