"""``seed("demo")`` gives the timeline realistic runs of every kind."""

from __future__ import annotations

from collections import Counter

from svckit.sandbox import Sandbox
from svckit.sandbox.demo_workflows import BACKFILL_URL, FANOUT_URL, INVOICE_URL, ORDER_URL, PAYMENT_SYNC_URL


def test_demo_seed(tmp_path):
    with Sandbox(tmp_path / "d", areas=["account", "queue"], seed="demo") as sb, sb.connect() as clients:
        runs = list(clients.queue.iter_runs())
        by_url = Counter((r.workflow_url, r.workflow_state) for r in runs)
        assert by_url == Counter({(ORDER_URL, "RUN_SUCCESS"): 3, (PAYMENT_SYNC_URL, "RUN_SUCCESS"): 1,
                                  (FANOUT_URL, "RUN_SUCCESS"): 1, (INVOICE_URL, "RUN_FAILED"): 2,
                                  (BACKFILL_URL, "RUN_CANCELED"): 1})
        flaky = next(r for r in runs if r.workflow_url == PAYMENT_SYNC_URL)
        assert [s.state for s in flaky.all_steps if s.step_name == "fetch-settlements"] == [
            "STEP_RETRY", "STEP_RETRY", "STEP_SUCCESS"]
        fanout = next(r for r in runs if r.workflow_url == FANOUT_URL)
        assert [g.type for g in fanout.steps] == ["sequential", "sequential", "parallel", "sequential"]
        assert len(fanout.steps[2].steps) == 4
        assert {m.workflow_url for m in clients.queue.iter_dlq()} == {INVOICE_URL}
        assert {r.label for r in runs} == {"checkout", "vip", "nightly", "marketing", "finance", "ops"}
        canceled = next(r for r in runs if r.workflow_state == "RUN_CANCELED")
        assert canceled.step("wait-for-maintenance-window").state == "STEP_CANCELED"
        assert canceled.step("copy-batches") is None
