"""Workflow runs made on the sandbox's runner for a test, waited for until they end."""

from __future__ import annotations

from typing import Any


def finish_runs(runner: Any, url: str, n: int, workflow: Any, **options: Any) -> None:
    """Register ``workflow`` at ``url``, trigger it ``n`` times and wait for every run to end."""
    runner.register(url, workflow)
    handles = [runner.trigger(url, {"n": i}, **options) for i in range(n)]
    for handle in handles:
        runner.wait(handle)


def boom() -> None:
    """A step that fails."""
    raise RuntimeError("boom")
