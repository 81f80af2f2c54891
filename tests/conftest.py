"""Shared test helpers. Each area's tests live in their own folder with their own conftest."""

from __future__ import annotations

import os
import shutil

import pytest

IN_CI = bool(os.environ.get("CI"))
#: the JupyterLab harness's fixtures (``browser``, ``screenshots``) for every browser test
pytest_plugins = ("tests.lab_harness",)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before any test: is everything installed? A missing dependency stops the run here, in
    seconds and by name, instead of failing dozens of tests (or a browser test after its timeout)."""
    from svckit import doctor

    problems = doctor.check()
    if problems:
        pytest.exit(doctor.report(problems), returncode=3)


def require_binary(name: str) -> str:
    """Path of a binary the test needs. Skips locally when it is missing; in CI a missing one fails
    (CI installs it, so its absence is a broken CI, not a reason to skip)."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is not installed, but CI must install it (.ci/run)")
        pytest.skip(f"{name} not installed")
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A failed browser test carries what a person would look at first: the notebook's error
    outputs and the browser console of every page it opened."""
    outcome = yield
    report = outcome.get_result()
    if "browser" not in item.keywords or report.when not in ("call", "teardown"):
        return
    from tests import lab_harness

    if report.failed:
        for i, page in enumerate(lab_harness.PAGES):
            report.sections.append((f"browser page {i + 1}: what went wrong", lab_harness.diagnose(page)))
    if report.when == "teardown":
        lab_harness.PAGES.clear()
