"""``built_once`` (tests/conftest.py): a session fixture too costly for every xdist worker is built by
the first worker that asks and read by the others; a build that fails leaves nothing behind."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.conftest import built_once


class Worker:
    """What ``built_once`` reads of pytest's ``tmp_path_factory``: a worker's own basetemp, which
    pytest-xdist makes a folder of the run's folder."""

    def __init__(self, run: Path, name: str) -> None:
        self.basetemp = run / name
        self.basetemp.mkdir(parents=True, exist_ok=True)

    def getbasetemp(self) -> Path:
        return self.basetemp


def test_workers_of_one_run_share_one_build_and_the_next_run_builds_again(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    builds: list[Path] = []
    entered, release = threading.Event(), threading.Event()

    def build(folder: Path) -> dict[str, str]:
        builds.append(folder)
        entered.set()
        release.wait(10)  # the other worker asks while this one is still building
        (folder / "made").write_text("x")
        return {"folder": str(folder)}

    run = tmp_path / "pytest-1"
    results: list[dict[str, str]] = []
    first = threading.Thread(target=lambda: results.append(built_once(Worker(run, "popen-gw0"), "thing", build)))
    first.start()
    assert entered.wait(10)
    second = threading.Thread(target=lambda: results.append(built_once(Worker(run, "popen-gw1"), "thing", build)))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert results == [{"folder": str(run / "thing")}] * 2
    assert builds == [run / "thing"] and (run / "thing" / "made").exists()
    # another run (another folder) builds its own
    assert built_once(Worker(tmp_path / "pytest-2", "popen-gw0"), "thing", build) == {
        "folder": str(tmp_path / "pytest-2" / "thing")}
    assert len(builds) == 2


def test_a_failed_build_is_built_again_by_the_next_worker(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    run = tmp_path / "pytest-1"

    def broken(folder: Path) -> str:
        (folder / "half").write_text("x")
        raise RuntimeError("the sandbox did not start")

    with pytest.raises(RuntimeError, match="did not start"):
        built_once(Worker(run, "popen-gw0"), "thing", broken)
    assert built_once(Worker(run, "popen-gw1"), "thing", lambda folder: sorted(p.name for p in folder.iterdir())) == []


def test_without_xdist_the_run_is_the_process_own(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    worker = Worker(tmp_path / "pytest-1", "basetemp")
    assert built_once(worker, "thing", lambda folder: str(folder)) == str(worker.basetemp / "thing")
