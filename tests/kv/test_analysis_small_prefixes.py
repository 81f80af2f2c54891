"""A sampled keyspace pass describes the keys of small prefixes whole: a lone big value (a report, a
backlog) is found by every seed, and the interval of every prefix above it covers the truth.

The kv_analysis notebook showed "1.34 MB ± 96 KB sampled, 1.82 MB exact" for its root prefix: the
random sample missed the one 450 KB key, and the stated error, computed from the keys it saw, could
not know. Over real HTTP against the sandbox (every backend), on keys of this test's own."""

from __future__ import annotations

import pytest

from svckit.kv import KV, analyze_keyspace
from svckit.kv.estimates import SMALL_PREFIX
from tests.kv.conftest import fill


@pytest.fixture
def shop(kv: KV[str]) -> KV[str]:
    fill(kv, {f"shop:item:{i % 20}:{i}": "v" * (50 + i % 200) for i in range(3000)})
    kv.set("shop:report:2025", "r" * 400_000)
    kv.rpush("shop:queue:backlog", *[str(i) for i in range(5000)])
    return kv


@pytest.mark.parametrize("seed", range(5))
def test_a_lone_big_key_is_described_and_the_root_interval_covers_the_truth(shop: KV[str], seed: int) -> None:
    exact = analyze_keyspace(shop, "shop:*", sample=None, depth=3, progress=False)
    sampled = analyze_keyspace(shop, "shop:*", sample=300, seed=seed, depth=3, big_value_bytes=100_000,
                                 progress=False)
    rows = sampled.by_prefix.set_index("prefix")
    if sampled.memory_available:  # fakeredis has no MEMORY USAGE
        truth = exact.by_prefix.set_index("prefix")["memory"]
        shown = (rows.loc["shop", "memory"], rows.loc["shop", "memory ±"], truth["shop"])
        assert abs(shown[0] - shown[2]) <= shown[1], f"root: {shown[0]:,.0f} ± {shown[1]:,.0f}, exact {shown[2]:,.0f}"
        assert abs(sampled.memory - exact.memory) <= sampled.memory_pm
        for prefix in ("shop:report", "shop:queue"):  # described whole: exact, no error
            assert (rows.loc[prefix, "memory"], rows.loc[prefix, "memory ±"]) == (truth[prefix], 0.0)
        assert set(sampled.warnings["key"]) >= {"shop:report:2025"}
    assert rows.loc["shop:report", "sampled"] == rows.loc["shop:queue", "sampled"] == 1
    strings = sampled.biggest[sampled.biggest["type"] == "string"]
    assert strings["key"].iloc[0] == "shop:report:2025"
    assert sampled.sample_size == 300 and sampled.whole_keys == 2 and not sampled.complete
    assert f"2 of them in prefixes of at most {SMALL_PREFIX} keys, described whole" in sampled.summary()


def test_the_whole_stratum_is_the_rarest_prefixes_within_a_tenth_of_the_sample_whatever_the_scan_order() -> None:
    from svckit.kv import KeyspaceAnalysis

    names = ([f"big:{i}" for i in range(2000)] + ["lone:a", "pair:a", "pair:b"]
             + [f"five:{i}" for i in range(5)] + [f"six:{i}" for i in range(6)])
    picked = []
    for order in (names, names[::-1]):
        core = KeyspaceAnalysis(sample=80, seed=3)  # a budget of 8 keys described whole
        for start in range(0, len(order), 97):
            core.add_names(order[start:start + 97])
        keys = core.sample_keys()
        assert len(keys) == 80 and len(set(keys)) == 80
        picked.append(set(keys))
        # the rarest prefixes first while they fit in 8: lone (1), pair (2), five (5); six is not small
        assert keys[0] == "lone:a" and set(keys[1:3]) == {"pair:a", "pair:b"}
        assert set(keys[3:8]) == {f"five:{i}" for i in range(5)}
    assert picked[0] == picked[1]
    crowded = KeyspaceAnalysis(sample=20, seed=3)  # a budget of 2: only the lone key fits
    crowded.add_names(names)
    assert "lone:a" in crowded.sample_keys() and crowded.sample_keys()[0] == "lone:a"
