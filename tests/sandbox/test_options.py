"""Sandbox(**options): parsed once into SandboxOptions (svckit/sandbox/options.py), refused by name when
unknown or out of range, and seen by each area."""

from __future__ import annotations

import pytest

from svckit.sandbox import Sandbox
from svckit.sandbox.area import Credentials, SandboxContext
from svckit.sandbox.options import SandboxOptionError, SandboxOptions, parse_options
from svckit.sandbox.server import load_areas


def test_a_misspelt_option_is_refused_naming_it_and_the_close_match(tmp_path):
    with pytest.raises(SandboxOptionError, match=r"kv_max_reqest_size: unknown; did you mean kv_max_request_size\?"):
        Sandbox(tmp_path, areas=["kv"], kv_max_reqest_size=5)


def test_an_option_that_matches_nothing_lists_the_options(tmp_path):
    with pytest.raises(SandboxOptionError, match=r"zzz: unknown; the options are header_timeout, .*queue_workers"):
        Sandbox(tmp_path, zzz=1)


@pytest.mark.parametrize(("option", "bad", "says"), [
    ("kv_max_streams", 0, "must be a positive number, got 0"),
    ("header_timeout", -1.5, "must be a positive number, got -1.5"),
    ("header_timeout", float("inf"), "must be a positive number, got inf"),
    ("vector_max_top_k", True, "must be a positive number, got True"),
    ("queue_retry_delay", -1, "must be a number, 0 or more, got -1"),
    ("backend", "redsi", "input should be 'auto', 'redis', 'fakeredis' or 'external', got 'redsi'"),
])
def test_a_bad_value_is_refused_naming_the_option(tmp_path, option, bad, says):
    with pytest.raises(SandboxOptionError, match=f"Sandbox option {option}: {says}".replace("(", r"\(")):
        Sandbox(tmp_path, **{option: bad})


def test_a_bad_redis_url_is_refused_without_its_value(tmp_path):
    with pytest.raises(SandboxOptionError, match="redis_url") as caught:
        parse_options({"redis_url": ["redis://u:hunter2@127.0.0.1"]})
    assert "hunter2" not in str(caught.value)


def test_none_is_the_default_and_the_options_are_frozen():
    options = parse_options({"embedding_model": None, "kv_max_streams": None, "queue_workers": 3})
    assert options == SandboxOptions(queue_workers=3) and options.kv_max_streams == 256
    with pytest.raises(ValueError, match="frozen"):
        options.queue_workers = 4  # type: ignore[misc]


def test_every_field_is_documented():
    assert [name for name, field in SandboxOptions.model_fields.items() if not field.description] == []


def test_each_area_sees_its_options(tmp_path):
    options = parse_options({
        "backend": "fakeredis", "kv_max_request_size": 1000, "kv_daily_request_limit": 7, "kv_max_streams": 5,
        "kv_max_streams_per_token": 2, "kv_max_request_commands": 9, "kv_max_request_seconds": 1.5,
        "kv_monitor_backlog_bytes": 4096, "kv_script_time_limit": 0.5, "vector_threads_per_index": 2,
        "vector_max_top_k": 11, "vector_max_query_seconds": 2.5, "vector_max_body_bytes": 2048, "demo_limit": 3,
        "devapi_max_body_bytes": 512, "queue_max_body_bytes": 4000, "queue_workers": 3, "queue_retry_delay": 0,
        "queue_backoff_scale": 0.001, "allow_destinations": ("example.test",)})
    ctx = SandboxContext(tmp_path, Credentials.load_or_create(tmp_path), options)
    kv, vector, account, queue = load_areas(ctx, ["kv", "vector", "account", "queue"])
    gateway = kv.gateway
    assert (gateway.max_request_size, gateway.daily_limit, kv.max_body_bytes) == (1000, 7, 1000)
    assert (gateway.streams.total, gateway.streams.per_token) == (5, 2)
    assert (gateway.budget.commands, gateway.budget.seconds) == (9, 1.5)
    assert (kv.monitor.backlog_bytes, kv.script_limit, kv.backend.name) == (4096, 0.5, "fakeredis")
    assert (vector.threads_per_index, vector.limits.max_top_k, vector.limits.max_query_seconds) == (2, 11, 2.5)
    assert (vector.limits.max_batch, vector.max_body_bytes, vector.demo_limit) == (1000, 2048, 3)
    assert account.max_body_bytes == 512
    assert (queue.max_body_bytes, queue.runner.app._limiter.total_tokens, queue.runner.retry_delay) == (4000, 3, 0)
    assert queue.deliveries.backoff_scale == 0.001
    assert queue.publisher.allowed == {"example.test"}
