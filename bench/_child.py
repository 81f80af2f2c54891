"""A sandbox in a child process, for benchmarks: the clients they measure must not share its GIL.

``with sandbox_process(areas=["kv"], backend="redis") as env:`` starts ``python bench/_child.py``
with those Sandbox keyword arguments and yields its SVC_* variables plus ``REDIS_URL`` (the backing
Redis, for the redis-py baseline) and ``SANDBOX_PID`` (for CPU accounting from /proc) once it serves.

``code_env(tree, without)`` is the environment that runs a bench (and so its sandbox child) on the
svckit of another checkout and without some modules: the ``--before`` runs of kv_bench and
load_bench use it to measure an older commit side by side with this one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: what the code ran on before issue 14 made uvicorn use them: ``--before-without httptools,uvloop``
#: measures a tree of that time as it ran
C_SERVER_MODULES = ("httptools", "uvloop")

# A sitecustomize that makes the modules named in SVCKIT_BENCH_WITHOUT unimportable in every Python
# process started with it on PYTHONPATH (the bench, and the sandbox child it starts).
_BLOCKER = ("import os, sys\n"
            "for _name in os.environ.get('SVCKIT_BENCH_WITHOUT', '').split(','):\n"
            "    if _name:\n"
            "        sys.modules[_name] = None\n")


@contextmanager
def code_env(tree: str | None = None, without: Sequence[str] = ()) -> Iterator[dict[str, str]]:
    """Environment for a child Python that imports svckit from ``tree`` (a checkout, e.g. a git
    worktree of an older commit; None: the installed one) and cannot import ``without``."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="svckit-bench-") as tmp:
        path = [p for p in (tree, tmp if without else None, env.get("PYTHONPATH")) if p]
        if without:
            Path(tmp, "sitecustomize.py").write_text(_BLOCKER)
            env["SVCKIT_BENCH_WITHOUT"] = ",".join(without)
        if path:
            env["PYTHONPATH"] = os.pathsep.join(path)
        yield env


def serve(options: dict[str, Any]) -> None:
    from svckit.sandbox import Sandbox

    def ready(sb: Sandbox) -> None:
        for name, value in sb.env.items():
            print(f"{name}={value}")
        if "kv" in sb.area_names:
            print(f"REDIS_URL={sb.area('kv').redis_url}")  # type: ignore[attr-defined]
        print("READY", flush=True)

    Sandbox(**options).serve_forever(on_ready=ready)


@contextmanager
def child_env(argv: Sequence[str], extra: dict[str, str] | None = None) -> Iterator[dict[str, str]]:
    """Run ``argv``, a child that prints NAME=value lines and then READY once it serves; yield those
    variables (with ``extra``) while it runs, and stop it afterwards."""
    child = subprocess.Popen(list(argv), stdout=subprocess.PIPE, text=True)
    env: dict[str, str] = {name: value.format(pid=child.pid) for name, value in (extra or {}).items()}
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.strip() == "READY":
                break
            name, _, value = line.strip().partition("=")
            env[name] = value
        else:
            raise RuntimeError(f"{argv[-1][:60]} exited before it was ready")
        yield env
    finally:
        child.terminate()
        child.wait(timeout=30)


@contextmanager
def sandbox_process(**options: Any) -> Iterator[dict[str, str]]:
    # the child inherits this process's environment: a bench started through code_env() runs the
    # sandbox from the same tree, without the same modules
    with child_env([sys.executable, __file__, json.dumps(options)], {"SANDBOX_PID": "{pid}"}) as env:
        yield env


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
