"""Far from the service, the widgets' first screens over real HTTP against the sandbox, counted in
requests and in round trips one after another: the Browse tab describes the index, reads its first
page and lists the ids its map samples side by side, then fetches the sample (two round trips); the
timeline loads runs a page of 10 a request, and the DLQ beside them (100 entries a request);
the account dashboard is one request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from svckit.account import Account
from svckit.queue import Queue
from svckit.sandbox import Sandbox
from svckit.sandbox.plans import PLAN_PRESETS
from svckit.vector import Vector
from svckit.widgets import AccountDashboard, VectorPlayground, WorkflowTimeline
from tests.counting import CountingTransport
from tests.runs import boom, finish_runs

NS = "browse-round-trips"
RECORDS = 60


@pytest.fixture(scope="module")
def browsed(vector_sandbox: Sandbox) -> Sandbox:
    with Vector.from_settings(vector_sandbox.settings, kind="nomodel") as raw:
        raw.upsert([{"id": f"b{i:03d}", "vector": [1.0] * 383 + [i / RECORDS],
                     "metadata": {"group": f"g{i % 3}"}} for i in range(RECORDS)], namespace=NS)
    return vector_sandbox


@pytest.fixture
def counted_playground(browsed: Sandbox) -> Iterator[tuple[VectorPlayground, CountingTransport]]:
    transport = CountingTransport()
    with Vector.from_settings(browsed.settings, kind="nomodel", transport=transport) as client:
        yield VectorPlayground({"dense": client}, index_kind="dense", autorun=False), transport


def operations(transport: CountingTransport) -> list[str]:
    return [path.split("/")[3] for path in transport.paths()]


def test_browse_shows_its_first_page_and_map_in_two_round_trips(counted_playground) -> None:
    pg, transport = counted_playground
    transport.clear(hold=3)
    page = pg.browse(NS)
    assert list(page["id"]) == [f"b{i:03d}" for i in range(25)] and pg.map_count == RECORDS
    assert NS in pg.browse_tab.w_browse_info.value and NS in pg.namespace_names
    # info (the namespaces and their counts), the first page, the ids to sample: side by side;
    # then the sample's vectors
    first, then = operations(transport)[:3], operations(transport)[3:]
    assert sorted(first) == ["info", "range", "range"] and then == ["fetch"]
    assert transport.peak == 3 and transport.round_trips == 2

    transport.clear()
    pg.next_page()  # a page is one request
    assert operations(transport) == ["range"] and pg.browse_count == 50

    transport.clear(hold=2)
    pg.browse(NS)  # the map is drawn already: describing and the first page only, one round trip
    assert sorted(operations(transport)) == ["info", "range"] and transport.round_trips == 1


@pytest.fixture
def runner(queue_sandbox: Sandbox) -> Any:
    return queue_sandbox.area("queue").runner  # type: ignore[attr-defined]



def test_the_timeline_loads_runs_ten_a_request_and_the_dlq_beside_them(queue_sandbox: Sandbox, runner) -> None:
    finish_runs(runner, "https://example.test/ok", 95, lambda context: context.run("step", lambda: 1))
    finish_runs(runner, "https://example.test/fails", 5, lambda context: context.run("step", boom), retries=0)
    transport = CountingTransport(hold=2)  # the first two requests wait for each other: side by side
    with Queue.from_settings(queue_sandbox.settings, transport=transport) as queue:
        w = WorkflowTimeline(queue)
    assert w.run_count == 100 and w.pages_loaded == 10 and w.dlq_count == 5
    logs = [r for r in transport.requests if r.url.path == "/queue/v2/workflows/logs"]
    dlq = [r for r in transport.requests if r.url.path == "/queue/v2/dlq"]
    assert len(logs) == 10 and len(dlq) == 1 and len(transport.requests) == 11
    assert {r.url.params["count"] for r in logs} == {"10"} and dlq[0].url.params["count"] == "100"
    # the DLQ's request went beside the first page of runs: no round trip of its own
    assert transport.peak == 2 and transport.round_trips == 10
    assert w.w_progress_label.value == "100 runs · 10 round trips"


def test_the_dlq_panel_reads_a_hundred_entries_a_request(queue_sandbox: Sandbox, runner) -> None:
    finish_runs(runner, "https://example.test/fails", 150, lambda context: context.run("step", boom), retries=0)
    transport = CountingTransport()
    with Queue.from_settings(queue_sandbox.settings, transport=transport) as queue:
        assert len(WorkflowTimeline(queue, autoload=False).load_dlq()) == 150
    assert len(transport.requests) == 2 and {r.url.params["count"] for r in transport.requests} == {"100"}


def test_the_account_dashboard_loads_record_and_usage_in_one_round_trip(queue_sandbox: Sandbox) -> None:
    transport = CountingTransport(hold=2)
    with Account.from_settings(queue_sandbox.settings, transport=transport) as account:
        # its queue account page (the first page's resources: tests/account/test_dashboard_overview.py)
        w = AccountDashboard(account, presets=PLAN_PRESETS, page="queue")
    assert w.account is not None and w.usage is not None
    assert sorted(transport.paths()) == ["/devapi/v2/qstash/stats", "/devapi/v2/queue/user"]
    assert transport.round_trips == 1
