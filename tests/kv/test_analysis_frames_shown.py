"""The frames the kv_analysis and kv_bulk notebooks show, as a notebook shows them (the HTML of
:func:`svckit.display.readable`, what IPython displays for a marked frame): every number in the
widget's unit (``1.3 MiB``, ``2,003``, ``44.6%``, ``10 min``), never ``1.336761e+06``,
``95783.518611``, ``0.446428`` or ``2003.0``; the sample-vs-exact check reads ``yes`` / ``no``;
counts of a complete pass are whole numbers in the frame. Over real HTTP against the sandbox (every
backend), on keys of this test's own."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from svckit.display import readable
from svckit.kv import KV, analyze_keyspace, bulk_export, pattern_for_prefix
from tests.kv.conftest import fill

RAW = re.compile(r"\d\.\d+e[+-]\d\d|\.\d{3,}\b|^-?\d+\.0$")
BYTES = re.compile(r"^(\d[\d,]*(\.\d)? (B|KiB|MiB)|—)$")
COUNT = re.compile(r"^\d{1,3}(,\d{3})*$")
SHARE = re.compile(r"^(\d{1,3}\.\d%|—)$")
FORMATS = {"memory": BYTES, "memory ±": BYTES, "memory exact": BYTES, "bytes": BYTES, "keys": COUNT,
           "keys ±": COUNT, "sampled": COUNT, "length": COUNT, "share": SHARE, "share ±": SHARE,
           "within ±": re.compile(r"^(yes|no|—)$"), "ttl_ms": re.compile(r"^(—|\d+ (ms|s)|\d+ min( \d\d s)?|\d+ h( \d\d min)?|\d+ d( \d\d h)?)$")}


def shown(frame: pd.DataFrame) -> dict[str, list[str]]:
    """The text of each cell as the notebook shows it, per column (the data cells, not the index)."""
    markup = readable(frame).to_html()
    texts = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", markup, flags=re.DOTALL)]
    width = frame.shape[1]
    return {column: texts[i::width] for i, column in enumerate(frame.columns)}


def check(frame: pd.DataFrame) -> dict[str, list[str]]:
    columns = shown(frame)
    raw = {c: t for c, texts in columns.items() for t in texts if RAW.search(t) and c not in ("key", "prefix", "note")}
    assert not raw, raw
    wrong = {c: [t for t in columns[c] if not FORMATS[c].match(t)] for c in columns if c in FORMATS}
    assert not any(wrong.values()), wrong
    return columns


@pytest.fixture
def shop(kv: KV[str]) -> KV[str]:
    """The notebook's shop, smaller: hashes, sessions with TTLs, lists, pages, one big report, one backlog."""
    fill(kv, {f"shop:session:{i}": "s" * 40 for i in range(400)})
    pipe = kv.pipeline()
    for i in range(600):
        pipe.hset(f"shop:user:{i % 6}:{i}", mapping={"name": f"user {i}", "bio": "x" * (10 + i % 290)})
    for i in range(400):
        pipe.expire(f"shop:session:{i}", (45, 1800, 36_000, 200_000)[i % 4])
    for i in range(200):
        pipe.rpush(f"shop:cart:{i % 5}:{i}", *["sku"] * (1 + i % 25))
    pipe.exec()
    kv.set("shop:report:2025", "r" * 400_000)
    kv.rpush("shop:queue:backlog", *[str(i) for i in range(12_000)])
    return kv


def test_the_analysis_frames_read_as_the_widget_reads(shop: KV[str]) -> None:
    sampled = analyze_keyspace(shop, "shop:*", sample=300, seed=1, depth=3, big_value_bytes=100_000, progress=False)
    exact = analyze_keyspace(shop, "shop:*", sample=None, depth=3, big_value_bytes=100_000, progress=False)
    memory = exact.memory_available

    by_prefix = check(sampled.by_prefix.head(8))
    assert by_prefix["prefix"][0] == "shop" and by_prefix["keys"][0] == "1,202" and by_prefix["keys ±"][0] == "0"
    assert (by_prefix["share"][0] == "100.0%") if memory else by_prefix["memory"][0] == "—"

    compare = check(sampled.against(exact).head(10))
    assert compare["within ±"][0] == ("yes" if memory else "—")  # the root: 1.8 MiB ± 94 KiB covers 1.7 MiB
    lone = compare["prefix"].index("shop:report")
    assert compare["sampled"][lone] == "1" and compare["memory ±"][lone] == ("0 B" if memory else "—")

    ttl = check(exact.ttl)
    assert ttl["ttl"] == ["no expiry", "&lt; 1 min", "&lt; 1 h", "&lt; 1 day", "&lt; 1 week", "≥ 1 week"]
    assert ttl["keys"] == ["802", "100", "100", "100", "100", "0"] and ttl["share"][0] == "66.7%"
    assert exact.ttl["keys"].dtype == "int64" and exact.by_type["keys"].dtype == "int64"  # counted: whole

    biggest = check(exact.biggest.groupby("type").head(2))
    rows = dict(zip(biggest["key"], biggest["length"]))
    assert rows["shop:queue:backlog"] == "12,000" and rows["shop:report:2025"] == "400,000"
    check(exact.by_type)
    check(sampled.by_type)
    check(sampled.no_expiry)
    if memory:  # fakeredis has no MEMORY USAGE, so no big-value warning by size
        warnings = check(exact.warnings)
        assert warnings["key"][0] == "shop:report:2025" and re.match(r"^\d{3}\.\d KiB$", warnings["bytes"][0])


def test_the_bulk_export_frame_reads_as_json_with_ttls_as_durations(kv: KV[str]) -> None:
    pipe = kv.pipeline()
    for i in range(5):
        pipe.hset(f"nbf:user:{i}", mapping={"name": f"user {i}", "plan": "free" if i % 3 else "paid"})
    pipe.exec()
    kv.expire("nbf:user:1", 3600)
    exported = bulk_export(kv, pattern_for_prefix("nbf:user", ":"), format="frame", progress=False)
    columns = check(exported.frame.sort_values("key").head())
    assert columns["key"] == [f"nbf:user:{i}" for i in range(5)]
    assert columns["ttl_ms"][0] == "—" and columns["ttl_ms"][1] in ("59 min 59 s", "1 h")
    assert columns["value"][0] == '{"name": "user 0", "plan": "paid"}'.replace('"', "&quot;")
