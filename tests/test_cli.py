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
    assert sandbox.options["backend"] == "fakeredis"
    assert sandbox.options["embedding_model"] == Path("/models/mini")
    assert sandbox.options["demo_limit"] == 25


def test_demo_defaults_to_demo_data_on_a_free_port():
    args = build_parser().parse_args(["demo", "--execute"])
    assert args.seed == "demo" and args.port == 0 and args.execute
