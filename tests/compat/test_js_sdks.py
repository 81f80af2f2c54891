"""The hosted service's official JavaScript SDKs (@upstash/redis, -ratelimit, -lock, -vector, -qstash,
-workflow), at the versions tests/compat/js/package-lock.json pins, unchanged, against a live sandbox.

One pytest test per ``tests/compat/js/*.test.mjs`` file: ``node --test`` runs the file in a child
process whose environment holds the sandbox's settings under the VENDOR's variable names
(what ``svckit sandbox --env vendor`` prints), so the JS tests build their clients as an app does
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

from svckit.cli import env_lines
from svckit.sandbox import Sandbox
from tests.compat.conftest import JS_DIR
from tests.compat.workflows import register_workflows, seed_queue

JS_FILES = sorted(JS_DIR.glob("*.test.mjs"))
#: one file's run of ``node --test`` may take this long (the first text query waits for the model)
NODE_TIMEOUT = 120.0

def _queue(sandbox: Sandbox) -> Any:
    """The sandbox's queue area: its ``runner`` (svckit/sandbox/workflow/runner.py) and ``store``."""
    return sandbox.area("queue")


def fresh_queue(sandbox: Sandbox) -> None:
    """Cancel every run still in progress and empty the DLQ: a JS file that acts on ``{ all: true }``
    (workflow.test.mjs) then meets only runs of its own. The runs' history (logs, events) stays."""
    queue = _queue(sandbox)
    queue.runner.cancel_many()  # a canceled run never reaches the DLQ
    queue.runner.delete_dlq([row["dlq_id"] for row in queue.store.query("SELECT dlq_id FROM dlq")])


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
    """What the node process sees: the lines ``svckit sandbox --env vendor`` prints (the vendor's
    variables, and NODE_EXTRA_CA_CERTS for a sandbox on TLS), PATH and HOME, telemetry off, ``extra``."""
    env = {**dict(env_lines(sandbox.env, "vendor")), "UPSTASH_DISABLE_TELEMETRY": "1", **extra}
    for name in ("PATH", "HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
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


@pytest.mark.parametrize("js_file", JS_FILES, ids=[f.name.removesuffix(".test.mjs") for f in JS_FILES])
def test_js_sdk(js_file: Path, node: str, blank_sandbox: Sandbox) -> None:
    name = js_file.name.removesuffix(".test.mjs")
    fresh_queue(blank_sandbox)
    setup = SETUP.get(name)
    env = node_env(blank_sandbox, setup(blank_sandbox, f"js-{name}") if setup else {})
    done = run_node(node, js_file, env)
    assert done.returncode == 0, (f"{js_file.name}: node --test exited with {done.returncode}\n"
                                  f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}")
