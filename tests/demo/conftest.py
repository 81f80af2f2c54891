"""One headless run of every demo notebook (what ``svckit demo --execute`` does), shared by the tests
that read what it wrote: the executed notebooks and their offline HTML pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from svckit import demo


@pytest.fixture(scope="session")
def executed(tmp_path_factory) -> Iterator[tuple[Path, dict[str, demo.NotebookRun]]]:
    """Every packaged notebook run top to bottom against one fresh demo sandbox (every area), written
    as a notebook with its widget state and as an offline HTML page: (folder, runs by name)."""
    from svckit.sandbox import Sandbox

    out = tmp_path_factory.mktemp("executed")
    with Sandbox(tmp_path_factory.mktemp("demo-sandbox"), seed="demo") as sb:
        runs = demo.execute_notebooks(demo.find_notebooks(), out, demo.kernel_env(sb.env), timeout=300)
    yield out, {run.notebook.name: run for run in runs}
