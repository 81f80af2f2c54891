"""svckit.kv.analysis: the keyspace report, exact against a seeded keyspace of known shape and sampled
within its stated error, over real HTTP against the sandbox (every backend).

The sampled pass is a seeded bottom-k sample, a function of the key names and the seed only, so
every run of these tests draws the same sample and the same estimates: the interval checks cannot
flake. They assert what the report promises at two levels: every estimate within 1.68 x its stated
95% half-width (a 99.9% interval) and at least 90% of them within the stated 95% interval. The
calibration test checks the promise itself: over 100 seeds the 95% intervals cover the truth about
95% of the time.
"""

from __future__ import annotations

import math
import random
import threading
from collections import Counter
from typing import Any

import pytest

from svckit.kv import KV, KeyInfo, KeyspaceAnalysis, Progress, analyze_keyspace
from svckit.kv.analysis import NO_PREFIX, TTL_LABELS, key_prefixes, ttl_bucket
from svckit.sandbox import Sandbox
from tests.kv.conftest import direct_redis, fill

N = 12_000
#: prefix -> (share of keys, type); sizes and TTLs vary per key (seeded)
LAYOUT = [("user", "string"), ("session", "string"), ("cart", "hash"), ("queue", "list"), ("tags", "set")]
#: the "< 1 min" keys live 59 s, as long as their bucket allows: the tests read them within that (at
#: 30 s, a run on a loaded machine once saw 43 of them expire between two passes of one test)
TTL_MS = {"no expiry": None, "< 1 min": 59_000, "< 1 h": 1_800_000, "< 1 day": 43_200_000,
          "< 1 week": 259_200_000, "≥ 1 week": 2_592_000_000}
Z999_OVER_Z95 = 3.2905 / 1.96


def _ground_truth() -> list[dict[str, Any]]:
    """12,000 keys: five prefixes (second level: 8 shards each), types, seeded sizes and TTL buckets."""
    rng = random.Random(2024)
    keys = []
    for i in range(N):
        prefix, key_type = LAYOUT[i % len(LAYOUT)]
        shard = i % 8
        ttl = rng.choices(list(TTL_MS), weights=[50, 10, 10, 10, 10, 10])[0]
        keys.append({"key": f"{prefix}:s{shard}:{i}", "prefix": prefix, "shard": f"{prefix}:s{shard}",
                     "type": key_type, "size": rng.randint(1, 120), "ttl": ttl})
    keys.append({"key": "standalone", "prefix": NO_PREFIX, "shard": None, "type": "string", "size": 5, "ttl": "no expiry"})
    return keys


TRUTH = _ground_truth()


def _seed(kv: KV[str]) -> None:
    pipe = kv.pipeline()
    for i, row in enumerate(TRUTH):
        key, size = row["key"], row["size"]
        if row["type"] == "string":
            pipe.set(key, "v" * size * 4)
        elif row["type"] == "hash":
            pipe.hset(key, mapping={f"f{j}": "x" * 8 for j in range(size)})
        elif row["type"] == "list":
            pipe.rpush(key, *("e" * 6 for _ in range(size)))
        else:
            pipe.sadd(key, *(f"m{j}" for j in range(size)))
        ms = TTL_MS[row["ttl"]]
        if ms is not None:
            pipe.pexpire(key, ms)
        if i % 1000 == 999:
            pipe.exec()
            pipe = kv.pipeline()
    pipe.exec()


@pytest.fixture
def seeded(kv: KV[str]) -> KV[str]:
    _seed(kv)
    return kv


def _redis_memory(sandbox: Sandbox) -> dict[str, int] | None:
    """MEMORY USAGE of every key, straight from the backing Redis (redis-py over TCP; on the cluster
    each key from its master), or None on fakeredis: ground truth that does not go through svckit."""
    r = direct_redis(sandbox)
    if r is None:
        return None
    try:
        pipe = r.pipeline(transaction=False)
        for row in TRUTH:
            pipe.memory_usage(row["key"])
        return {row["key"]: m for row, m in zip(TRUTH, pipe.execute(), strict=True)}
    finally:
        r.close()


def _expected_memory(memory: dict[str, int]) -> dict[str, int]:
    out: Counter[str] = Counter()
    for row in TRUTH:
        for prefix in key_prefixes(row["key"], ":", 2):
            out[prefix] += memory[row["key"]]
    return dict(out)


# -- pure parts ---------------------------------------------------------------------------------


def test_prefixes_and_ttl_buckets() -> None:
    assert key_prefixes("user:s1:42", ":", 2) == ["user", "user:s1"]
    assert key_prefixes("user:42", ":", 2) == ["user"]
    assert key_prefixes("a:b:c:d", ":", 3) == ["a", "a:b", "a:b:c"]
    assert key_prefixes("plain", ":", 2) == [NO_PREFIX]
    assert [ttl_bucket(ms) for ms in (-1, 0, 59_999, 60_000, 3_599_999, 86_399_999, 604_799_999, 604_800_000)] == [
        "no expiry", "< 1 min", "< 1 min", "< 1 h", "< 1 h", "< 1 day", "< 1 week", "≥ 1 week"]


def test_stated_95_percent_intervals_cover_the_truth_about_95_percent_of_the_time() -> None:
    """Calibration of the error statement without a server: a skewed population (memory is
    log-normal, as key sizes are) sampled with 100 seeds; every interval's coverage is counted."""
    rng = random.Random(11)
    population = []
    for i in range(5000):
        prefix = ("a", "b", "c", "d")[i % 4]
        memory = int(rng.lognormvariate(5, 0.6 if prefix != "d" else 1.0))
        population.append(KeyInfo(f"{prefix}:{i}", "string" if i % 3 else "hash",
                                  -1 if i % 5 else 90_000, memory, 1))
    by_key = {info.key: info for info in population}
    exact = KeyspaceAnalysis(sample=None)
    exact.add_infos(by_key[k] for k in exact.add_names(by_key))
    truth = exact.report()
    covered = total = 0
    truths = {("by_prefix", "prefix", "memory"): truth.by_prefix.set_index("prefix")["memory"].to_dict(),
              ("ttl", "ttl", "keys"): truth.ttl.set_index("ttl")["keys"].to_dict(),
              ("by_type", "type", "keys"): truth.by_type.set_index("type")["keys"].to_dict(),
              ("by_type", "type", "memory"): truth.by_type.set_index("type")["memory"].to_dict()}
    for seed in range(100):
        core = KeyspaceAnalysis(sample=400, seed=seed)
        core.add_names(by_key)
        core.add_infos(by_key[k] for k in core.sample_keys())
        est = core.report()
        for (frame_name, index, column), exact_values in truths.items():
            frame = getattr(est, frame_name)
            for name, value, pm in zip(frame[index].astype(str), frame[column], frame[column + " ±"]):
                if pm > 0:
                    total += 1
                    covered += abs(value - exact_values[name]) <= pm
    assert total > 900
    assert 0.92 <= covered / total <= 0.98, f"95% intervals covered {covered / total:.3f} of {total}"


# -- against the sandbox ------------------------------------------------------------------------


def test_complete_pass_matches_the_ground_truth_exactly(seeded: KV[str], kv_sandbox: Sandbox) -> None:
    steps: list[Progress] = []
    report = analyze_keyspace(seeded, sample=None, progress=steps.append, batch=700)
    assert report.complete and report.total_keys == report.sample_size == len(TRUTH)
    assert "Complete pass" in report.summary() and "exact" in report.summary()
    assert {s.phase for s in steps} == {"scan"} and steps[-1].done == len(TRUTH)

    prefixes = report.by_prefix.set_index("prefix")
    expected_keys: Counter[str] = Counter()
    for row in TRUTH:
        expected_keys.update(key_prefixes(row["key"], ":", 2))
    assert prefixes["keys"].to_dict() == dict(expected_keys)
    assert (prefixes["keys ±"] == 0).all()
    assert prefixes.loc["user:s3", ["level"]].tolist() == [2] and prefixes.loc["user", "parent"] == ""

    ttl = report.ttl.set_index("ttl")["keys"]
    assert ttl.to_dict() == {label: float(Counter(r["ttl"] for r in TRUTH)[label]) for label in TTL_LABELS}
    no_expiry = sum(r["ttl"] == "no expiry" for r in TRUTH)
    assert report.no_expiry["keys"].iloc[0] == no_expiry
    assert report.no_expiry["share"].iloc[0] == pytest.approx(no_expiry / len(TRUTH))
    assert report.by_type.set_index("type")["keys"].to_dict() == {
        t: float(c) for t, c in Counter(r["type"] for r in TRUTH).items()}

    memory = _redis_memory(kv_sandbox)
    if memory is None:  # fakeredis: MEMORY USAGE is not implemented, and the report says so
        assert not report.memory_available and report.by_prefix["memory"].isna().all()
        assert "MEMORY USAGE is not available" in report.summary()
        biggest = report.biggest[report.biggest["type"] == "hash"]
        assert biggest["length"].iloc[0] == max(r["size"] for r in TRUTH if r["type"] == "hash")
    else:
        assert report.memory_available
        assert prefixes["memory"].to_dict() == {k: float(v) for k, v in _expected_memory(memory).items()}
        assert report.memory == sum(memory.values())
        for key_type in ("string", "hash", "list", "set"):
            top = sorted((memory[r["key"]] for r in TRUTH if r["type"] == key_type), reverse=True)[:10]
            assert report.biggest.loc[report.biggest["type"] == key_type, "memory"].tolist() == top


def _within(estimate: float, exact: float, pm: float) -> tuple[bool, bool]:
    """(inside the stated 95% interval, inside the 99.9% interval of the same standard error)."""
    gap = abs(estimate - exact)
    return gap <= pm + 1e-6, gap <= pm * Z999_OVER_Z95 + 1e-6


def test_sampled_estimates_are_within_their_stated_error_and_fixed_by_the_seed(seeded: KV[str]) -> None:
    exact = analyze_keyspace(seeded, sample=None, progress=False)
    steps: list[Progress] = []
    sampled = analyze_keyspace(seeded, sample=2000, seed=7, progress=steps.append)
    assert not sampled.complete and sampled.sample_size == 2000 and sampled.total_keys == len(TRUTH)
    assert {s.phase for s in steps} == {"scan", "describe"} and steps[-1].done == 2000
    summary = sampled.summary()
    assert "2,000 of 12,001 keys" in summary and "± = 95% interval" in summary

    # key counts per prefix come from SCAN: exact in a sampled pass too
    assert sampled.by_prefix.set_index("prefix")["keys"].to_dict() == exact.by_prefix.set_index("prefix")["keys"].to_dict()

    checks: list[tuple[str, bool, bool]] = []
    for est_frame, exact_frame, index, cols in [
        (sampled.ttl, exact.ttl, "ttl", ("keys", "keys ±")),
        (sampled.by_type, exact.by_type, "type", ("keys", "keys ±")),
        (sampled.by_type, exact.by_type, "type", ("memory", "memory ±")),
        (sampled.by_prefix[sampled.by_prefix["sampled"] >= 30], exact.by_prefix, "prefix", ("memory", "memory ±")),
    ]:
        truth = exact_frame.set_index(index)[cols[0]]
        for name, row in est_frame.set_index(index).iterrows():
            if pd_isna(row[cols[0]]):  # fakeredis: no memory figures
                continue
            in95, in999 = _within(row[cols[0]], truth[name], row[cols[1]])
            checks.append((f"{cols[0]} of {name}", in95, in999))
    assert len(checks) >= (10 if pd_isna(sampled.memory) else 20)
    assert all(in999 for _, _, in999 in checks), [c for c in checks if not c[2]]
    assert sum(in95 for _, in95, _ in checks) >= 0.9 * len(checks), checks
    no_exp = sampled.no_expiry.iloc[0]
    assert abs(no_exp["keys"] - exact.no_expiry["keys"].iloc[0]) <= no_exp["keys ±"] * Z999_OVER_Z95

    # the sample is fixed by its seed: the same seed draws the same keys, another seed others
    again = analyze_keyspace(seeded, sample=2000, seed=7, progress=False)
    other = analyze_keyspace(seeded, sample=2000, seed=8, progress=False)
    assert again.ttl.equals(sampled.ttl) and again.by_prefix.equals(sampled.by_prefix)
    assert not other.by_prefix["sampled"].equals(sampled.by_prefix["sampled"])


def pd_isna(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def test_big_values_are_warned_about_and_rank_first(kv: KV[str]) -> None:
    fill(kv, {f"small:{i}": "x" for i in range(50)})
    kv.set("blob:image", "x" * 300_000)
    kv.rpush("jobs:backlog", *[str(i) for i in range(3000)])
    report = analyze_keyspace(kv, sample=None, big_value_bytes=100_000, big_length=2000, progress=False)
    warned = report.warnings.set_index("key")
    assert set(warned.index) >= {"jobs:backlog"}
    assert "3,000 elements ≥ 2,000" in warned.loc["jobs:backlog", "note"]
    strings = report.biggest[report.biggest["type"] == "string"]
    assert strings["key"].iloc[0] == "blob:image" and strings["length"].iloc[0] == 300_000
    if report.memory_available:
        assert "blob:image" in warned.index and warned.loc["blob:image", "bytes"] >= 300_000
        assert "≥ 97.7 KiB" in warned.loc["blob:image", "note"]


def test_a_pattern_limits_the_pass_and_a_cancel_stops_it(kv: KV[str]) -> None:
    fill(kv, {f"a:{i}": "1" for i in range(300)} | {f"b:{i}": "2" for i in range(100)})
    report = analyze_keyspace(kv, "b:*", sample=50, progress=False)
    assert report.total_keys == 100 and report.by_prefix["prefix"].tolist() == ["b"]
    cancel = threading.Event()
    cancel.set()
    stopped = analyze_keyspace(kv, sample=None, progress=False, cancel=cancel)
    assert stopped.cancelled and stopped.total_keys == 0 and stopped.summary().startswith("Cancelled")


@pytest.mark.parametrize("sample", [None, 50])
def test_a_cancel_mid_pass_returns_the_figures_of_the_keys_reached_marked_cancelled(kv: KV[str], sample) -> None:
    fill(kv, {f"a:{i}": "1" for i in range(400)})
    steps: list[Progress] = []

    def after_two_scans() -> bool:
        return sum(s.phase == "scan" for s in steps) >= 2

    report = analyze_keyspace(kv, sample=sample, batch=50, scan_count=100, progress=steps.append,
                              cancel=after_two_scans)
    scans = sum(s.phase == "scan" for s in steps)
    assert report.cancelled and scans == 2  # no SCAN call after the cancel
    assert 0 < report.total_keys < 400 and report.by_prefix["keys"].sum() == report.total_keys
    assert "partial figures" in report.summary() and "run it again" in report.summary()
    assert not analyze_keyspace(kv, sample=sample, progress=False).cancelled


def test_progress_reports_the_scan_of_dbsize_then_the_sample_described(kv: KV[str]) -> None:
    fill(kv, {f"a:{i}": "1" for i in range(300)})
    steps: list[Progress] = []
    analyze_keyspace(kv, sample=50, batch=20, scan_count=100, progress=steps.append)
    scan = [s for s in steps if s.phase == "scan"]
    assert steps[:len(scan)] == scan and len(scan) >= 3  # one step per SCAN call, then describe
    assert all((s.total, s.unit) == (300, "keys") for s in scan)
    assert [s.done for s in scan] == sorted(s.done for s in scan) and scan[-1].done == 300
    assert scan[-1].note == "300 matching"
    # the sample's pipelines go side by side once the walk is done; the requests so far are the
    # SCAN calls, DBSIZE (sent beside the first of them) and one pipeline per batch
    calls = len(scan)
    assert steps[len(scan):] == [Progress("describe", done, 50, "keys", round_trips=calls + 1 + i)
                                 for i, done in enumerate((20, 40, 50), 1)]


@pytest.mark.parametrize("sample", [None, 10], ids=["complete", "sampled"])
def test_a_key_name_that_is_not_utf8_is_described_not_counted_as_vanished(kv: KV[str], sample: int | None) -> None:
    # A decoding client turns b"\xff\r" into "\ufffd\r", another key: the pass walks and describes the
    # names as bytes (and describes such a name with single commands: a pipeline is JSON)
    fill(kv, {f"text:{i}": "x" for i in range(5)})
    raw = kv.as_bytes()
    raw.set(b"\xff\r", b"\x00\x01")
    raw.rpush(b"bin:\xfe", b"a", b"b", b"c")
    report = analyze_keyspace(kv, sample=sample, progress=False)
    assert (report.total_keys, report.vanished, report.sample_size) == (7, 0, 7)
    prefixes = report.by_prefix.set_index("prefix")
    assert prefixes.loc["bin", "keys"] == 1 and prefixes.loc[NO_PREFIX, "keys"] == 1
    lists = report.biggest[report.biggest["type"] == "list"]
    assert lists["key"].tolist() == ["bin:\\xfe"] and lists["length"].tolist() == [3]


async def test_describing_keys_keeps_their_order_when_some_names_are_not_utf8(akv) -> None:
    from svckit.kv import adescribe_keys

    raw = akv.as_bytes()
    await raw.set(b"a", b"1")
    await raw.hset(b"\xff", b"f", b"v")
    infos = await adescribe_keys(raw, [b"a", b"\xff", b"missing"])
    assert [(i.key, i.type, i.length) for i in infos] == [(b"a", "string", 1), (b"\xff", "hash", 1),
                                                          (b"missing", "none", None)]
