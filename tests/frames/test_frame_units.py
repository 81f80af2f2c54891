"""One number format for frames and widgets: a marked frame's columns with a unit read as the widgets
write them (bytes ``1.3 MiB``, counts ``2,003``, shares ``44.6%``, durations, scores in six decimals,
checks ``yes`` / ``no``), and the frame keeps its numbers; ``pipeline_frame`` has no ``index`` column."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

from svckit import frames
from svckit._units import count_text, mark, share_text
from svckit.display import readable, unit_of
from svckit.errors import CommandError
from svckit.kv.profiler import MonitorProfile
from svckit.kv.protocol import MonitorEvent

#: texts a person should never meet in a readable frame: pandas' raw float reprs
RAW = re.compile(r"\d\.\d+e[+-]\d\d|\.\d{5,}\b|^-?\d+\.0$")


def cells(markup: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", markup, flags=re.DOTALL)


def test_unit_texts() -> None:
    assert count_text(2003.0) == "2,003" and count_text(1585.485) == "1,585" and count_text(7) == "7"
    assert share_text(0.446428) == "44.6%" and share_text(1.0) == "100.0%"
    assert count_text(float("nan")) == share_text(float("inf")) == "—"
    with pytest.raises(ValueError, match="unknown unit"):
        mark(pd.DataFrame({"a": [1]}), a="furlongs")


def test_columns_with_a_unit_read_as_the_widgets_write_them_and_keep_their_numbers() -> None:
    df = pd.DataFrame({
        "prefix": ["shop", "shop:user"],
        "keys": [3203, 1500],
        "estimate": [2003.0, 1585.485],
        "memory": [1_336_761.0, np.nan],
        "memory ±": [95_783.518611, 20_441.3],
        "share": [0.446428, 0.0325],
        "ttl_ms": pd.array([599_897, None], dtype="Int64"),
        "score": [2 / 61, 0.5],
        "within ±": pd.array([False, None], dtype="boolean"),
    })
    original = df.copy()
    mark(df, keys="count", estimate="count", memory="bytes", **{"memory ±": "bytes"}, share="share",
         ttl_ms="ms", score="score", **{"within ±": "yes/no"})
    row1, row2 = (cells(readable(df).to_html())[i * 9:(i + 1) * 9] for i in range(2))
    assert row1 == ["shop", "3,203", "2,003", "1.3 MiB", "93.5 KiB", "44.6%", "10 min",
                    "0.032787", "no"]
    assert row2 == ["shop:user", "1,500", "1,585", "—", "20.0 KiB", "3.2%", "—", "0.500000", "—"]  # one precision
    assert not [c for c in row1[:7] + row2[:7] if RAW.search(c)]  # (scores have six decimals)
    # only the display changed
    pd.testing.assert_frame_equal(df, original)
    assert df["keys"].dtype == "int64" and df["memory"].dtype == "float64"


def test_a_merged_column_reads_in_the_unit_of_the_column_it_came_from() -> None:
    left = mark(pd.DataFrame({"prefix": ["a"], "memory": [2048.0]}), memory="bytes")
    both = left.merge(left, on="prefix", suffixes=("", " exact"))
    assert unit_of("memory exact", both.attrs["svckit.units"]) == "bytes"
    assert cells(readable(both.round(2)).to_html()) == ["a", "2.0 KiB", "2.0 KiB"]
    assert unit_of("memory", {}) is None and unit_of("memoryless", {"memory": "bytes"}) is None


def test_dicts_and_lists_in_a_cell_read_as_json() -> None:
    df = mark(pd.DataFrame({"value": [{"name": "user 1", "plan": "paid"}, ["a", "ö"]]}))
    assert cells(readable(df).to_html()) == ["{&quot;name&quot;: &quot;user 1&quot;, &quot;plan&quot;: &quot;paid&quot;}",
                                             "[&quot;a&quot;, &quot;ö&quot;]"]


def test_pipeline_frame_has_no_index_column_repeating_the_index() -> None:
    df = frames.pipeline_frame([1, CommandError("WRONGTYPE Operation against a key"), "OK"],
                               [("INCR", "a"), ("LPUSH", "a", "x"), ("SET", "b", 1)])
    assert list(df.columns) == ["command", "ok", "result", "error"]
    assert df.index.tolist() == [0, 1, 2]
    headers = re.findall(r'<th class="col_heading[^"]*"[^>]*>(.*?)</th>', readable(df).to_html())
    assert headers == ["command", "ok", "result", "error"]


def test_the_profilers_frames_read_as_counts_and_shares() -> None:
    start = datetime(2026, 12, 6, 12, 0, tzinfo=UTC).timestamp()
    events = [MonitorEvent(datetime.fromtimestamp(start + i / 1000, UTC), 0, "127.0.0.1:1", "GET",
                           [f"shop:product:{i % 3}"]) for i in range(2500)]
    snap = MonitorProfile(prefix_depth=2).feed_all(events).snapshot(now=start + 3)
    shown = cells(readable(snap.keys).to_html())
    assert shown[:4] == ["shop:product:0", "834", "0", "33.4%"] and not [c for c in shown if RAW.search(c)]
    assert cells(readable(snap.commands).to_html()) == ["GET", "2,500", "0", "100.0%"]
    assert cells(readable(snap.rate).to_html())[1::2][:3] == ["1,000", "1,000", "500"]
