"""How ``svckit demo`` ends JupyterLab on Ctrl-C (``demo.run_lab``), with a stand-in for JupyterLab so
each ending can be made to happen: one still shutting its kernels down after the grace is killed, said
on stderr, and the demo still exits 0 (everything stopped); one that ends with an error code of its own
makes the demo exit 1, and says so."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from svckit import demo

#: a JupyterLab that says it is up, then takes SIGTERM as the script says
STAND_IN = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, {on_term})\n"
            "print('up', flush=True)\n"
            "time.sleep(60)\n")


def ctrl_c_once_up(log: Path):
    """``wait_for_lab`` as Ctrl-C meets it: once the stand-in is up (its line in its log), the signal."""
    def wait_for_lab(port, token, proc, timeout=120.0):
        deadline = time.monotonic() + 30
        while b"up" not in log.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.05)
        raise KeyboardInterrupt
    return wait_for_lab


@pytest.mark.parametrize(("on_term", "code", "said"), [
    ("signal.SIG_IGN", 0, "JupyterLab had not stopped 1 s after SIGTERM: killed"),
    ("lambda *_: sys.exit(3)", 1, "JupyterLab exited with 3"),
    ("signal.SIG_DFL", 0, None),
])
def test_ctrl_c_ends_jupyterlab_and_says_how(tmp_path, monkeypatch, capsys, on_term, code, said):
    monkeypatch.setattr(demo, "lab_command", lambda *a, **k: [sys.executable, "-c", STAND_IN.format(on_term=on_term)])
    workdir = tmp_path / "notebooks"
    workdir.mkdir()
    monkeypatch.setattr(demo, "wait_for_lab", ctrl_c_once_up(demo.lab_log_path(workdir)))
    monkeypatch.setattr(demo, "STOP_GRACE", 1.0)
    assert demo.run_lab(workdir, {}, no_browser=True) == code
    err = capsys.readouterr().err
    if said is None:
        assert err == ""
    else:
        assert said in err and str(demo.lab_log_path(workdir)) in err
