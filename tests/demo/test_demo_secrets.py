"""``svckit demo`` puts no secret on a command line: JupyterLab's token (which runs code in the user's
kernels) reaches it in its environment, JUPYTER_TOKEN (svckit/demo.py ``lab_env``), and no process
the demo starts carries a token or password in its arguments, which every local user reads."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.conftest import Haystack, stop_or_dump
from tests.demo.test_demo_cli import URL_LINE, assert_nothing_left, marked_env, processes_with, svckit

pytestmark = pytest.mark.slow


@pytest.mark.timeout(600)
def test_no_token_is_on_the_command_line_of_the_demo_or_of_what_it_starts(tmp_path):
    env, marker, tmpdir = marked_env(tmp_path)
    data = tmp_path / "data"
    proc = subprocess.Popen(svckit("demo", "--workdir", str(tmp_path / "notebooks"), "--areas", "kv,account,queue",
                                   "--no-browser", "--data-dir", str(data)),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        url = None
        deadline = time.monotonic() + 240
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            url = line.strip() if URL_LINE.match(line.strip()) else None
        assert url is not None, "the tour's URL was printed"
        token = url.partition("?token=")[2]
        command_lines = processes_with(marker)
        secrets = {"the JupyterLab token": token, **json.loads((data / "credentials.json").read_text())}
    finally:
        _, stderr = stop_or_dump(proc, group=True)
    assert any("jupyterlab" in line for line in command_lines), command_lines  # JupyterLab is among them
    hay = Haystack()
    for line in command_lines:
        hay.add(f"the command line of {line.split()[:3]}", line)
    assert hay.leaks({name: value for name, value in secrets.items() if len(value) >= 16}) == []
    assert token not in stderr and token not in (tmp_path / "jupyterlab.log").read_text()
    assert proc.returncode == 0, stderr[-3000:]
    assert_nothing_left(marker, tmpdir)
