"""The hosted service's official JavaScript SDKs (@upstash/redis, -ratelimit, -lock, -vector, -qstash,
-workflow), at the versions tests/compat/js/package-lock.json pins, unchanged, against a live sandbox.

One pytest test per ``tests/compat/js/*.test.mjs`` file: ``node --test`` runs the file in a child
process whose environment holds the sandbox's settings under the VENDOR's variable names
(:func:`svckit.config.vendor_env`), so the JS tests build their clients as an app does
(``Redis.fromEnv()``, ``Index.fromEnv()``, ``new Client({baseUrl: process.env.QSTASH_URL, ...})``).
Node's own report (one line per JS test) is the failure message.

The sandbox is the module's ``blank_sandbox`` (every area, ``redis-server`` behind the key-value area,
no demo data), shared by the files; each file keeps to keys, namespaces and labels of its own. Before
each file the queue is made fresh (:func:`fresh_queue`: nothing in progress, an empty DLQ), then
:data:`SETUP` makes what that file needs and tells it through ``COMPAT_*`` variables: for
qstash.test.mjs, :func:`seed_queue` (workflow runs, some failed into the DLQ); for workflow.test.mjs,
the workflows of tests/compat/workflows.py.

Install the SDKs first: ``npm ci --prefix tests/compat/js`` (CI does, .ci/run).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from svckit.config import vendor_env
from svckit.sandbox import Sandbox
from tests.compat.workflows import register_workflows
from tests.conftest import IN_CI, require_binary

JS_DIR = Path(__file__).parent / "js"
JS_FILES = sorted(JS_DIR.glob("*.test.mjs"))
#: one file's run of ``node --test`` may take this long (the first text query waits for the model)
NODE_TIMEOUT = 120.0

# -- the queue area's workflow runs ----------------------------------------------------------------
#: a workflow whose second step always fails (its runs end RUN_FAILED, in the DLQ), and one that succeeds
FAIL_URL = "https://compat.example/fail"
OK_URL = "https://compat.example/ok"


class PaymentDeclined(RuntimeError):
    """What the failing workflow's ``charge`` step raises (the DLQ entry's response body names it)."""


def _failing_workflow(context: Any) -> None:
    context.run("reserve", lambda: {"reserved": context.body})

    def charge() -> None:
        raise PaymentDeclined("card declined: 402")

    context.run("charge", charge)


def _succeeding_workflow(context: Any) -> Any:
    return context.run("ship", lambda: {"shipped": context.body})


def _queue(sandbox: Sandbox) -> Any:
    """The sandbox's queue area: its ``runner`` (svckit/sandbox/runner.py) and ``store``."""
    return sandbox.area("queue")


def fresh_queue(sandbox: Sandbox) -> None:
    """Cancel every run still in progress and empty the DLQ: a JS file that acts on ``{ all: true }``
    (workflow.test.mjs) then meets only runs of its own. The runs' history (logs, events) stays."""
    queue = _queue(sandbox)
    queue.runner.cancel_many()  # a canceled run never reaches the DLQ
    queue.runner.delete_dlq([row["dlq_id"] for row in queue.store.query("SELECT dlq_id FROM dlq")])


def seed_queue(sandbox: Sandbox, tag: str = "js", *, failing: int = 3, succeeding: int = 2) -> dict[str, str]:
    """Register the two workflows on the queue area's runner and make runs of them, labelled with
    ``tag`` (``<tag>-fail``, ``<tag>-ok``): ``failing`` runs that end in the DLQ (each step is tried
    twice: ``retries=1``) and ``succeeding`` ones. Returns once every run ended, as ``COMPAT_*``
    variables for the JS tests (URLs, labels, run ids, comma-separated)."""
    runner = _queue(sandbox).runner
    runner.register(FAIL_URL, _failing_workflow)
    runner.register(OK_URL, _succeeding_workflow)
    fail_label, ok_label = f"{tag}-fail", f"{tag}-ok"
    failed = [runner.trigger(FAIL_URL, {"order": i}, label=fail_label, retries=1) for i in range(failing)]
    succeeded = [runner.trigger(OK_URL, {"order": i}, label=ok_label) for i in range(succeeding)]
    for handles, state in ((failed, "RUN_FAILED"), (succeeded, "RUN_SUCCESS")):
        ended = [runner.wait(handle) for handle in handles]
        assert ended == [state] * len(handles), f"seed_queue: runs ended {ended}, not {state}"
    in_dlq = _queue(sandbox).store.query(
        "SELECT COUNT(*) AS n FROM dlq d JOIN runs r ON r.seq = d.run_seq WHERE r.label = ?", (fail_label,))
    assert in_dlq[0]["n"] == failing, f"seed_queue: {in_dlq[0]['n']} of {failing} failed runs in the DLQ"
    return {
        "COMPAT_FAIL_URL": FAIL_URL,
        "COMPAT_OK_URL": OK_URL,
        "COMPAT_FAIL_LABEL": fail_label,
        "COMPAT_OK_LABEL": ok_label,
        "COMPAT_FAIL_RUN_IDS": ",".join(h.workflow_run_id for h in failed),
        "COMPAT_OK_RUN_IDS": ",".join(h.workflow_run_id for h in succeeded),
    }


def setup_workflows(sandbox: Sandbox, tag: str) -> dict[str, str]:
    """The workflows workflow.test.mjs starts and acts on itself (tests/compat/workflows.py)."""
    return register_workflows(_queue(sandbox).runner)


#: what a JS file needs made in the sandbox before it runs: file stem -> (sandbox, tag) -> COMPAT_* variables
SETUP: dict[str, Callable[[Sandbox, str], dict[str, str]]] = {
    "qstash": seed_queue,
    "workflow": setup_workflows,
}


# -- running node -----------------------------------------------------------------------------------
def node_env(sandbox: Sandbox, extra: dict[str, str]) -> dict[str, str]:
    """What the node process sees: the vendor's variables, PATH and HOME, telemetry off, ``extra``."""
    env = {**vendor_env(sandbox.env), "UPSTASH_DISABLE_TELEMETRY": "1", **extra}
    for name in ("PATH", "HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    if "SVC_CA_FILE" in env:  # a sandbox on TLS: node trusts its CA like the Python clients do
        env["NODE_EXTRA_CA_CERTS"] = env["SVC_CA_FILE"]
    return env


def run_node(node: str, js_file: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``node --test --test-reporter=spec FILE`` in tests/compat/js; fails the test after
    :data:`NODE_TIMEOUT` (killing node and the child it runs the file in) with what it printed."""
    args = [node, "--test", "--test-reporter=spec", js_file.name]
    with subprocess.Popen(args, cwd=JS_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=NODE_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            pytest.fail(f"{js_file.name}: node --test did not finish within {NODE_TIMEOUT:.0f} s\n"
                        f"--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}")
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def node() -> str:
    path = require_binary("node")
    if not (JS_DIR / "node_modules").is_dir():
        message = "run: npm ci --prefix tests/compat/js"  # the JS SDKs are not installed
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.mark.parametrize("js_file", JS_FILES, ids=[f.name.removesuffix(".test.mjs") for f in JS_FILES])
def test_js_sdk(js_file: Path, node: str, blank_sandbox: Sandbox) -> None:
    name = js_file.name.removesuffix(".test.mjs")
    fresh_queue(blank_sandbox)
    setup = SETUP.get(name)
    env = node_env(blank_sandbox, setup(blank_sandbox, f"js-{name}") if setup else {})
    done = run_node(node, js_file, env)
    assert done.returncode == 0, (f"{js_file.name}: node --test exited with {done.returncode}\n"
                                  f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}")
