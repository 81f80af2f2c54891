"""The workflow timeline driven through its controls against the sandbox's queue area over real HTTP
(the runs are made by workflows of tests/widgets/timeline_runs.py, executed by the sandbox's runner);
what the widget shows and what the service holds afterwards are both checked. Only what needs thousands
of runs stays on the in-memory fake (fakes.py), which test_timeline_fake_parity.py holds to the service.

One sandbox per module: the ``grid`` runs are made once and only read; a test that resumes, restarts,
deletes or cancels makes runs of its own (a token in their id) and looks only at those."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.callbacks import Points

from svckit.errors import NotFound
from svckit.queue import Queue, WorkflowRuns
from svckit.queue.client import Listings
from svckit.sandbox.workflow.runner import RunHandle
from svckit.widgets import _plots
from svckit.widgets.workflow_timeline import WorkflowTimeline
from tests.counting import CountingTransport
from tests.widgets.conftest import timeline
from tests.widgets.fakes import FakeQueue, make_run
from tests.widgets.timeline_runs import BASE, Workflows, key, run_of

STATES = ["RUN_SUCCESS", "RUN_FAILED", "RUN_STARTED", "RUN_CANCELED"]
GRID_URL = f"{BASE}/grid"
OTHER_URL = f"{BASE}/other"


@dataclass
class Grid:
    """28 ``steps`` runs at GRID_URL (run i fails when i % 4 == 1; label nightly when i % 3 == 0, else
    adhoc) and 6 at OTHER_URL (same rule): made once, never changed."""

    runs: list[tuple[int, str, RunHandle]]  # (i, url, handle)

    def keys(self, *, url: str | None = None, failed: bool | None = None, label: str | None = None) -> set[str]:
        return {key(h) for i, u, h in self.runs
                if (url is None or u == url) and (failed is None or (i % 4 == 1) == failed)
                and (label is None or label_of(i) == label)}

    def one(self, *, failed: bool, url: str = GRID_URL) -> RunHandle:
        return next(h for i, u, h in self.runs if u == url and (i % 4 == 1) == failed)


def label_of(i: int) -> str:
    return "nightly" if i % 3 == 0 else "adhoc"


@pytest.fixture(scope="module")
def grid(flows: Workflows) -> Grid:
    flows.runner.register(GRID_URL, flows.steps)
    flows.runner.register(OTHER_URL, flows.steps)
    made = [(i, url, flows.steps_run(fail=i % 4 == 1, url=url, label=label_of(i)))
            for url, n in ((GRID_URL, 28), (OTHER_URL, 6)) for i in range(n)]
    for i, _, handle in made:
        assert flows.finish(handle) == ("RUN_FAILED" if i % 4 == 1 else "RUN_SUCCESS")
    return Grid(made)


def click(w: WorkflowTimeline, key_or_id: str) -> None:
    """Click the run's bar the way plotly's frontend reports it: a point of some trace."""
    column = "key" if "@" in key_or_id else "workflow_run_id"
    row = int(np.flatnonzero(w.frame[column] == key_or_id)[0])
    for k, trace in enumerate(w.gantt.data):
        cd = np.asarray(trace.customdata)
        hit = np.flatnonzero(cd == row)
        if len(hit):
            w._on_gantt_click(trace, Points(point_inds=[int(hit[0])], xs=[0], ys=[row],
                                            trace_name=trace.name, trace_index=k), None)
            return
    raise AssertionError(f"{key_or_id} is not drawn")


def runs_with_id(queue: Queue, run_id: str) -> list:
    return list(queue.iter_runs(workflow_run_id=run_id))


# -- loading and filtering ---------------------------------------------------------------------------
def test_loads_every_page_by_cursor_with_progress(queue, grid):
    w = timeline(queue, url=GRID_URL)
    assert w.run_count == 28 and w.pages_loaded == 3
    assert set(w.frame["key"]) == grid.keys(url=GRID_URL)  # each run once: the cursors chain the pages
    assert w.w_progress.value == 28 and w.w_progress_label.value == "28 runs · 3 round trips"
    drawn = {t.name: len(t.customdata) for t in w.gantt.data if isinstance(t, go.Bar)}
    assert drawn == {"RUN_SUCCESS": 21, "RUN_FAILED": 7}
    assert w.status == "28 run(s)"


def test_max_runs_caps_the_fetch_and_says_so(queue, grid):
    w = timeline(queue, url=GRID_URL, max_runs=15)
    assert w.run_count == 15 and w.pages_loaded == 2
    assert set(w.frame["key"]) < grid.keys(url=GRID_URL)
    assert "capped" in w.w_status.value


def test_every_logs_filter_reaches_the_service_and_filters(queue, grid):
    w = timeline(queue, url=GRID_URL)
    w.w_state.value = "RUN_FAILED"
    w.w_label.value = "nightly"
    w.w_load.click()
    expected = grid.keys(url=GRID_URL, failed=True, label="nightly")
    assert len(expected) == 2 and set(w.frame["key"]) == expected  # runs 9 and 21 only
    w.w_url.value = OTHER_URL
    w.w_load.click()
    assert set(w.frame["key"]) == grid.keys(url=OTHER_URL, failed=True, label="nightly") != expected
    w.w_state.value = w.w_label.value = ""
    w.w_load.click()
    assert set(w.frame["key"]) == grid.keys(url=OTHER_URL)
    # the dates: a run's own day keeps it, the day after (from) or before (to) leaves nothing
    day = w.frame["created_at"].min().date()
    w.w_url.value, w.w_from.value, w.w_to.value = GRID_URL, day, w.frame["created_at"].max().date()
    w.w_load.click()
    assert set(w.frame["key"]) == grid.keys(url=GRID_URL)
    w.w_from.value = w.w_to.value + timedelta(days=1)
    w.w_to.value = None
    w.w_load.click()
    assert w.run_count == 0 and w.status == "0 run(s)"
    w.w_from.value, w.w_to.value = None, day - timedelta(days=1)
    w.w_load.click()
    assert w.run_count == 0
    one = grid.one(failed=False)
    w.w_to.value, w.w_url.value, w.w_run_id.value = None, "", one.workflow_run_id
    w.w_load.click()
    assert list(w.frame["key"]) == [key(one)]


# -- a run's steps ----------------------------------------------------------------------------------
def test_clicking_a_run_shows_its_steps_lanes_retries_and_outputs(queue, grid):
    run = grid.one(failed=False)
    w = timeline(queue, url=GRID_URL)
    click(w, key(run))
    assert w.selected_run == key(run)
    steps = w.steps_frame
    assert list(dict.fromkeys(steps["step_name"])) == ["init", "fetch", "shard-0", "shard-1", "shard-2", "report"]
    par = steps[steps["group_type"] == "parallel"]
    assert list(par["lane"]) == [0, 1, 2]
    # parallel lanes are adjacent rows of the steps chart, and end at the next group's start
    labels = list(w.steps_fig.layout.yaxis.categoryarray)
    rows = [labels.index(lbl) for lbl in labels if "=" in lbl]
    assert rows == list(range(rows[0], rows[0] + 3))
    assert w.detail.value.count(" parallel</td>") == 3  # the group column names a parallel group
    assert (par["end"] == steps[steps["step_name"] == "report"]["start"].iloc[0]).all()
    # the retried fetch: the second attempt has retries=1, and it shows in hover and detail panel
    fetch = steps[steps["step_name"] == "fetch"]
    assert list(fetch["retries"]) == [0, 1] and list(fetch["state"]) == ["STEP_RETRY", "STEP_SUCCESS"]
    hover = " ".join(h for t in w.steps_fig.data for h in t.hovertext)
    assert "retries: 1" in hover and 'out: {"rows": 42}' in hover
    assert "STEP_RETRY" in w.detail.value and "{&quot;rows&quot;: 42}" in w.detail.value
    # the selected row is highlighted in the Gantt
    assert len(w.gantt.layout.shapes) == 1
    assert not steps["running"].any()  # a finished run has no running step


def test_a_failed_runs_last_step_shows_it_failed_after_its_retry(queue, grid):
    run = grid.one(failed=True)
    w = timeline(queue, run_id=run.workflow_run_id)
    steps = w.select_run(run.workflow_run_id)
    report = steps[steps["step_name"] == "report"]
    assert list(report["state"]) == ["STEP_RETRY", "STEP_FAILED"] and list(report["retries"]) == [0, 1]
    assert "RUN_FAILED" in w.detail.value and "ledger refused" in w.detail.value


def test_running_step_extends_to_now(queue, flows):
    now = datetime.now(UTC) + timedelta(hours=1)  # the widget's clock, later than any step
    with flows.blocked_run() as handle:
        w = timeline(queue, run_id=handle.workflow_run_id, now=lambda: now)
        steps = w.select_run(handle.workflow_run_id)
        last = steps.iloc[-1]
        assert last["step_name"] == "wait" and bool(last["running"]) and last["end"] == now
        assert ">running</span>" in w.detail.value and "svc-badge" in w.detail.value  # a badge, not a glyph


def test_unknown_run_is_a_clear_error(queue, grid):
    w = timeline(queue, url=GRID_URL)
    with pytest.raises(KeyError, match="adjust the filters"):
        w.select_run("nope")


# -- resume ------------------------------------------------------------------------------------------
def test_resume_needs_a_failed_run_and_a_confirmation(queue, grid, flows):
    ok = grid.one(failed=False)
    _, failed = flows.failed_run()
    dlq_id = run_of(queue, failed).dlq_id
    w = timeline(queue, run_id=ok.workflow_run_id)
    w.select_run(key(ok))
    assert w.w_resume.disabled
    w = timeline(queue, run_id=failed.workflow_run_id)
    w.select_run(key(failed))
    assert not w.w_resume.disabled
    w.w_resume.click()
    assert w.confirm_box.layout.display == "flex"
    assert dlq_id in w.w_confirm_text.value
    w.w_cancel.click()
    assert w.confirm_box.layout.display == "none"
    # nothing was sent: the entry is still in the DLQ and the run has no successor
    assert queue.dlq_message(dlq_id).workflow_run_id == failed.workflow_run_id
    assert [key(r) for r in runs_with_id(queue, failed.workflow_run_id)] == [key(failed)]


def test_confirmed_resume_applies_the_overrides_and_shows_the_new_run(queue, flows):
    token, failed = flows.failed_run(label="billing")
    w = timeline(queue, run_id=failed.workflow_run_id)
    assert w.run_count == 1
    w.select_run(key(failed))
    w.w_resume.click()
    w.w_retries.value = "3"
    w.w_fc_key.value = "tenant-7"
    w.w_fc_value.value = "parallelism=2"
    w.w_confirm.click()
    assert "resumed from DLQ" in w.w_resume_msg.value, w.w_resume_msg.value
    result = w.last_resume
    assert w.run_count == 2 and w.selected_run == key(result)
    # the service's new run carries the overrides, and the label it kept
    new = run_of(queue, result)
    assert (new.retries, new.flow_control_key, new.flow_control_value, new.label) == (3, "tenant-7",
                                                                                       "parallelism=2", "billing")
    # the retries really applied: attempts 2 and 3 fail, the 4th succeeds (with retries=0 it fails again)
    assert flows.finish_result(result) == "RUN_SUCCESS"
    w.refresh()
    assert w.selected_run == key(result) and w.selected.workflow_state == "RUN_SUCCESS"
    flaky = w.steps_frame[w.steps_frame["step_name"] == "flaky"]
    assert list(flaky["state"]) == ["STEP_RETRY", "STEP_RETRY", "STEP_SUCCESS"]
    assert flows.prepared[token] == 1  # the step that had succeeded was kept, not run again
    assert "prepare" in set(w.steps_frame["step_name"])


def test_resume_without_overrides_keeps_the_runs_configuration(queue, flows):
    _, failed = flows.failed_run(flow_control_key="tenant-1", flow_control_value="rate=5")
    w = timeline(queue, run_id=failed.workflow_run_id)
    w.select_run(key(failed))
    w.w_resume.click()
    w.w_confirm.click()  # every override left empty
    new = run_of(queue, w.last_resume)
    assert (new.retries, new.flow_control_key, new.flow_control_value) == (0, "tenant-1", "rate=5")
    assert flows.finish_result(w.last_resume) == "RUN_FAILED"  # no retries: the second attempt failed too


def test_resume_rejects_a_bad_retries_value_without_calling(queue, flows):
    _, failed = flows.failed_run()
    dlq_id = run_of(queue, failed).dlq_id
    w = timeline(queue, run_id=failed.workflow_run_id)
    w.select_run(key(failed))
    w.w_resume.click()
    w.w_retries.value = "three"
    w.w_confirm.click()
    assert "whole number" in w.w_resume_msg.value
    assert queue.dlq_message(dlq_id).dlq_id == dlq_id
    assert len(runs_with_id(queue, failed.workflow_run_id)) == 1


def test_a_failed_run_without_a_dlq_entry_cannot_be_resumed(queue, flows):
    _, failed = flows.failed_run()
    dlq_id = run_of(queue, failed).dlq_id
    w = timeline(queue, run_id=failed.workflow_run_id)
    w.select_run(key(failed))
    result = w.resume_selected(retries=3)
    assert w.selected_run == key(result)
    w.select_run(key(failed))  # its DLQ entry was consumed by the resume
    assert w.w_resume.disabled and "already resumed" in w.w_resume_msg.value
    assert w.selected.dlq_id is None
    with pytest.raises(NotFound):
        queue.dlq_message(dlq_id)
    assert flows.finish_result(result) == "RUN_SUCCESS"


def test_the_dlq_id_on_the_run_is_used_without_listing_the_dlq(timeline_sandbox, flows):
    _, failed = flows.failed_run()
    transport = CountingTransport()
    with Queue.from_settings(timeline_sandbox.settings, transport=transport) as counted:
        w = timeline(counted, run_id=failed.workflow_run_id)
        transport.clear()  # (the DLQ was read once, beside the runs)
        w.select_run(key(failed))
        w.w_resume.click()
        assert w.selected.dlq_id in w.w_confirm_text.value and transport.requests == []  # nothing asked
        w.w_cancel.click()
        new_id = f"{failed.workflow_run_id}_again"
        result = w.resume_selected(run_id=new_id, retries=3)
    # the DLQ was read only beside each refresh's page of runs, never to find the entry
    logs = [r for r in transport.requests if r.url.path.endswith("/v2/workflows/logs")]
    dlq = [r for r in transport.requests if r.method == "GET" and r.url.path.endswith("/v2/dlq")]
    assert len(dlq) == len(logs) >= 1
    assert w.selected.workflow_run_id == new_id == result.workflow_run_id
    assert flows.finish_result(result) == "RUN_SUCCESS"


class WithoutDlqIds(Listings):
    """The real client, with the runs listed as the spec's D2 has them: no ``dlqId`` on a run (the
    timeline then finds the entry among the DLQ entries it read beside the runs)."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    def __getattr__(self, name: str):
        return getattr(self.queue, name)

    def workflow_logs(self, **filters):
        page = self.queue.workflow_logs(**filters)
        return page.model_copy(update={"runs": [r.model_copy(update={"dlq_id": None}) for r in page.runs]})


def test_a_run_listed_without_its_dlq_id_is_resumed_from_the_entry_found_in_the_dlq(timeline_sandbox, queue, flows):
    _, failed = flows.failed_run()
    dlq_id = run_of(queue, failed).dlq_id
    transport = CountingTransport()
    with Queue.from_settings(timeline_sandbox.settings, transport=transport) as counted:
        w = timeline(WithoutDlqIds(counted), run_id=failed.workflow_run_id)
        w.select_run(key(failed))
        assert not w.w_resume.disabled and w.selected.dlq_id is None
        w.w_resume.click()
        assert dlq_id in w.w_confirm_text.value  # found in the DLQ, as listed beside the runs
        w.w_retries.value = "3"
        w.w_confirm.click()
    assert [r for r in transport.requests if r.method == "GET" and r.url.path.endswith("/v2/dlq")]
    assert w.last_resume is not None and w.selected_run == key(w.last_resume)
    with pytest.raises(NotFound):
        queue.dlq_message(dlq_id)  # that very entry was consumed
    assert flows.finish_result(w.last_resume) == "RUN_SUCCESS"


def test_resume_made_invisible_by_the_filter_still_shows_the_new_run(queue, flows):
    _, failed = flows.failed_run()
    w = timeline(queue, run_id=failed.workflow_run_id)
    w.w_state.value = "RUN_FAILED"
    w.w_load.click()
    w.select_run(key(failed))
    result = w.resume_selected(retries=3)  # the new run is in progress or succeeded: not RUN_FAILED
    assert w.selected_run == key(result) and w.state == ""
    assert w.selected.workflow_state in ("RUN_STARTED", "RUN_SUCCESS")
    assert flows.finish_result(result) == "RUN_SUCCESS"


# -- the DLQ panel and cancel -------------------------------------------------------------------------
@pytest.mark.parametrize("action", ["delete", "resume", "restart"])
def test_dlq_actions_on_several_entries_need_a_confirmation(queue, flows, action):
    label = f"several-{uuid.uuid4().hex[:8]}"
    made = [flows.failed_run(label=label) for _ in range(3)]
    mine = [run_of(queue, h).dlq_id for _, h in made]
    w = WorkflowTimeline(queue, autoload=False)
    w.w_label.value = label
    w.w_load.click()  # the runs of the label, and their DLQ entries beside them
    assert all(b.disabled for b in w.dlq_panel.w_dlq_buttons.values())
    listed = [v for _, v in w.dlq_panel.w_dlq.options]
    assert sorted(mine) == sorted(listed) and w.dlq_count == 3
    w.dlq_panel.w_dlq.value = tuple(mine[:2])
    assert w.dlq_selected == tuple(mine[:2]) and not w.dlq_panel.w_dlq_buttons[action].disabled
    w.dlq_panel.w_dlq_buttons[action].click()
    assert w.dlq_panel.dlq_confirm_box.layout.display == "flex" and "<b>2</b> DLQ entries" in w.dlq_panel.w_dlq_confirm_text.value
    w.dlq_panel.w_dlq_back.click()  # changed their mind: nothing sent
    assert w.dlq_panel.dlq_confirm_box.layout.display == "none"
    assert [queue.dlq_message(d).dlq_id for d in mine] == mine
    w.dlq_panel.w_dlq_buttons[action].click()
    w.dlq_panel.w_dlq_confirm.click()
    assert w.dlq_panel.dlq_confirm_box.layout.display == "none"
    listed = [v for _, v in w.dlq_panel.w_dlq.options]
    assert not set(mine[:2]) & set(listed) and mine[2] in listed and w.dlq_selected == ()  # reloaded
    for dlq_id in mine[:2]:
        with pytest.raises(NotFound):
            queue.dlq_message(dlq_id)
    assert queue.dlq_message(mine[2]).dlq_id == mine[2]
    done = {"delete": "deleted 2 DLQ entries", "resume": "resumed 2 run(s)", "restart": "restarted 2 run(s)"}
    assert done[action] in w.dlq_panel.w_dlq_msg.value
    tokens = [t for t, _ in made[:2]]
    if action == "delete":  # the runs stay failed, with no DLQ entry
        assert [(r.workflow_state, r.dlq_id) for _, h in made[:2] for r in [run_of(queue, h)]] == [
            ("RUN_FAILED", None)] * 2
        return
    started = w.dlq_panel.last_dlq_result
    assert [r.workflow_run_id for r in started] == [h.workflow_run_id for _, h in made[:2]]
    # with no retries the flaky step fails again: each new run lands in the DLQ, as a fresh entry
    assert [flows.finish_result(r) for r in started] == ["RUN_FAILED"] * 2
    w.load_dlq()
    fresh = {m.workflow_run_id: m.dlq_id for m in w.dlq_panel.dlq_entries
             if m.workflow_created_at in {r.workflow_created_at for r in started}}
    assert set(fresh) == {h.workflow_run_id for _, h in made[:2]} and not set(fresh.values()) & set(mine)
    # a resume kept the step that had succeeded; a restart ran everything again
    assert [flows.prepared[t] for t in tokens] == ([1, 1] if action == "resume" else [2, 2])


def test_dlq_action_without_entries_is_refused(queue, flows):
    _, failed = flows.failed_run()
    dlq_id = run_of(queue, failed).dlq_id
    w = timeline(queue, run_id=failed.workflow_run_id)
    with pytest.raises(LookupError):
        w.dlq_action("resume")
    with pytest.raises(ValueError):
        w.dlq_action("replay", [dlq_id])
    assert queue.dlq_message(dlq_id).dlq_id == dlq_id
    assert len(runs_with_id(queue, failed.workflow_run_id)) == 1


def test_cancel_is_offered_for_a_running_run_only_and_needs_a_confirmation(queue, grid, flows):
    ok = grid.one(failed=False)
    w = timeline(queue, run_id=ok.workflow_run_id)
    w.select_run(key(ok))
    assert w.w_cancel_run.disabled
    with flows.blocked_run() as handle:
        w = timeline(queue, run_id=handle.workflow_run_id)
        w.select_run(key(handle))
        assert not w.w_cancel_run.disabled
        w.w_cancel_run.click()
        assert w.cancel_run_box.layout.display == "flex" and handle.workflow_run_id in w.w_cancel_run_text.value
        w.w_cancel_run_back.click()
        assert run_of(queue, handle).workflow_state == "RUN_STARTED"
        w.w_cancel_run.click()
        w.w_cancel_run_confirm.click()
        assert "canceled run" in w.w_resume_msg.value
        assert w.selected.workflow_state == "RUN_CANCELED" and w.w_cancel_run.disabled
        assert run_of(queue, handle).workflow_state == "RUN_CANCELED"
        with pytest.raises(ValueError):
            w.cancel_selected()  # no longer in progress
    assert flows.runner.wait(handle) == "RUN_CANCELED"


# -- on the fake: thousands of runs -----------------------------------------------------------------
def test_many_runs_are_drawn_with_webgl_and_still_clickable():
    q = FakeQueue([make_run(i, STATES[i % 4], parallel=False) for i in range(_plots.WEBGL_THRESHOLD + 20)])
    w = WorkflowTimeline(q, max_runs=2000)
    assert w.run_count == _plots.WEBGL_THRESHOLD + 20
    assert all(isinstance(t, go.Scattergl) for t in w.gantt.data)
    click(w, "wfr_0100")
    assert w.selected_run.startswith("wfr_0100@")


def test_the_timeline_types_its_client_with_a_protocol_that_queue_and_the_fake_both_satisfy():
    """WorkflowTimeline(queue: WorkflowRuns): the real client and the test fake answer the same methods
    (what they answer is compared in test_timeline_fake_parity.py)."""
    with Queue("http://127.0.0.1:9", "token-not-used") as real:
        assert isinstance(real, WorkflowRuns)
    assert isinstance(FakeQueue([]), WorkflowRuns)
    assert not isinstance(object(), WorkflowRuns)

