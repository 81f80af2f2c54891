"""State survives restarts: a sandbox killed mid-run loses no finished step, and the run goes on after
the restart (the delivery the kill cut short is made again: at least once)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter

from svckit.account import Account
from svckit.config import Settings
from svckit.queue import Queue
from svckit.sandbox import Sandbox
from tests.conftest import eventually

URL = "https://app.example.com/api/workflows/long"

CHILD = textwrap.dedent(f"""
    import sys, threading
    from svckit.sandbox import Sandbox

    def wf(context):
        context.run("first", lambda: {{"a": 1}})
        context.run("second", lambda: [2, 3])
        context.run("third", lambda: threading.Event().wait())   # blocks until the process dies
        return context.run("fourth", lambda: 4)

    with Sandbox(sys.argv[1], areas=["account", "queue"], queue_retry_delay=0) as sb:
        sb.area("queue").runner.register({URL!r}, wf)
        for name, value in sb.env.items():
            print(f"{{name}}={{value}}", flush=True)
        print("READY", flush=True)
        threading.Event().wait()
""")


def _start_child(data_dir) -> tuple[subprocess.Popen, Settings]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(data_dir)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines = []
    for line in proc.stdout:  # type: ignore[union-attr]
        if line.strip() == "READY":
            break
        lines.append(line)
    return proc, Settings.from_lines(lines)


def test_a_sandbox_killed_mid_run_keeps_its_finished_steps_and_the_run_goes_on_after_the_restart(tmp_path):
    data_dir = tmp_path / "data"
    proc, settings = _start_child(data_dir)
    try:
        with Queue.from_settings(settings) as q:
            started = q.trigger(URL, {"job": 1})

            def third_running() -> bool:  # the delivery of "second"'s result is in flight: it runs "third"
                return any(e.step_name == "second" and str(e.state.value) == "ACTIVE"
                           for e in q.events(workflow_run_id=started.workflow_run_id).events)

            eventually(third_running, "the third step running", 30)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    counts = Counter()

    def wf(context):
        context.run("first", lambda: counts.update(["first"]) or {"a": 1})
        context.run("second", lambda: counts.update(["second"]) or [2, 3])
        context.run("third", lambda: counts.update(["third"]) or "done")
        return context.run("fourth", lambda: counts.update(["fourth"]) or 4)

    with Sandbox(data_dir, areas=["account", "queue"], queue_retry_delay=0, queue_backoff_scale=0.001) as sb:
        runner = sb.area("queue").runner
        runner.register(URL, wf)
        assert sb.settings.queue_token == settings.queue_token  # same data dir, same account
        handle = runner.handle(started.workflow_run_id, started.workflow_created_at)
        assert runner.wait(handle) == "RUN_SUCCESS"  # the same run, not a new one
        assert counts == Counter(third=1, fourth=1)  # first and second were not executed again
        with sb.connect() as clients:
            (run,) = clients.queue.workflow_logs(workflow_run_id=started.workflow_run_id).runs
            assert json.loads(run.step("first").out) == {"a": 1} and json.loads(run.step("fourth").out) == 4
            assert clients.queue.dlq().messages == []


def test_account_and_runs_survive_a_graceful_restart(tmp_path):
    data_dir = tmp_path / "data"
    with Sandbox(data_dir, areas=["account", "queue"], seed="demo", queue_retry_delay=0) as sb:
        with Account.from_settings(sb.settings) as account:
            acct = account.queue_account()
            account.upgrade_queue_plan(acct.customer_id, "paid")
            account.rename_search_index("idx_products", "catalog")
            rotated = account.rotate_queue_token()
        with Queue.from_settings(sb.settings) as q:
            runs_before = [r.to_wire() for r in q.iter_runs()]
            dlq_before = [m.dlq_id for m in q.iter_dlq()]
    with Sandbox(data_dir, areas=["account", "queue"], seed="demo", queue_retry_delay=0) as sb:
        with Account.from_settings(sb.settings) as account:
            again = account.queue_account()
            assert again == rotated and again.reserved_type == "paid"
            assert sb.area("account").store.search_indexes()["idx_products"] == "catalog"
        with Queue.from_settings(sb.settings) as q:
            assert [r.to_wire() for r in q.iter_runs()] == runs_before  # demo not seeded twice
            assert [m.dlq_id for m in q.iter_dlq()] == dlq_before
            # demo workflows are registered again, so their DLQ entries stay resumable
            resumed = q.resume(dlq_before[0], retries=0)
            runner = sb.area("queue").runner
            assert runner.wait(runner.handle(resumed.workflow_run_id, resumed.workflow_created_at)) == "RUN_FAILED"
