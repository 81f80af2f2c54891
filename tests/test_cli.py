"""The command line: options reach the sandbox they configure."""

from __future__ import annotations

from pathlib import Path

from svckit.cli import build_parser, sandbox_from_args


def test_sandbox_options_reach_the_areas(tmp_path):
    args = build_parser().parse_args([
        "sandbox", "--port", "0", "--data-dir", str(tmp_path), "--backend", "fakeredis",
        "--embedding-model", "/models/mini", "--demo-limit", "25", "--areas", "kv, vector", "--seed", "demo"])
    sandbox = sandbox_from_args(args)
    assert sandbox.area_names == ("kv", "vector") and sandbox.seed == "demo"
    assert sandbox.data_dir == tmp_path.resolve()
    assert sandbox.options.backend == "fakeredis"
    assert sandbox.options.embedding_model == Path("/models/mini")
    assert sandbox.options.demo_limit == 25


def test_state_goes_under_xdg_data_home_when_set_else_under_local_share(tmp_path, monkeypatch):
    from svckit.cli import data_home

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert data_home() == tmp_path / "svckit"
    demo = sandbox_from_args(build_parser().parse_args(["demo"]))
    assert demo.data_dir == (tmp_path / "svckit" / "sandbox").resolve()
    monkeypatch.setenv("XDG_DATA_HOME", "relative/path")  # not absolute: ignored, as the XDG rule says
    assert data_home() == Path.home() / ".local" / "share" / "svckit"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert data_home() == Path.home() / ".local" / "share" / "svckit"


def test_demo_defaults_to_demo_data_on_a_free_port():
    args = build_parser().parse_args(["demo", "--execute"])
    assert args.seed == "demo" and args.port == 0 and args.execute


def test_sandbox_warns_before_it_binds_beyond_loopback(tmp_path):
    """The warning comes before anything is bound: an unknown area then stops the command, so this
    test never serves anything on a non-loopback address."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "svckit.cli", "sandbox", "--host", "0.0.0.0", "--port", "0",
                           "--data-dir", str(tmp_path), "--areas", "nope"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0 and "areas: unknown area 'nope'" in done.stderr
    warning = next(line for line in done.stderr.splitlines() if "WARNING" in line)
    assert "binding '0.0.0.0' (not loopback)" in warning and "bearer tokens" in warning and "plain HTTP" in warning
    assert not done.stdout  # nothing served: no SVC_* lines
