"""The workflow timeline driven through its controls, against an in-memory queue (fakes.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.callbacks import Points

from svckit import frames
from svckit.queue import Queue, WorkflowRuns
from svckit.widgets import _plots
from svckit.widgets.workflow_timeline import WorkflowTimeline
from tests.widgets.fakes import T0, FakeQueue, make_run

NOW = datetime.fromtimestamp((T0 + 86_400_000) / 1000, tz=UTC)
STATES = ["RUN_SUCCESS", "RUN_FAILED", "RUN_STARTED", "RUN_CANCELED"]


@pytest.fixture
def queue() -> FakeQueue:
    return FakeQueue([make_run(i, STATES[i % 4], label="nightly" if i % 2 else "adhoc") for i in range(28)])


def timeline(queue, **kw) -> WorkflowTimeline:
    return WorkflowTimeline(queue, now=lambda: NOW, **kw)


def click(w: WorkflowTimeline, run_id: str) -> None:
    """Click the run's bar the way plotly's frontend reports it: a point of some trace."""
    row = int(np.flatnonzero(w.frame["workflow_run_id"] == run_id)[0])
    for k, trace in enumerate(w.gantt.data):
        cd = np.asarray(trace.customdata)
        hit = np.flatnonzero(cd == row)
        if len(hit):
            w._on_gantt_click(trace, Points(point_inds=[int(hit[0])], xs=[0], ys=[row],
                                            trace_name=trace.name, trace_index=k), None)
            return
    raise AssertionError(f"{run_id} is not drawn")


def test_loads_every_page_by_cursor_with_progress(queue):
    w = timeline(queue)
    assert w.run_count == 28 and w.pages_loaded == 3
    assert [c[1].get("cursor") for c in queue.calls] == [None, "10", "20"]
    assert w.w_progress.value == 28 and w.w_progress_label.value == "28 runs · 3 round trips"
    drawn = {t.name: len(t.customdata) for t in w.gantt.data if isinstance(t, go.Bar)}
    assert drawn == {"RUN_STARTED": 7, "RUN_SUCCESS": 7, "RUN_FAILED": 7, "RUN_CANCELED": 7}


def test_max_runs_caps_the_fetch_and_says_so(queue):
    w = timeline(queue, max_runs=15)
    assert w.run_count == 15 and w.pages_loaded == 2
    assert "capped" in w.w_status.value


def test_every_logs_filter_reaches_the_service(queue):
    w = timeline(queue)
    w.w_state.value = "RUN_FAILED"
    w.w_url.value = "http://127.0.0.1:9/flow/1"
    w.w_label.value = "nightly"
    w.w_from.value = date(2025, 11, 22)
    w.w_to.value = date(2025, 11, 22)
    w.w_run_id.value = ""
    w.w_load.click()
    sent = queue.calls[-1][1]
    assert sent["state"] == "RUN_FAILED" and sent["workflow_url"] == "http://127.0.0.1:9/flow/1"
    assert sent["label"] == "nightly"
    assert sent["from_date"] == int(datetime(2025, 11, 22, tzinfo=UTC).timestamp() * 1000)
    assert sent["to_date"] == sent["from_date"] + 86_400_000 - 1
    assert set(w.frame["state"]) == {"RUN_FAILED"}
    assert set(w.frame["workflow_url"]) == {"http://127.0.0.1:9/flow/1"}
    w.w_state.value = ""
    w.w_url.value = w.w_label.value = ""
    w.w_from.value = w.w_to.value = None
    w.w_run_id.value = "wfr_0005"
    w.w_load.click()
    assert list(w.frame["workflow_run_id"]) == ["wfr_0005"]


def test_clicking_a_run_shows_its_steps_lanes_retries_and_outputs(queue):
    w = timeline(queue)
    click(w, "wfr_0004")
    assert w.selected_run.startswith("wfr_0004@")
    steps = w.steps_frame
    par = steps[steps["group_type"] == "parallel"]
    assert list(par["lane"]) == [0, 1, 2]
    # parallel lanes are adjacent rows of the steps chart, and end at the next group's start
    labels = list(w.steps_fig.data[0].y)
    rows = [labels.index(lbl) for lbl in labels if "=" in lbl]
    assert rows == list(range(rows[0], rows[0] + 3))
    assert w.detail.value.count(" parallel</td>") == 3  # the group column names a parallel group
    assert (par["end"] == steps[steps["step_name"] == "report"]["start"].iloc[0]).all()
    # the retried fetch: the second attempt has retries=1, and it shows in hover and detail panel
    fetch = steps[steps["step_name"] == "fetch"]
    assert list(fetch["retries"]) == [0, 1]
    hover = " ".join(w.steps_fig.data[0].hovertext)
    assert "retries: 1" in hover and 'out: {"rows": 42}' in hover
    assert "STEP_RETRY" in w.detail.value and "{&quot;rows&quot;: 42}" in w.detail.value
    # the selected row is highlighted in the Gantt
    assert len(w.gantt.layout.shapes) == 1


def test_running_step_extends_to_now(queue):
    w = timeline(queue)
    steps = w.select_run("wfr_0002")  # RUN_STARTED
    last = steps.iloc[-1]
    assert bool(last["running"]) and last["end"] == NOW
    assert ">running</span>" in w.detail.value and "svc-badge" in w.detail.value  # a badge, not a glyph
    done = frames.steps_frame(make_run(0, "RUN_SUCCESS"))
    assert not done["running"].any()


def test_resume_needs_a_failed_run_and_a_confirmation(queue):
    w = timeline(queue)
    w.select_run("wfr_0000")  # success
    assert w.w_resume.disabled
    w.select_run("wfr_0001")  # failed
    assert not w.w_resume.disabled
    w.w_resume.click()
    assert w.confirm_box.layout.display == "flex"
    assert "dlq-wfr_0001-" in w.w_confirm_text.value
    assert not [c for c in queue.calls if c[0] == "resume"]
    w.w_cancel.click()
    assert w.confirm_box.layout.display == "none"
    assert not [c for c in queue.calls if c[0] == "resume"]


def test_confirmed_resume_sends_overrides_and_shows_the_new_run(queue):
    w = timeline(queue)
    before = w.run_count
    w.select_run("wfr_0001")
    w.w_resume.click()
    w.w_retries.value = "3"
    w.w_fc_key.value = "tenant-7"
    w.w_confirm.click()
    resume = [c[1] for c in queue.calls if c[0] == "resume"]
    assert resume == [{"dlq_id": f"dlq-wfr_0001-{T0 + 60_000}", "flow_control_key": "tenant-7",
                       "flow_control_value": None, "retries": 3, "run_id": None}]
    assert w.run_count == before + 1
    assert w.selected_run == f"wfr_0001@{w.last_resume.workflow_created_at}"
    assert w.selected.workflow_state == "RUN_SUCCESS"
    assert "resumed from DLQ" in w.w_resume_msg.value


def test_resume_rejects_a_bad_retries_value_without_calling(queue):
    w = timeline(queue)
    w.select_run("wfr_0001")
    w.w_resume.click()
    w.w_retries.value = "three"
    w.w_confirm.click()
    assert "whole number" in w.w_resume_msg.value
    assert not [c for c in queue.calls if c[0] == "resume"]


def test_a_failed_run_without_a_dlq_entry_cannot_be_resumed(queue):
    w = timeline(queue)
    w.select_run("wfr_0001")
    w.resume_selected()
    w.select_run(w.frame[w.frame["workflow_run_id"] == "wfr_0005"]["key"].iloc[0])
    assert not w.w_resume.disabled
    old = w.frame[(w.frame["workflow_run_id"] == "wfr_0001") & (w.frame["state"] == "RUN_FAILED")]
    w.select_run(old["key"].iloc[0])  # its DLQ entry was consumed by the resume
    assert w.w_resume.disabled and "already resumed" in w.w_resume_msg.value


def test_dlq_id_on_the_run_is_used_without_listing_the_dlq():
    q = FakeQueue([make_run(1, "RUN_FAILED")], dlq_ids_on_runs=True)
    w = timeline(q)
    w.select_run("wfr_0001")
    w.resume_selected(run_id="wfr_new")
    assert not [c for c in q.calls if c[0] == "dlq"]
    assert w.selected.workflow_run_id == "wfr_new"


def test_resume_made_invisible_by_the_filter_still_shows_the_new_run(queue):
    w = timeline(queue)
    w.w_state.value = "RUN_FAILED"
    w.w_load.click()
    w.select_run("wfr_0005")
    result = w.resume_selected()
    assert w.selected_run == f"wfr_0005@{result.workflow_created_at}"


def test_many_runs_are_drawn_with_webgl_and_still_clickable():
    q = FakeQueue([make_run(i, STATES[i % 4], parallel=False) for i in range(_plots.WEBGL_THRESHOLD + 20)])
    w = timeline(q, max_runs=2000)
    assert all(isinstance(t, go.Scattergl) for t in w.gantt.data)
    click(w, "wfr_0100")
    assert w.selected_run.startswith("wfr_0100@")


def test_unknown_run_is_a_clear_error(queue):
    w = timeline(queue)
    with pytest.raises(KeyError, match="adjust the filters"):
        w.select_run("nope")


# -- DLQ actions and cancel ------------------------------------------------------------------------
class DlqFakeQueue(FakeQueue):
    """FakeQueue plus the bulk DLQ operations and cancel, recorded like the others."""

    def delete_dlq_many(self, dlq_ids):
        self.calls.append(("delete_dlq_many", {"dlq_ids": list(dlq_ids)}))
        return sum(self.dlq_entries.pop(d, None) is not None for d in dlq_ids)

    def resume_many(self, dlq_ids):
        self.calls.append(("resume_many", {"dlq_ids": list(dlq_ids)}))
        return [self.resume(d) for d in dlq_ids]

    def restart_many(self, dlq_ids):
        self.calls.append(("restart_many", {"dlq_ids": list(dlq_ids)}))
        return [self.resume(d) for d in dlq_ids]

    def cancel(self, run_id):
        self.calls.append(("cancel", {"run_id": run_id}))
        self.runs = [r.model_copy(update={"workflow_state": "RUN_CANCELED"}) if r.workflow_run_id == run_id else r
                     for r in self.runs]


@pytest.fixture
def dlq_queue() -> DlqFakeQueue:
    return DlqFakeQueue([make_run(i, STATES[i % 4]) for i in range(12)])


@pytest.mark.parametrize("action, call", [("delete", "delete_dlq_many"), ("resume", "resume_many"),
                                          ("restart", "restart_many")])
def test_dlq_actions_on_several_entries_need_a_confirmation(dlq_queue, action, call):
    w = timeline(dlq_queue)
    assert w.dlq_count == 0 and all(b.disabled for b in w.w_dlq_buttons.values())
    w.w_dlq_load.click()
    ids = [v for _, v in w.w_dlq.options]
    assert w.dlq_count == 3 == len(ids)  # runs 1, 5, 9 failed
    w.w_dlq.value = tuple(ids[:2])
    assert w.dlq_selected == tuple(ids[:2]) and not w.w_dlq_buttons[action].disabled
    w.w_dlq_buttons[action].click()
    assert w.dlq_confirm_box.layout.display == "flex" and "<b>2</b> DLQ entries" in w.w_dlq_confirm_text.value
    assert not [c for c in dlq_queue.calls if c[0] == call]
    w.w_dlq_back.click()  # changed their mind: nothing sent
    assert w.dlq_confirm_box.layout.display == "none" and not [c for c in dlq_queue.calls if c[0] == call]
    w.w_dlq_buttons[action].click()
    w.w_dlq_confirm.click()
    assert [c[1]["dlq_ids"] for c in dlq_queue.calls if c[0] == call] == [ids[:2]]
    assert w.dlq_confirm_box.layout.display == "none"
    assert [v for _, v in w.w_dlq.options] == ids[2:] and w.dlq_selected == ()  # reloaded
    done = {"delete": "deleted 2 DLQ entries", "resume": "resumed 2 run(s)", "restart": "restarted 2 run(s)"}
    assert done[action] in w.w_dlq_msg.value


def test_dlq_action_without_entries_is_refused(dlq_queue):
    w = timeline(dlq_queue)
    with pytest.raises(LookupError):
        w.dlq_action("resume")
    with pytest.raises(ValueError):
        w.dlq_action("replay", ["dlq-x"])
    assert not [c for c in dlq_queue.calls if c[0].endswith("_many")]


def test_cancel_is_offered_for_a_running_run_only_and_needs_a_confirmation(dlq_queue):
    w = timeline(dlq_queue)
    w.select_run("wfr_0000")  # RUN_SUCCESS
    assert w.w_cancel_run.disabled
    w.select_run("wfr_0002")  # RUN_STARTED
    assert not w.w_cancel_run.disabled
    w.w_cancel_run.click()
    assert w.cancel_run_box.layout.display == "flex" and "wfr_0002" in w.w_cancel_run_text.value
    assert not [c for c in dlq_queue.calls if c[0] == "cancel"]
    w.w_cancel_run_back.click()
    assert not [c for c in dlq_queue.calls if c[0] == "cancel"]
    w.w_cancel_run.click()
    w.w_cancel_run_confirm.click()
    assert [c[1] for c in dlq_queue.calls if c[0] == "cancel"] == [{"run_id": "wfr_0002"}]
    assert w.selected.workflow_state == "RUN_CANCELED" and w.w_cancel_run.disabled
    assert "canceled run" in w.w_resume_msg.value
    with pytest.raises(ValueError):
        w.cancel_selected()  # no longer in progress


def test_dlq_actions_and_cancel_against_the_sandbox(tmp_path):
    import threading

    from svckit.queue import Queue
    from svckit.sandbox import Sandbox
    from svckit.sandbox.demo_workflows import INVOICE_URL

    release = threading.Event()
    with Sandbox(tmp_path / "data", areas=["queue"], seed="demo", queue_retry_delay=0) as sb, \
            Queue.from_settings(sb.settings) as q:
        runner = sb.area("queue").runner
        w = WorkflowTimeline(q)
        frame = w.load_dlq()
        assert w.dlq_count == 2 and set(frame["workflow_url"]) == {INVOICE_URL}
        seeded = set(frame["dlq_id"])
        w.w_dlq.value = tuple(v for _, v in w.w_dlq.options)
        w.w_dlq_buttons["restart"].click()
        w.w_dlq_confirm.click()
        started = w.last_dlq_result
        assert len(started) == 2 and "restarted 2 run(s)" in w.w_dlq_msg.value
        for r in started:  # the invoice upload always fails: each restart lands in the DLQ again
            assert runner.wait(runner.handle(r.workflow_run_id, r.workflow_created_at)) == "RUN_FAILED"
        w.load_dlq()
        assert w.dlq_count == 2 and not {m.dlq_id for m in w.dlq_entries} & seeded  # two fresh entries
        w.w_dlq.value = (w.w_dlq.options[0][1],)
        w.w_dlq_buttons["delete"].click()
        w.w_dlq_confirm.click()
        assert w.dlq_count == 1 and [m.dlq_id for m in q.iter_dlq()] == [w.w_dlq.options[0][1]]

        runner.register("https://shop.example.com/api/workflows/slow",
                        lambda c: c.run("wait", lambda: release.wait(30)))
        handle = runner.trigger("https://shop.example.com/api/workflows/slow", run_id="wfr_slow")
        assert runner.wait_for_step(handle, "wait")
        w.refresh()
        w.select_run("wfr_slow")
        w.w_cancel_run.click()
        w.w_cancel_run_confirm.click()
        assert w.selected.workflow_state == "RUN_CANCELED"
        release.set()
        assert runner.wait(handle) == "RUN_CANCELED"


def test_the_timeline_types_its_client_with_a_protocol_that_queue_and_the_fake_both_satisfy():
    """WorkflowTimeline(queue: WorkflowRuns): the real client and the test fake answer the same methods,
    so what the fake-driven tests show is what the real client gets."""
    with Queue("http://127.0.0.1:9", "token-not-used") as real:
        assert isinstance(real, WorkflowRuns)
    assert isinstance(FakeQueue([]), WorkflowRuns)
    assert not isinstance(object(), WorkflowRuns)
