"""Both widgets against the real sandbox over HTTP (real clients, real workflow runner, real index)."""

from __future__ import annotations

import time

import pytest

from svckit.widgets.vector_playground import VectorPlayground
from svckit.widgets.workflow_timeline import WorkflowTimeline

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def clients(demo_sandbox):
    c = demo_sandbox.connect()
    yield c
    c.close()


def test_playground_queries_the_service_and_maps_the_fetched_vectors(demo_sandbox):
    w = VectorPlayground.from_settings(demo_sandbox.settings, autorun=False)
    assert w.backend == "remote" and "service" in w.w_banner.value
    w.controls.w_query.value = "parse a URL into its parts"
    assert w.result_count == 10 and "from the hybrid index (service)" in w.status
    assert w.results.score_fig.data[0].y[0].endswith(w.hits.iloc[0]["id"])
    assert set(w.by_mode) == {"DENSE", "SPARSE", "HYBRID"} and len(w.by_mode["DENSE"]) == 10
    w.tabs.selected_index = 2
    pm = w.projection_map()
    assert pm.source == "service" and len(pm.ids) == 40  # the vectors the sandbox index holds
    assert "(service)" in w.projection_fig.layout.title.subtitle.text
    assert {t.name for t in w.projection_fig.data} >= {"hits", "query"}


def test_playground_filter_goes_to_the_service(demo_sandbox):
    w = VectorPlayground.from_settings(demo_sandbox.settings, autorun=False, index_kind="dense")
    w.controls.w_filter.value = "package = 'argparse'"
    w.query("parse command line options")
    assert len(w.hits) > 0 and set(w.hits["metadata.package"]) == {"argparse"}


def test_playground_falls_back_on_a_422_index(demo_sandbox, local_corpus):
    from svckit.vector import Vector

    nomodel = Vector.from_settings(demo_sandbox.settings, kind="nomodel")
    w = VectorPlayground({"hybrid": nomodel}, corpus=local_corpus, autorun=False)
    w.query("sourdough bread")
    assert w.backend == "local" and "422" in w.w_banner.value
    assert w.hits.iloc[0]["id"] == "doc-7"


def test_timeline_shows_seeded_runs_steps_and_resumes_a_failed_run(clients):
    w = WorkflowTimeline(clients.queue)
    assert w.run_count >= 8
    assert {"RUN_SUCCESS", "RUN_FAILED", "RUN_CANCELED"} <= set(w.frame["state"])
    retried = w.frame[w.frame["label"] == "nightly"].iloc[0]
    steps = w.select_run(retried["key"])
    assert (steps["state"] == "STEP_RETRY").sum() == 2 and steps["retries"].max() == 2
    assert "STEP_RETRY" in w.detail.value
    failed = w.frame[w.frame["state"] == "RUN_FAILED"].iloc[0]
    w.select_run(failed["key"])
    run = w.selected
    # the DLQ id found by listing the DLQ is the one the service attached to the run
    assert w.dlq_panel.dlq_id_of(run.model_copy(update={"dlq_id": None})) == run.dlq_id
    w.w_resume.click()
    assert run.dlq_id in w.w_confirm_text.value
    w.w_retries.value = "0"
    w.w_confirm.click()
    assert "resumed from DLQ" in w.w_resume_msg.value, w.w_resume_msg.value
    new_key = f"{w.last_resume.workflow_run_id}@{w.last_resume.workflow_created_at}"
    assert w.selected_run == new_key and new_key in set(w.frame["key"])
    # the resumed run settles (the ledger upload always fails) and a refresh shows it
    deadline = time.monotonic() + 30
    while w.selected.workflow_state == "RUN_STARTED" and time.monotonic() < deadline:
        time.sleep(0.2)
        w.refresh()
    assert w.selected_run == new_key
    assert w.selected.workflow_state == "RUN_FAILED"
    # steps that succeeded before were copied, not run again: the resumed run starts past them
    assert "collect-invoices" in set(w.steps_frame["step_name"])
