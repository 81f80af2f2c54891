"""What a person reads in the workflow timeline, on the sandbox's queue area over real HTTP: rows named
by workflow, label, short id and "resumed"; runs of milliseconds drawn as bars on an axis of minutes;
the steps chart's legend; a resumed run's kept steps shown as kept; the DLQ as a table of failures,
loaded with the runs and following the selected run; a disabled delete that is not drawn red.

Each test makes runs of its own with a label of its own (a token), and filters the timeline to it."""

from __future__ import annotations

import html
import re
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import plotly.graph_objects as go
import pytest

from svckit import frames
from svckit.queue import Queue
from svckit.widgets._static import static_html
from tests.widgets.conftest import timeline
from tests.widgets.timeline_runs import Workflows, key, run_of


@pytest.fixture
def label() -> str:
    return f"t{uuid.uuid4().hex[:8]}"


def resumed_twice(queue: Queue, flows: Workflows, label: str) -> list:
    """A failed ``flaky`` run resumed twice from its DLQ entry with no retries (each resume fails
    again): three runs sharing one workflowRunId, oldest first."""
    _, failed = flows.failed_run(label=label)
    handles = [failed]
    for _ in range(2):
        result = queue.resume(run_of(queue, handles[-1]).dlq_id)
        assert flows.finish_result(result) == "RUN_FAILED"
        handles.append(result)
    return handles


def legend(fig: go.Figure) -> dict[str, str]:
    """The legend of a figure: each entry's name and colour."""
    return {t.name: (t.marker.color if isinstance(t.marker.color, str) else None)
            for t in fig.data if t.showlegend is not False}


# -- the Gantt's rows -------------------------------------------------------------------------------
def test_gantt_rows_name_the_workflow_label_short_id_and_the_resumed_runs(queue, flows, label):
    original, first, second = resumed_twice(queue, flows, label)
    short = original.workflow_run_id[-6:]
    w = timeline(queue, label=label)
    assert w.run_count == 3  # one workflowRunId, three runs: newest first
    rows = list(w.gantt.layout.yaxis.ticktext)
    assert rows == [f"flaky · {label} · {short} · resumed 2", f"flaky · {label} · {short} · resumed",
                    f"flaky · {label} · {short}"]
    assert len(set(rows)) == 3  # no two rows read the same
    # the same names in the run picker, the steps chart's title and the detail panel
    assert [text.split(" · RUN_")[0] for text, _ in w.w_pick.options[1:]] == rows
    w.select_run(key(first))
    assert rows[1] in w.steps_fig.layout.title.text and rows[1] in w.detail.value
    # a name is the run's, not its row's: the same after another run of the label is made
    flows.failed_run(label=label)
    w.refresh()
    assert w.run_count == 4 and set(rows) < set(w.gantt.layout.yaxis.ticktext)
    assert w.frame.set_index("key").loc[key(second), "run_name"] == rows[0]


def test_runs_that_would_read_the_same_are_named_apart():
    # two runs of one workflow and label whose ids end alike, and a resume of one of them
    def run(run_id: str, created: int) -> dict:
        return {"workflowRunId": run_id, "workflowUrl": "https://shop.example.com/api/workflows/order/",
                "workflowState": "RUN_SUCCESS", "workflowRunCreatedAt": created, "label": "vip"}

    runs = [run("wfr_a_123456", 1_000), run("wfr_b_123456", 2_000), run("wfr_a_123456", 3_000)]
    names = list(frames.runs_frame(runs)["run_name"])
    assert names == ["order · vip · wfr_a_123456", "order · vip · wfr_b_123456", "order · vip · 123456 · resumed"]
    # the same names whatever order the runs come in
    assert list(frames.runs_frame(runs[::-1])["run_name"]) == names[::-1]


def test_a_millisecond_run_is_a_bar_on_an_axis_of_minutes_with_its_duration_written(queue, flows, label):
    quick = flows.steps_run(label=label)
    assert flows.finish(quick) == "RUN_SUCCESS"
    later = datetime.now(UTC) + timedelta(minutes=30)  # the widget's clock: the running run is 30 min long
    with flows.blocked_run(label=label) as running:
        w = timeline(queue, label=label, now=lambda: later)
        assert w.run_count == 2
        bars = [t for t in w.gantt.data if isinstance(t, go.Bar)]
        assert {t.name for t in bars} == {"RUN_SUCCESS", "RUN_STARTED"}
        left = min(float(np.min(t.base)) for t in bars)
        right = max(float(np.max(np.asarray(t.base) + np.asarray(t.x))) for t in bars)
        assert right - left > 29 * 60_000  # an axis of half an hour
        done = next(t for t in bars if t.name == "RUN_SUCCESS")
        took = run_of(queue, quick).workflow_run_completed_at - run_of(queue, quick).workflow_run_created_at
        assert took < 1000  # a run of milliseconds...
        assert done.x[0] >= 0.005 * (right - left)  # ...drawn as a bar a person sees (not a 0-width sliver)
        assert done.text[0] == f"{took} ms" and done.textposition == "outside"  # its real duration, written
        assert f"{took} ms" in done.hovertext[0]
        assert not [t for t in w.gantt.data if isinstance(t, go.Scatter)]  # no diamonds instead of bars
    assert flows.finish(running) == "RUN_SUCCESS"


# -- the steps chart ----------------------------------------------------------------------------------
def test_the_steps_chart_has_a_legend_of_its_colours(queue, flows, label):
    failed = flows.steps_run(fail=True, label=label)  # a retried fetch, and a report that fails for good
    assert flows.finish(failed) == "RUN_FAILED"
    w = timeline(queue, label=label)
    w.select_run(key(failed))
    fig = w.steps_fig.figure
    assert fig.layout.showlegend is True
    assert legend(fig) == {"success": "#2ca02c", "retry": "#ff7f0e", "failed": "#d62728"}
    # every bar's colour is its legend entry's
    by_kind = {t.name: set(t.y) for t in fig.data}
    assert {lbl.split(" ", 1)[1] for lbl in by_kind["retry"]} == {"fetch", "report"}
    assert {lbl.split(" ", 1)[1] for lbl in by_kind["failed"]} == {"report"}
    with flows.blocked_run(label=label) as handle:
        w.refresh()
        w.select_run(key(handle))
        assert legend(w.steps_fig.figure) == {"success": "#2ca02c", "in progress": "#1f77b4"}
        (progress,) = [t for t in w.steps_fig.data if t.name == "in progress"]
        assert list(progress.marker.pattern.shape) == ["/"]  # the running step, hatched: open-ended


def test_a_resumed_runs_kept_step_is_marked_kept_at_its_start_not_drawn_from_the_earlier_run(queue, flows, label):
    token, failed = flows.failed_run(label=label)  # prepare succeeded, flaky failed: in the DLQ
    result = queue.resume(run_of(queue, failed).dlq_id, retries=3)
    assert flows.finish_result(result) == "RUN_SUCCESS"
    assert flows.prepared[token] == 1  # prepare was kept, not run again
    w = timeline(queue, label=label)
    w.select_run(key(result))
    run_start = float(result.workflow_created_at)
    fig = w.steps_fig.figure
    (mark,) = [t for t in fig.data if t.name == "kept from the earlier run"]
    assert isinstance(mark, go.Scatter) and list(mark.y) == ["g1·0 prepare"]
    assert round(mark.x[0]) == run_start  # at the resumed run's start...
    for bar in (t for t in fig.data if isinstance(t, go.Bar)):  # ...and no bar from the earlier run's time
        assert "g1·0 prepare" not in list(bar.y) and round(min(bar.base)) >= run_start
    assert "kept from the earlier run" in legend(fig)
    assert "not run again" in mark.hovertext[0]
    # the steps frame says so, and keeps when the step really ran
    assert list(w.steps_frame.loc[w.steps_frame["kept"], "step_name"]) == ["prepare"]
    prepare = w.steps_frame.set_index("step_name").loc["prepare"]
    assert prepare["start"] == prepare["end"] == w.frame.set_index("key").loc[key(result), "created_at"]
    assert prepare["created_at"] < prepare["start"]  # it ran in the earlier run
    # the detail panel: a "kept" badge where a duration would be, not the time between the runs
    row = re.search(r"<td>prepare</td>.*?</tr>", w.detail.value).group(0)
    assert ">kept</span>" in row and " min " not in row


# -- the DLQ --------------------------------------------------------------------------------------
def test_the_dlq_is_a_table_of_failures_loaded_with_the_runs(queue, flows, label):
    made = [flows.failed_run(label=label)[1] for _ in range(2)]
    w = timeline(queue, label=label)  # no "Load DLQ": the entries come with the runs
    assert w.dlq_count == 2
    table = w.dlq_panel.w_table.value
    heads = re.findall(r"<th>(.*?)</th>", table)
    assert heads == ["run", "failed step", "status", "response", "attempts", "entered (UTC)"]
    assert "table-layout: fixed" in table  # fits the output's width, cells cut with an ellipsis
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1])
    assert len(rows) == 2
    for handle in made:
        entry = run_of(queue, handle)
        (row,) = [r for r in rows if handle.workflow_run_id in r]
        cells = re.findall(r"<td>(.*?)</td>", row)
        assert f"flaky · {label} · {handle.workflow_run_id[-6:]}" in cells[0]
        assert cells[1] == "flaky" and cells[2] == "500" and cells[4] == "1"  # no retries: one attempt
        body = queue.dlq_message(entry.dlq_id).response_body
        assert "gateway 503" in body and f"title='{html.escape(body)}'" in cells[3]  # the whole body on hover
        assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", cells[5])
    # a saved notebook shows the table too
    assert "svckit-dlq-table" in static_html(w) and f"flaky · {label}" in static_html(w)


def test_the_dlq_follows_the_selected_run_and_acts_on_its_entry(queue, flows, label):
    (_, a), (_, b) = flows.failed_run(label=label), flows.failed_run(label=label)
    ok = flows.steps_run(label=label)
    assert flows.finish(ok) == "RUN_SUCCESS"
    w = timeline(queue, label=label)
    delete = w.dlq_panel.w_dlq_buttons["delete"]
    assert w.dlq_selected == () and delete.disabled and delete.button_style == ""  # nothing to delete: not red

    def ticked_rows() -> list[str]:
        return [r for r in re.findall(r"<tr[^>]*>.*?</tr>", w.dlq_panel.w_table.value) if "svckit-dlq-ticked" in r]

    w.select_run(key(a))
    assert w.dlq_selected == (run_of(queue, a).dlq_id,)
    (row,) = ticked_rows()
    assert a.workflow_run_id in row and "svckit-dlq-current" in row
    assert not delete.disabled and delete.button_style == "danger"
    w.select_run(key(b))
    assert w.dlq_selected == (run_of(queue, b).dlq_id,) and b.workflow_run_id in ticked_rows()[0]
    w.select_run(key(ok))  # a run with no DLQ entry: nothing ticked, nothing to act on
    assert w.dlq_selected == () and not ticked_rows() and delete.disabled and delete.button_style == ""
    # the selected run's entry, deleted behind a confirmation that names the run
    w.select_run(key(b))
    delete.click()
    assert f"flaky · {label} · {b.workflow_run_id[-6:]}" in w.dlq_panel.w_dlq_confirm_text.value
    w.dlq_panel.w_dlq_confirm.click()
    assert "deleted 1 DLQ entry" in w.dlq_panel.w_dlq_msg.value
    assert run_of(queue, b).dlq_id is None and run_of(queue, a).dlq_id is not None
    assert w.dlq_count == 1 and b.workflow_run_id not in w.dlq_panel.w_table.value
    assert w.dlq_selected == () and delete.disabled and delete.button_style == ""
