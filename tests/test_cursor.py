"""The one cursor loop (svckit._cursor): following cursors, ``limit``, ``cancel`` and progress, and
every ``iter_*`` of the clients running through it with those three arguments."""

from __future__ import annotations

import inspect
import threading

import pytest

from svckit._cursor import Pages, alisting, listing
from svckit._progress import Progress
from svckit.errors import InvalidArgument


class _Page:
    def __init__(self, runs: list[int], cursor: str | None) -> None:
        self.runs, self.cursor = runs, cursor


PAGES = {None: _Page([1, 2], "b"), "b": _Page([3], "c"), "c": _Page([4, 5], None)}


def counted(asked: list[object]):
    def fetch(cursor: str | None) -> _Page:
        asked.append(cursor)
        return PAGES[cursor]
    return fetch


def test_a_listing_follows_cursors_to_the_page_without_one():
    asked: list[object] = []
    runs = listing(counted(asked), Pages("runs"))
    assert list(runs) == [1, 2, 3, 4, 5]
    assert asked == [None, "b", "c"]
    assert runs.complete and not runs.cancelled and runs.count == 5 and runs.requests == 3


def test_tuple_pages_from_a_start_cursor_until_scan_returns_zero(capsys):
    scan = {0: (7, ["a", "b"]), 7: (9, []), 9: (0, ["c"])}
    asked: list[int] = []

    def fetch(cursor: int) -> tuple[int, list[str]]:
        asked.append(cursor)
        return scan[cursor]

    keys = listing(fetch, Pages(lambda page: page[1], lambda page: page[0], start=0))
    assert list(keys) == ["a", "b", "c"] and asked == [0, 7, 9]
    assert capsys.readouterr().err == ""  # no progress bar unless asked for
    seen: list[Progress] = []
    list(listing(fetch, Pages(lambda page: page[1], lambda page: page[0], start=0, progress=seen.append)))
    assert {p.unit for p in seen} == {"items"}  # items read by a function: counted as "items"


def test_a_listing_is_lazy_and_its_progress_bar_counts_the_items(capsys):
    fetched: list[object] = []
    items = listing(counted(fetched), Pages("runs", progress=True))
    assert fetched == []
    assert next(items) == 1 and fetched == [None]
    assert list(items) == [2, 3, 4, 5]
    last_state = capsys.readouterr().err.strip().split("\r")[-1]
    assert last_state.startswith("runs: 5 runs ")


def test_progress_reports_the_items_and_round_trips_after_every_page():
    seen: list[Progress] = []
    assert list(listing(counted([]), Pages("runs", progress=seen.append))) == [1, 2, 3, 4, 5]
    # one page a request, one after another: the round trips so far
    assert seen == [Progress("runs", 2, None, "runs", round_trips=1),
                    Progress("runs", 3, None, "runs", round_trips=2),
                    Progress("runs", 5, None, "runs", round_trips=3)]


def test_limit_stops_early_without_asking_for_another_page():
    asked: list[object] = []
    runs = listing(counted(asked), Pages("runs", limit=3))
    assert list(runs) == [1, 2, 3]
    assert asked == [None, "b"]  # 2 requests, not 3: the third page is never asked for
    assert not runs.complete and not runs.cancelled and runs.count == 3
    cut: list[object] = []
    assert list(listing(counted(cut), Pages("runs", limit=1))) == [1] and cut == [None]  # the page cut
    none: list[object] = []
    nothing = listing(counted(none), Pages("runs", limit=0))
    assert list(nothing) == [] and none == [] and not nothing.cancelled
    exact = listing(counted([]), Pages("runs", limit=5))
    assert list(exact) == [1, 2, 3, 4, 5] and exact.complete  # the limit cut nothing
    with pytest.raises(InvalidArgument, match=r"must be >= 0 \(None: all\), got -1") as refused:
        Pages("runs", limit=-1)
    assert refused.value.argument == "limit"


def test_cancel_stops_between_pages_keeps_what_was_read_and_says_so():
    fetched: list[object] = []
    stop = threading.Event()

    def fetch(cursor: str | None) -> _Page:
        fetched.append(cursor)
        stop.set()  # cancelled while the first page was on its way
        return PAGES[cursor]

    runs = listing(fetch, Pages("runs", cancel=stop))
    assert list(runs) == [1, 2]  # the page in hand, no further request
    assert fetched == [None]
    assert runs.cancelled and not runs.complete and runs.count == 2


def test_closing_a_listing_sends_no_further_request_and_closes_its_bar():
    asked: list[object] = []
    pages = Pages("runs", progress=True)
    runs = listing(counted(asked), pages)
    assert next(runs) == 1
    runs.close()
    assert list(runs) == [] and asked == [None] and pages.report._bar is None


async def test_the_async_twin_follows_limits_and_cancels_alike():
    async def fetch(cursor: str | None) -> _Page:
        return PAGES[cursor]

    assert [item async for item in alisting(fetch, Pages("runs"))] == [1, 2, 3, 4, 5]
    seen: list[Progress] = []
    runs = alisting(fetch, Pages("runs", progress=seen.append, cancel=lambda: len(seen) == 2))
    assert [item async for item in runs] == [1, 2, 3]
    assert [p.done for p in seen] == [2, 3] and runs.cancelled and runs.requests == 2
    limited = alisting(fetch, Pages("runs", limit=4))
    assert [item async for item in limited] == [1, 2, 3, 4] and limited.requests == 3 and not limited.complete  # the last page, cut


def _iter_methods():
    from svckit.kv.client import KV, AsyncKV
    from svckit.queue.client import AsyncQueue, Queue
    from svckit.vector.client import AsyncVector, Vector

    for cls in (Queue, AsyncQueue):
        for name in ("iter_runs", "iter_dlq", "iter_events"):
            yield cls, name
    for cls in (Vector, AsyncVector):
        yield cls, "iter_range"
    for cls in (KV, AsyncKV):
        for name in ("scan_iter", "hscan_iter", "sscan_iter", "zscan_iter"):
            yield cls, name


@pytest.mark.parametrize(("cls", "name"), list(_iter_methods()), ids=lambda x: getattr(x, "__name__", x))
def test_every_iter_method_takes_progress_cancel_and_limit(cls, name):
    params = inspect.signature(getattr(cls, name)).parameters
    assert {"progress", "cancel", "limit"} <= set(params), f"{cls.__name__}.{name}"
