"""FakeQueue (fakes.py) answers like the real client on the sandbox, for what the timeline asks.

Each test makes a small set of runs on the sandbox (URLs of its own), copies them and their DLQ entries
into a FakeQueue, runs ONE scenario function against both backends and compares what they answered:
paging (page sizes, cursors chained to the end), every filter the timeline sends (and
``workflow_created_at``), the DLQ's pages, resume and restart with their overrides read back from the
new runs, and the errors of unknown ids and cursors."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from svckit.errors import SvcError
from svckit.queue import Queue
from svckit.sandbox import Sandbox
from tests.widgets.fakes import FakeQueue
from tests.widgets.timeline_runs import BASE, Workflows, key

N = 14  # run i fails when i % 4 == 1 (4 of them); label nightly when i odd; URL b when i % 3 == 0


@pytest.fixture(scope="module")
def real(timeline_sandbox: Sandbox) -> Iterator[Queue]:
    with Queue.from_settings(timeline_sandbox.settings) as q:
        yield q


class Data:
    def __init__(self, flows: Workflows, real: Queue) -> None:
        token = uuid.uuid4().hex[:8]
        self.urls = (f"{BASE}/parity/{token}/a", f"{BASE}/parity/{token}/b")
        for url in self.urls:
            flows.runner.register(url, flows.steps)
        handles = [flows.steps_run(fail=i % 4 == 1, url=self.urls[i % 3 == 0],
                                   label="nightly" if i % 2 else "adhoc") for i in range(N)]
        for handle in handles:
            flows.finish(handle)
        # oldest first, as they were made (the service lists them newest first, ties by the order made):
        # the fake takes the order of its list as the order the runs were made
        self.runs = [r for url in self.urls for r in reversed(list(real.iter_runs(workflow_url=url)))]
        self.dlq = [m for url in self.urls for m in real.iter_dlq(workflow_url=url)]
        assert len(self.runs) == N and len(self.dlq) == 4

    def fake(self) -> FakeQueue:
        """What the sandbox holds for these runs, in a FakeQueue (runs carry their DLQ ids there too)."""
        return FakeQueue(self.runs, dlq=self.dlq, dlq_ids_on_runs=True)


@pytest.fixture
def data(flows: Workflows, real: Queue) -> Data:
    return Data(flows, real)


def error_of(call: Callable[[], Any]) -> str:
    try:
        call()
    except SvcError as exc:
        return type(exc).__name__
    return "no error"


def chain(page: Callable[[str | None], Any], items: str) -> tuple[list[list[Any]], list[str]]:
    """Follow the cursors to the end: the pages' items, and the cursors as their types (opaque strings)."""
    pages, cursors, cursor = [], [], None
    while True:
        got = page(cursor)
        pages.append(getattr(got, items))
        if got.cursor is None:
            return pages, cursors
        cursors.append(type(got.cursor).__name__)
        cursor = got.cursor


# -- the scenarios: each gets a client (fake or real) and the data, and returns what it saw --------------
def paging(q: Any, d: Data) -> dict:
    out: dict[str, Any] = {}
    for count in (1, 3, 10):
        pages, cursors = chain(lambda c, count=count: q.workflow_logs(workflow_url=d.urls[0], count=count, cursor=c),
                               "runs")
        out[f"logs count={count}"] = ([len(p) for p in pages], [key(r) for p in pages for r in p], cursors)
    pages, _ = chain(lambda c: q.workflow_logs(workflow_url=d.urls[0], cursor=c), "runs")  # the default page
    out["logs default"] = [len(p) for p in pages]
    for count in (1, 3, 100):
        pages, cursors = chain(lambda c, count=count: q.dlq(cursor=c, count=count, workflow_url=d.urls[0]),
                               "messages")
        out[f"dlq count={count}"] = ([len(p) for p in pages], [m.dlq_id for p in pages for m in p], cursors)
    out["a cursor the service did not give"] = error_of(lambda: q.workflow_logs(cursor="10", count=3))
    out["count over the maximum"] = error_of(lambda: q.workflow_logs(count=11))
    return out


def filters(q: Any, d: Data) -> dict:
    ordered = sorted(d.runs, key=lambda r: r.workflow_run_created_at)
    middle = ordered[len(ordered) // 2]
    one = {"workflow_run_id": middle.workflow_run_id}
    cases: dict[str, dict[str, Any]] = {
        "none": {}, "state failed": {"state": "RUN_FAILED"}, "state success": {"state": "RUN_SUCCESS"},
        "label": {"label": "nightly"}, "run id": one,
        "created at": {"workflow_created_at": middle.workflow_run_created_at},
        "created at of another run": {**one, "workflow_created_at": ordered[0].workflow_run_created_at},
        "from": {"from_date": middle.workflow_run_created_at}, "to": {"to_date": middle.workflow_run_created_at},
        "from and to": {"from_date": ordered[2].workflow_run_created_at,
                        "to_date": middle.workflow_run_created_at},
        "all the timeline sends": {"state": "RUN_SUCCESS", "label": "adhoc",
                                   "from_date": ordered[1].workflow_run_created_at,
                                   "to_date": ordered[-2].workflow_run_created_at},
    }
    out = {}
    for name, f in cases.items():
        for url in d.urls:  # (the real sandbox holds other tests' runs too: each list is kept to these URLs)
            pages, _ = chain(lambda c, f=f, url=url: q.workflow_logs(workflow_url=url, count=3, cursor=c, **f), "runs")
            out[f"{name} @ {url[-1]}"] = [key(r) for p in pages for r in p]
    out["from after to"] = error_of(lambda: q.workflow_logs(from_date=2, to_date=1))
    out["unknown state"] = error_of(lambda: q.workflow_logs(state="RUN_LOST"))
    return out


def config(q: Any, result: Any) -> tuple:
    (run,) = q.workflow_logs(workflow_run_id=result.workflow_run_id,
                             workflow_created_at=result.workflow_created_at).runs
    return (run.workflow_run_id, run.workflow_url, run.label, run.retries, run.flow_control_key,
            run.flow_control_value)


def overrides(q: Any, d: Data) -> dict:
    entries = sorted(d.dlq, key=lambda m: m.dlq_id)
    out: dict[str, Any] = {}
    one = q.resume(entries[0].dlq_id, retries=5, flow_control_key="tenant-7", flow_control_value="parallelism=2",
                   run_id=f"{entries[0].workflow_run_id}-again")
    out["resume, every override"] = config(q, one)
    out["resume, none"] = config(q, q.resume(entries[1].dlq_id))
    many = q.restart_many([entries[2].dlq_id, entries[3].dlq_id], retries=4, flow_control_key="tenant-9")
    out["restart_many, overrides"] = [config(q, r) for r in many]
    # the entries were consumed: no longer listed, and their old runs no longer carry them
    listed = {m.dlq_id for url in d.urls
              for p in chain(lambda c, url=url: q.dlq(cursor=c, workflow_url=url), "messages")[0] for m in p}
    out["consumed"] = [m.dlq_id in listed for m in entries]
    olds = {(r.workflow_run_id, r.workflow_run_created_at): r.dlq_id for url in d.urls
            for p in chain(lambda c, url=url: q.workflow_logs(workflow_url=url, cursor=c), "runs")[0] for r in p}
    out["old runs' dlq ids"] = [olds[(m.workflow_run_id, m.workflow_created_at)] for m in entries]
    out["resume a consumed entry"] = error_of(lambda: q.resume(entries[0].dlq_id))
    out["resume_many with one unknown"] = error_of(lambda: q.resume_many([entries[0].dlq_id, "dlq_nope"]))
    out["delete_dlq_many of consumed and unknown"] = q.delete_dlq_many([entries[1].dlq_id, "dlq_nope"])
    out["cancel a finished run"] = error_of(lambda: q.cancel(entries[0].workflow_run_id))
    out["cancel an unknown run"] = error_of(lambda: q.cancel("wfr_nope"))
    out["bad retries override"] = error_of(lambda: q.restart_many([entries[0].dlq_id], retries=-1))
    return out


def deleting(q: Any, d: Data) -> dict:
    entries = sorted(d.dlq, key=lambda m: m.dlq_id)
    deleted = q.delete_dlq_many([entries[0].dlq_id, entries[1].dlq_id, entries[0].dlq_id, "dlq_nope"])
    left = [m.dlq_id for url in d.urls
            for p in chain(lambda c, url=url: q.dlq(cursor=c, count=1, workflow_url=url), "messages")[0] for m in p]
    return {"deleted": deleted, "left": sorted(left) == sorted(m.dlq_id for m in entries[2:])}


@pytest.mark.parametrize("scenario", [paging, filters, overrides, deleting], ids=lambda s: s.__name__)
def test_the_fake_answers_the_timelines_requests_like_the_service(scenario, data, real, flows):
    """The same scenario against both backends (the fake first: it changes nothing on the sandbox)."""
    seen = {"fake": scenario(data.fake(), data), "sandbox": scenario(real, data)}
    assert seen["fake"] == seen["sandbox"]
    cases: dict[str, list[Any]] = {}  # and each case saw something worth comparing (at one URL at least)
    for name, value in seen["sandbox"].items():
        cases.setdefault(name.split(" @ ")[0], []).append(value)
    for name, values in cases.items():
        assert any(v not in ([], "no error") for v in values) or "another" in name, name
