"""``notebook_clients()`` with no SVC_* settings, as a first-time user meets it: the kernel's own
sandbox starts quietly (nothing on stderr), says in one status line where it runs, what it holds and
how to stop it, shows its start-up log on request, and leaves nothing behind when the process ends."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import nbformat
import pytest

from svckit import demo
from tests.demo.test_demo_cli import assert_nothing_left, marked_env

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent("""
    import sys
    from svckit import demo
    c = demo.notebook_clients(verbose=sys.argv[1] == "verbose")
    c.kv.set("written", "yes")
    print("read", c.kv.get("written"))
""")


def run_script(tmp_path, mode: str) -> subprocess.CompletedProcess[str]:
    env, marker, tmpdir = marked_env(tmp_path)
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_nothing_left(marker, tmpdir)  # the redis-server child stopped, the data folder removed
    return done


def test_a_script_gets_its_sandbox_quietly_and_leaves_nothing_behind(tmp_path):
    done = run_script(tmp_path, "quiet")
    assert done.stderr == ""
    status, *areas, read = done.stdout.splitlines()
    assert status.startswith("No SVC_* variables set: started a local sandbox at http://127.0.0.1:")
    assert "with demo data (" in status and " keys" in status and "workflow runs" in status
    assert "stop_local_sandbox()" in status and ", data in /" in status
    assert [a.split(":")[0].strip() for a in areas] == ["Key-value", "Vector", "Account (developer API)", "Queue"]
    assert all("http://127.0.0.1:" in a and ("token ***" in a or "key ***" in a) for a in areas), areas
    assert read == "read yes"


def test_verbose_shows_the_start_up_log_on_stderr(tmp_path):
    done = run_script(tmp_path, "verbose")
    assert "[svckit sandbox] kv backend:" in done.stderr
    assert "[svckit sandbox] http: uvicorn" in done.stderr
    assert "Traceback" not in done.stderr


def test_in_a_notebook_the_status_is_one_html_line_with_the_log_folded_inside(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from svckit.demo import notebook_clients\nc = notebook_clients()\nprint(c.kv.get('greeting'))")])
    path = tmp_path / "standalone.ipynb"
    nbformat.write(nb, path)
    env = demo.kernel_env({})
    run = demo.execute_notebook(path, tmp_path / "html", env, timeout=300)
    assert run.ok, run.error
    [cell] = nbformat.read(tmp_path / "html" / "standalone.ipynb", as_version=4).cells
    kinds = [(o.output_type, o.get("name")) for o in cell.outputs]
    assert kinds == [("display_data", None), ("stream", "stdout")]  # no stderr
    status = cell.outputs[0].data["text/html"]
    assert 'class="svc-sandbox-status"' in status and "<details><summary>start-up log</summary>" in status
    assert "embedded sandbox, data in <code>/" in status and 'class="svc-connection-areas"' in status
    assert "kv backend: redis-server" in status or "kv backend: fakeredis" in status
    assert cell.outputs[1].text == "hello\n"


def test_stop_local_sandbox_stops_it_and_the_next_call_starts_a_fresh_one():
    try:
        first = demo.local_sandbox()
        url = first.url
        assert demo.stop_local_sandbox() is True
        assert demo.stop_local_sandbox() is False
        again = demo.local_sandbox()
        assert again is not first and not first.data_dir.exists()
        assert again.connect().kv.get("greeting") == "hello" and url  # a working sandbox again
    finally:
        demo.stop_local_sandbox()
