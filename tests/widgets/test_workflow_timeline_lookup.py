"""The timeline pages through the one cursor loop: its runs through ``iter_runs`` (limit = max runs),
and a selected failed run whose DLQ entry was not loaded is looked up on a background job, so the
click returns before any DLQ page is read (no browser: the widget's traits and a FakeQueue)."""

from __future__ import annotations

import threading
from typing import Any

from svckit import frames
from svckit.widgets.workflow_timeline import WorkflowTimeline
from tests.widgets.fakes import T0, FakeQueue, make_run


class GatedQueue(FakeQueue):
    """A FakeQueue whose look-ups of one run's DLQ entries wait for ``gate`` (a slow service)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate, self.looked_up = threading.Event(), threading.Event()

    def dlq(self, cursor: str | None = None, count: int | None = None, **filters: Any):
        if "workflow_run_id" in filters:
            self.looked_up.set()
            assert self.gate.wait(5), "the look-up ran in the click (the gate opens only after it returned)"
        return super().dlq(cursor, count, **filters)


def test_the_runs_come_through_iter_runs_and_stop_at_max_runs() -> None:
    queue = FakeQueue([make_run(i, "RUN_SUCCESS") for i in range(25)])
    w = WorkflowTimeline(queue, max_runs=12)
    logs = [call for call in queue.calls if call[0] == "logs"]
    assert w.run_count == 12 and len(logs) == 2 == w.pages_loaded  # 2 pages of 10, not 3
    assert "capped" in w.status
    assert w.w_progress.value == 12 and "12 runs · 2 round trips" in w.w_progress_label.value


def test_selecting_a_failed_run_looks_its_dlq_entry_up_after_the_click_returns() -> None:
    runs = [make_run(i, "RUN_FAILED") for i in range(12)]
    # the newest run's entry is the oldest: not among the 10 entries loaded beside the 10 runs shown
    entries = [FakeQueue._entry(f"dlq-{i}", r, T0 + (100 - i) * 60_000) for i, r in enumerate(runs)]
    queue = GatedQueue(runs, dlq=entries)
    w = WorkflowTimeline(queue, max_runs=10)
    assert w.dlq_count == 10 and not w.dlq_panel.complete
    newest = frames.run_key(runs[11])

    w.select_run(newest)  # what a click in the chart calls
    assert not queue.gate.is_set()  # the click returned while the look-up waits for its page
    assert w.w_resume.disabled and "looking for its DLQ entry" in w.w_resume_msg.value
    assert w.dlq_panel.w_lookup.layout.display == "flex" and w.dlq_panel.lookup_job.running

    assert queue.looked_up.wait(5)
    queue.gate.set()
    assert w.dlq_panel.lookup_job.wait(5)
    assert not w.w_resume.disabled and w.w_resume_msg.value == ""
    assert w.dlq_panel.known_dlq_id(runs[11]) == "dlq-11"
    assert "1 round trip" in w.dlq_panel.w_lookup_label.value  # its progress was shown
    assert w.dlq_panel.w_lookup.layout.display == "none"


def test_a_look_up_that_finds_nothing_says_so_and_keeps_resume_off() -> None:
    runs = [make_run(i, "RUN_FAILED") for i in range(12)]
    entries = [FakeQueue._entry(f"dlq-{i}", r, T0 + (100 - i) * 60_000) for i, r in enumerate(runs[:11])]
    entries += [FakeQueue._entry(f"other-{i}", runs[i], T0) for i in range(3)]  # more than 10 entries
    queue = GatedQueue(runs, dlq=entries)
    queue.gate.set()
    w = WorkflowTimeline(queue, max_runs=10)
    w.select_run(frames.run_key(runs[11]))  # no entry holds it
    assert w.dlq_panel.lookup_job.wait(5)
    assert w.w_resume.disabled and "no DLQ entry holds run wfr_0011" in w.w_resume_msg.value
