"""``svckit doctor`` and the check that opens every test run: a missing dependency is named in
seconds, before any test runs, instead of failing dozens of tests minutes later."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from svckit import doctor
from svckit.cli import main

REPO = Path(__file__).resolve().parents[1]


def hide_package(tmp_path: Path, name: str) -> dict[str, str]:
    """An environment in which ``import name`` fails as if the package were not installed."""
    shadow = tmp_path / "shadow" / name
    shadow.mkdir(parents=True)
    message = f"No module named {name!r}"
    (shadow / "__init__.py").write_text(f"raise ModuleNotFoundError({message!r}, name={name!r})\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shadow.parent), str(REPO)])
    return env


def test_this_install_is_complete(capsys):
    assert doctor.check(doctor.TEST_EXTRAS) == []
    assert main(["doctor", "--extras", "all,dev"]) == 0
    assert "everything svckit needs is installed" in capsys.readouterr().out


def test_the_default_checks_what_svckit_all_installs_and_dev_only_when_asked(monkeypatch, capsys):
    checked: list[list[str]] = []
    monkeypatch.setattr(doctor, "check", lambda extras: checked.append(list(extras)) or [])
    assert main(["doctor"]) == 0
    assert main(["doctor", "--extras", "dev, all"]) == 0
    assert checked == [["sandbox", "local", "notebook"], ["dev", "sandbox", "local", "notebook"]]


def test_an_unknown_extra_is_a_usage_error_naming_the_known_ones():
    proc = subprocess.run([sys.executable, "-m", "svckit.cli", "doctor", "--extras", "sandbox,bogus"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 2
    assert "unknown extra 'bogus'" in proc.stderr
    assert "svckit's extras are: all, bench, dev, local, notebook, sandbox" in proc.stderr
    assert "everything svckit needs is installed" not in proc.stdout


def test_help_is_plain_text():
    proc = subprocess.run([sys.executable, "-m", "svckit.cli", "--help"], capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0 and "svckit demo" in proc.stdout
    assert "``" not in proc.stdout and ":func:" not in proc.stdout


def test_a_missing_widget_dependency_is_named(tmp_path):
    # the charts' click relay is an anywidget: without it no widget module imports, and the doctor
    # says which package to install rather than failing at the first chart
    proc = subprocess.run([sys.executable, "-m", "svckit.cli", "doctor"], env=hide_package(tmp_path, "anywidget"),
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 1
    assert "missing or wrong: anywidget" in proc.stdout
    assert "import svckit.widgets.workflow_timeline" in proc.stdout and "install 'anywidget'" in proc.stdout


def test_a_missing_module_is_named_with_the_import_that_needs_it(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "svckit.cli", "doctor", "--extras", "sandbox"],
                          env=hide_package(tmp_path, "starlette"), capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 1
    assert "import svckit.sandbox" in proc.stdout and "install 'starlette'" in proc.stdout


def test_the_test_run_stops_at_once_naming_the_package(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_cli.py"],
                          cwd=REPO, env=hide_package(tmp_path, "anywidget"), capture_output=True, text=True, check=False,
                          timeout=300)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    output = proc.stdout + proc.stderr
    assert "missing or wrong: anywidget" in output
    assert "passed" not in output  # no test ran


def test_requirements_are_read_from_the_installed_metadata(monkeypatch):
    declared = ["pandas>=999.0", "svckit-no-such-dist>=1.0", "uvicorn>=0.1; extra == 'sandbox'",
                "svckit[sandbox]; extra == 'all'", "never-on-this-platform; sys_platform == 'no-such-os'"]
    monkeypatch.setattr(doctor.metadata, "requires", lambda dist: declared)
    problems = {p.package: p for p in doctor.check_requirements(["sandbox"])}
    assert set(problems) == {"pandas>=999.0", "svckit-no-such-dist"}
    assert "is installed" in problems["pandas>=999.0"].detail
    assert problems["svckit-no-such-dist"].detail == "not installed"
    assert doctor.check_requirements([]) != []  # core requirements count with no extra at all


def test_every_widget_is_known_to_the_doctor():
    from svckit import widgets

    assert set(doctor._widget_builders()) == set(widgets.__all__)
