"""The widgets' one background job (svckit/widgets/_jobs.py): a job closed with its widget stops its
work at the next check and hands nothing back, so nothing draws on a closed widget."""

from __future__ import annotations

import threading

import ipywidgets as W
import pytest

from svckit._progress import Progress
from svckit.widgets._jobs import BackgroundJob


def test_a_closed_job_hands_nothing_back_draws_nothing_and_takes_no_new_work():
    bar, label = W.IntProgress(), W.HTML()
    job = BackgroundJob(bar, label, name="test-job")
    release, handed = threading.Event(), []

    def work(progress, cancel):
        release.wait(10)
        progress(Progress("scanning", 3, 4, "keys"))
        return "cancelled" if cancel.is_set() else "done"

    job.start(work, on_done=handed.append, on_error=handed.append)
    job.close()
    release.set()
    assert job.wait(10)
    assert handed == [] and job.cancel_event.is_set()
    assert (bar.value, label.value) == (0, "")  # the step sent after the close was not drawn
    with pytest.raises(ValueError, match="closed"):
        job.start(work)


def test_a_cancelled_job_still_hands_its_partial_result_back():
    """Cancel is not close: the work stops, and what it has is shown (the cancel rule)."""
    job = BackgroundJob(name="test-job")
    handed: list[str] = []
    job.start(lambda _progress, cancel: "cancelled" if cancel.is_set() else "done", on_done=handed.append,
              background=False)
    assert handed == ["done"]
    release = threading.Event()

    def work(_progress, cancel):
        release.wait(10)
        return "cancelled" if cancel.is_set() else "done"

    job.start(work, on_done=handed.append)
    job.cancel()
    release.set()
    assert job.wait(10) and handed == ["done", "cancelled"]
