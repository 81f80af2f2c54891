"""One headless run of every demo notebook (what ``svckit demo --execute`` does), shared by the tests
that read what it wrote: the executed notebooks and their offline HTML pages."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from svckit import demo
from tests.conftest import built_once


class Executed(NamedTuple):
    """The folder of executed notebooks and HTML pages, each notebook's run by name, and every
    secret of the sandbox they ran against (read after the run: a rotation's new token included)."""

    folder: Path
    runs: dict[str, demo.NotebookRun]
    secrets: dict[str, str]


def _execute_every_notebook(out: Path) -> tuple[Path, dict[str, demo.NotebookRun], dict[str, str]]:
    from svckit.sandbox import Sandbox

    with Sandbox(out / "sandbox", seed="demo") as sb:
        at_start = sb.env["SVC_QUEUE_TOKEN"]
        runs = demo.execute_notebooks(demo.find_notebooks(), out, demo.kernel_env(sb.env), timeout=300)
        account = sb.area("account").store.queue_account()  # type: ignore[attr-defined]
        secrets = {name: sb.env[name] for name in ("SVC_KV_TOKEN", "SVC_KV_READONLY_TOKEN", "SVC_VECTOR_TOKEN",
                                                   "SVC_DEVAPI_KEY", "SVC_QUEUE_TOKEN")}
        secrets.update({"queue token at the start": at_start, "queue token": account["token"],
                        "queue password": account["password"]})
    return out, {run.notebook.name: run for run in runs}, secrets  # plain values: pickled for other workers


@pytest.fixture(scope="session")
def executed(tmp_path_factory) -> Executed:
    """Every packaged notebook run top to bottom against one fresh demo sandbox (every area), written
    as a notebook with its widget state and as an offline HTML page; once per test run (some two
    minutes of a worker's time, more with the embedding cache cold), whichever worker asks first."""
    return Executed(*built_once(tmp_path_factory, "executed", _execute_every_notebook))
