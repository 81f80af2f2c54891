"""A sandbox in a child process, for benchmarks: the clients they measure must not share its GIL.

``with sandbox_process(areas=["kv"], backend="redis") as env:`` starts ``python bench/_child.py``
with those Sandbox keyword arguments and yields its SVC_* variables plus ``REDIS_URL`` (the backing
Redis, for the redis-py baseline) once it serves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


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
def sandbox_process(**options: Any) -> Iterator[dict[str, str]]:
    child = subprocess.Popen([sys.executable, __file__, json.dumps(options)], stdout=subprocess.PIPE, text=True)
    env: dict[str, str] = {}
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.strip() == "READY":
                break
            name, _, value = line.strip().partition("=")
            env[name] = value
        else:
            raise RuntimeError("the sandbox process exited before it was ready")
        yield env
    finally:
        child.terminate()
        child.wait(timeout=30)


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
