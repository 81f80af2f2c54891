"""svckit.kv.bulk over real HTTP against the sandbox (every backend): a dry run counts and samples,
delete / set TTL / clear TTL touch exactly the keys under the pattern and count them exactly, exports
round-trip, a cancelled run stops between batches, a Read Only token is refused before any write,
and keys SCAN returns twice are acted on once. One test does it on 100,000 keys (real redis only)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from svckit._inflight import DEFAULT_IN_FLIGHT
from svckit.errors import InvalidArgument
from svckit.kv import (
    KV,
    BulkPlan,
    BulkSummary,
    Progress,
    bulk_delete,
    bulk_expire,
    bulk_export,
    bulk_persist,
    pattern_for_prefix,
    plan_bulk,
    read_export,
)
from svckit.sandbox import Sandbox
from tests.conftest import running
from tests.kv.conftest import fill


def _fill(kv: KV[Any], n: int, prefix: str = "sess:") -> None:
    fill(kv, {f"{prefix}{i}": f"v{i}" for i in range(n)})


def _others(kv: KV[Any]) -> dict[str, str]:
    others = {"sessx": "not under sess:", "user:1": "ada", "sess": "the bare prefix", "other:sess:1": "nested"}
    fill(kv, others)
    return others


def _values(kv: KV[Any], keys: Any) -> list[Any]:
    """The value of every key, one GET each in one pipeline (MGET would name keys of several slots)."""
    pipe = kv.pipeline()
    for key in keys:
        pipe.get(key)
    return pipe.exec()


def _keys(kv: KV[Any], pattern: str = "*") -> set[str]:
    return set(kv.scan_iter(pattern, count=1000))


def test_dry_run_counts_exactly_samples_and_writes_nothing(kv: KV[str]) -> None:
    _fill(kv, 1200)
    _others(kv)
    seen: list[int] = []
    plan = plan_bulk(kv, "sess:*", sample=7, scan_count=100,
                     progress=lambda p: seen.append(int(p.note.split()[0].replace(",", ""))))
    assert isinstance(plan, BulkPlan)
    assert (plan.count, plan.complete) == (1200, True)
    assert len(plan.sample) == 7 and all(k.startswith("sess:") for k in plan.sample)
    assert plan.calls == len(seen) > 1 and seen == sorted(seen) and seen[-1] == 1200
    assert kv.dbsize() == 1204


def test_dry_run_stops_early_and_says_it_is_incomplete(kv: KV[str]) -> None:
    _fill(kv, 1000)
    plan = plan_bulk(kv, "sess:*", scan_count=50, max_calls=3, progress=False)
    assert plan.calls == 3 and not plan.complete and 0 < plan.count < 1000


def test_bulk_delete_removes_exactly_the_pattern_and_reports_counts(kv: KV[str]) -> None:
    _fill(kv, 2345)
    others = _others(kv)
    summary = bulk_delete(kv, "sess:*", batch=200, progress=False)
    assert isinstance(summary, BulkSummary)
    assert (summary.matched, summary.done, summary.skipped, summary.failed) == (2345, 2345, 0, 0)
    assert summary.complete and not summary.cancelled and summary.ok
    assert summary.batches == 12  # ceil(2345 / 200): pipelines never exceed the batch
    assert _values(kv, others) == list(others.values())
    assert _keys(kv) == set(others)
    assert "2,345 keys matched 'sess:*' · deleted 2,345" in summary.text()


def test_bulk_expire_then_persist_touch_only_the_pattern(kv: KV[str]) -> None:
    _fill(kv, 700, "tmp:")
    kv.set("keep", "x", ex=500)
    kv.set("plain", "y")
    plan = plan_bulk(kv, "tmp:*", progress=False)
    summary = bulk_expire(kv, plan, 900, batch=128, progress=False)
    assert (summary.matched, summary.done, summary.expected) == (700, 700, 700)
    pipe = kv.pipeline()
    for i in range(0, 700, 50):
        pipe.ttl(f"tmp:{i}")
    assert all(880 <= t <= 900 for t in pipe.exec())
    assert kv.ttl("plain") == -1 and 0 < kv.ttl("keep") <= 500

    kv.persist("tmp:3")  # one key already without TTL: skipped, not failed
    cleared = bulk_persist(kv, "tmp:*", progress=False)
    assert (cleared.matched, cleared.done, cleared.skipped, cleared.failed) == (700, 699, 1, 0)
    assert "1 had no TTL or were gone" in cleared.text()
    assert kv.ttl("tmp:0") == -1 and 0 < kv.ttl("keep") <= 500


def test_bulk_expire_refuses_a_ttl_that_is_not_positive(kv: KV[str]) -> None:
    with pytest.raises(InvalidArgument, match="bulk_persist clears TTLs"):
        bulk_expire(kv, "*", 0, progress=False)


def _typed_values(kv: KV[str]) -> list[dict[str, Any]]:
    kv.set("exp:str", "héllo, \"world\"\nline 2", ex=3000)
    kv.hset("exp:hash", mapping={"a": "1", "b": "two"})
    kv.rpush("exp:list", "x", "y", "x")
    kv.sadd("exp:set", "m2", "m1")
    kv.zadd("exp:zset", {"low": 1.5, "high": 10})
    kv.xadd("exp:stream", {"n": "1"}, "1700000000000-0")
    kv.xadd("exp:stream", {"n": "2", "m": "z"}, "1700000000001-0")
    kv.set("unrelated", "not exported")
    return [
        {"key": "exp:hash", "type": "hash", "ttl_ms": None, "value": {"a": "1", "b": "two"}},
        {"key": "exp:list", "type": "list", "ttl_ms": None, "value": ["x", "y", "x"]},
        {"key": "exp:set", "type": "set", "ttl_ms": None, "value": ["m1", "m2"]},
        {"key": "exp:str", "type": "string", "ttl_ms": "ttl", "value": "héllo, \"world\"\nline 2"},
        {"key": "exp:stream", "type": "stream", "ttl_ms": None,
         "value": [["1700000000000-0", {"n": "1"}], ["1700000000001-0", {"n": "2", "m": "z"}]]},
        {"key": "exp:zset", "type": "zset", "ttl_ms": None, "value": [["low", 1.5], ["high", 10.0]]},
    ]


def _same(records: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    records = sorted(records, key=lambda r: r["key"])
    assert [r["key"] for r in records] == [e["key"] for e in expected]
    for got, want in zip(records, expected, strict=True):
        assert (got["type"], got["value"]) == (want["type"], want["value"]), got["key"]
        if want["ttl_ms"] == "ttl":
            assert 2_900_000 < got["ttl_ms"] <= 3_000_000
        else:
            assert got["ttl_ms"] is None


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_to_a_file_round_trips_every_type(kv: KV[str], tmp_path: Path, fmt: str) -> None:
    expected = _typed_values(kv)
    path = tmp_path / f"out.{fmt}"
    summary = bulk_export(kv, "exp:*", format=fmt, path=path, batch=4, progress=False)
    assert (summary.matched, summary.done, summary.failed, summary.batches) == (6, 6, 0, 2)
    assert summary.path == path
    _same(read_export(path), expected)


def test_export_to_a_frame_holds_key_type_ttl_and_value(kv: KV[str]) -> None:
    expected = _typed_values(kv)
    summary = bulk_export(kv, "exp:*", format="frame", progress=False)
    frame = summary.frame
    assert list(frame.columns) == ["key", "type", "ttl_ms", "value"] and len(frame) == 6
    _same([{**r, "ttl_ms": None if r["ttl_ms"] is None or r["ttl_ms"] != r["ttl_ms"] else int(r["ttl_ms"])}
           for r in frame.astype({"ttl_ms": "object"}).where(frame.notna(), None).to_dict("records")], expected)


def test_export_needs_a_known_format_and_a_path(kv: KV[str]) -> None:
    with pytest.raises(InvalidArgument, match="format: must be one of csv, jsonl, frame"):
        bulk_export(kv, "*", format="xml", progress=False)
    with pytest.raises(InvalidArgument, match="path: a csv export needs a path"):
        bulk_export(kv, "*", format="csv", progress=False)


def test_cancel_stops_between_batches_and_reports_what_was_done(kv: KV[str]) -> None:
    _fill(kv, 1000)
    stop = threading.Event()
    batches: list[int] = []

    def after_batch(step: Progress) -> None:
        batches.append(step.done)
        if step.note == "3 batches":
            stop.set()

    summary = bulk_delete(kv, "sess:*", batch=10, scan_count=1000, cancel=stop, progress=after_batch)
    assert summary.cancelled and not summary.complete and not summary.ok
    # the batches already sent when cancel came (DEFAULT_IN_FLIGHT beside the walk, and the one
    # being sent) finish and are counted; none is sent after it
    assert 3 <= summary.batches <= 3 + DEFAULT_IN_FLIGHT + 1
    assert summary.done == 10 * summary.batches
    assert batches == [10 * (i + 1) for i in range(summary.batches)]
    assert summary.matched == summary.done + summary.pending
    assert kv.dbsize() == 1000 - summary.done  # exactly the batches reported were deleted
    assert f"cancelled after {summary.batches} batches" in summary.text()


def test_read_only_token_is_refused_before_any_write(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    _fill(kv, 50)
    with KV.from_settings(kv_sandbox.settings, readonly=True) as ro:
        for run in (lambda: bulk_delete(ro, "sess:*", progress=False),
                    lambda: bulk_expire(ro, "sess:*", 60, progress=False),
                    lambda: bulk_persist(ro, "sess:*", progress=False)):
            with pytest.raises(InvalidArgument, match="Read Only token.*use a client with the Standard token"):
                run()
        # the dry run only reads, but the server refuses SCAN to this token: said as plainly
        with pytest.raises(InvalidArgument, match="SCAN is refused to the Read Only token"):
            plan_bulk(ro, "sess:*", progress=False)
    assert kv.dbsize() == 50


def test_read_only_token_not_declared_is_stopped_by_the_server_s_refusal(kv_sandbox: Sandbox,
                                                                          kv: KV[str]) -> None:
    _fill(kv, 50)
    sneaky = KV(kv_sandbox.settings.kv_url, kv_sandbox.settings.kv_readonly_token)  # readonly not said
    with sneaky, pytest.raises(InvalidArgument, match="Standard token"):
        bulk_delete(sneaky, "sess:*", progress=False)
    assert kv.dbsize() == 50


class RepeatingScan:
    """A KV whose SCAN replies repeat keys of earlier replies, as SCAN may during a rehash."""

    def __init__(self, kv: KV[str]) -> None:
        self._kv = kv
        self._earlier: list[str] = []

    def scan(self, *args: Any, **kw: Any) -> tuple[int, list[str]]:
        cursor, keys = self._kv.scan(*args, **kw)
        reply = keys + keys[:2] + self._earlier[-3:]
        self._earlier.extend(keys)
        return cursor, reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kv, name)


def test_keys_scan_returns_twice_are_counted_and_acted_on_once(kv: KV[str]) -> None:
    _fill(kv, 600)
    _others(kv)
    repeating = RepeatingScan(kv)
    plan = plan_bulk(repeating, "sess:*", scan_count=50, progress=False)
    assert plan.count == 600 and plan.calls > 5
    summary = bulk_expire(repeating, "sess:*", 100, batch=64, scan_count=50, progress=False)
    assert (summary.matched, summary.done, summary.skipped) == (600, 600, 0)
    deleted = bulk_delete(RepeatingScan(kv), "sess:*", batch=64, scan_count=50, progress=False)
    # a repeat acted on twice would show up as a skipped (already gone) key
    assert (deleted.matched, deleted.done, deleted.skipped) == (600, 600, 0)
    assert kv.dbsize() == 4


def test_pattern_for_prefix_escapes_glob_characters(kv: KV[str]) -> None:
    assert pattern_for_prefix("user", ":") == "user:*"
    assert pattern_for_prefix("user:", ":") == "user:*"
    assert pattern_for_prefix("", ":") == "*"
    assert pattern_for_prefix("a*b?[c]", "/") == "a\\*b\\?\\[c\\]/*"
    fill(kv, {"a*b:1": "1", "a*b:2": "2", "axb:1": "no", "a*bc:1": "no"})
    summary = bulk_delete(kv, pattern_for_prefix("a*b", ":"), progress=False)
    assert summary.done == 2
    assert _keys(kv) == {"axb:1", "a*bc:1"}


def test_bulk_delete_of_100_000_keys_leaves_the_others_and_counts_exactly(tmp_path: Path) -> None:
    """The issue's acceptance: 100,000 keys under a pattern, among others, on a real redis-server."""
    with running(tmp_path, areas=["kv"], backend="redis") as sandbox, KV.from_settings(sandbox.settings) as kv:
        _fill(kv, 100_000, "big:")
        _fill(kv, 3_000, "bigger:")  # shares the prefix "big", not "big:"
        others = _others(kv)
        plan = plan_bulk(kv, "big:*", progress=False)
        assert (plan.count, plan.complete) == (100_000, True)
        summary = bulk_delete(kv, plan, progress=False)
        assert (summary.matched, summary.done, summary.skipped, summary.failed) == (100_000, 100_000, 0, 0)
        assert summary.batches == 200 and summary.complete
        assert kv.dbsize() == 3_000 + len(others)
        assert _values(kv, others) == list(others.values())
        assert len(_keys(kv, "bigger:*")) == 3_000 and not _keys(kv, "big:*")


def test_a_bulk_run_reports_keys_touched_of_the_plan_per_batch(kv: KV[str]) -> None:
    _fill(kv, 250)
    kv.set("sess:gone", "x")
    plan = plan_bulk(kv, "sess:*", progress=False)
    kv.delete("sess:gone")  # counted by the dry run, gone before the run's own SCAN
    seen: list[Progress] = []
    summary = bulk_delete(kv, plan, batch=100, progress=seen.append)
    assert (summary.expected, summary.matched, summary.done, summary.batches) == (251, 250, 250, 3)
    # the total is the plan's count; the requests so far are the SCAN calls and a request per batch
    calls = summary.scan_calls
    assert seen == [Progress("delete", 100, 251, "keys", "1 batches", calls + 1),
                    Progress("delete", 200, 251, "keys", "2 batches", calls + 2),
                    Progress("delete", 250, 251, "keys", "3 batches", calls + 3)]
    assert all(step.eta is not None for step in seen)  # a total is known, so is the time left
    _fill(kv, 30)
    seen.clear()
    bulk_export(kv, "sess:*", format="frame", batch=20, progress=seen.append)  # a pattern: no total known
    assert [(p.phase, p.done, p.total, p.unit, p.note) for p in seen] == [
        ("export", 20, None, "keys", "1 batches"), ("export", 30, None, "keys", "2 batches")]
    seen.clear()
    cleared = bulk_persist(kv, "sess:*", batch=20, progress=seen.append)  # no TTL to clear: every key skipped
    assert (cleared.done, cleared.skipped) == (0, 30) and [p.done for p in seen] == [20, 30]
