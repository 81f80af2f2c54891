"""svckit.display: marked frames read well in a notebook (durations, UTC times, short URLs, "—"),
the data stays as it is, and every other DataFrame displays exactly as pandas does."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from svckit import display, frames
from svckit.display import READABLE, readable, use_readable_frames

URL = "http://127.0.0.1:39135/queue/v2/demo/app/api/workflows/nightly"


def runs_like() -> pd.DataFrame:
    """What a user selects from ``frames.runs_frame``: a duration, UTC times, long URLs, gaps."""
    created = pd.to_datetime(pd.Series([1_795_400_000_123, 1_795_400_060_000, None], dtype="float64"),
                             unit="ms", utc=True)
    return pd.DataFrame({
        "workflow_run_id": pd.array(["wfr_1", "wfr_2", "wfr_3"], dtype="string"),
        "workflow_url": pd.array([URL, URL + "?a=1&b=<2>", None], dtype="string"),
        "state": pd.Categorical(["RUN_SUCCESS", "RUN_STARTED", "RUN_FAILED"]),
        "created_at": created,
        "duration": pd.to_timedelta(pd.Series([0.049, 2.34, np.nan]), unit="s"),
        "steps": pd.array([4, None, 2], dtype="Int64"),
        "score": [0.5, 0.25, np.nan],
    })


def cells(markup: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", markup, flags=re.DOTALL)


def test_cells_read_as_units_and_the_data_keeps_its_dtypes():
    df = runs_like()
    dtypes = df.dtypes.copy()
    markup = readable(df).to_html()
    row1, row2, row3 = (cells(markup)[i * 7:(i + 1) * 7] for i in range(3))
    assert row1[3:6] == ["2026-11-23 02:13:20", "49 ms", "4"] and row2[4] == "2.3 s"
    assert "<th" in markup and ">created_at (UTC)</th>" in markup and ">duration</th>" in markup
    # missing values of every kind: None, NaT, NA, NaN
    assert row3[1] == row3[3] == row3[4] == row3[6] == "—" and row2[5] == "—"
    assert row1[6] == "0.50" and row2[6] == "0.25"  # as pandas' repr writes the column
    # the long URL shortened, the whole (escaped) one in the tooltip
    assert row1[1] == f'<span title="{URL}">127.0.0.1:39135/…/demo/app/api/workflows/nightly</span>'
    assert 'title="http://127.0.0.1:39135/queue/v2/demo/app/api/workflows/nightly?a=1&amp;b=&lt;2&gt;"' in row2[1]
    assert "white-space: nowrap" in markup
    pd.testing.assert_series_equal(df.dtypes, dtypes)
    assert df["duration"].dtype == "timedelta64[ns]" and str(df["created_at"].dt.tz) == "UTC"
    assert df["duration"].iloc[0] == pd.Timedelta(milliseconds=49)


def test_text_is_escaped_and_cut_with_the_whole_of_it_in_the_tooltip():
    long = "<b>" + "x" * 200 + "</b>"
    df = pd.DataFrame({"<note>": [long, "a & b", '"q"']}, index=["<i>", "j", "k"])
    markup = readable(df).to_html()
    assert "<b>" not in markup and "<i>" not in markup and "<note>" not in markup
    assert "&lt;note&gt;" in markup and "&lt;i&gt;" in markup
    first, amp, quoted = cells(markup)
    assert first.startswith('<span title="&lt;b&gt;xxx') and first.endswith("x…</span>")
    assert len(re.sub(r"<[^>]+>|&\w+;", "", first.split(">", 1)[1])) <= 120
    assert amp == "a &amp; b" and quoted == "&quot;q&quot;"


def test_floats_look_as_pandas_writes_them():
    df = pd.DataFrame({"half": [0.5, 1.0], "whole": [1.0, 2.0], "long": [1 / 3, 2.0], "tiny": [1e-9, 1.0],
                       "huge": [1e10, 2.5], "nullable": pd.array([0.5, 1.25], dtype="Float64")})
    markup = readable(df).to_html()
    assert cells(markup) == ["0.5", "1.0", "0.333333", "1.000000e-09", "1.000000e+10", "0.50",
                             "1.0", "2.0", "2.000000", "1.000000e+00", "2.500000e+00", "1.25"]
    for column in ("half", "whole", "long", "tiny", "huge"):  # the same texts as pandas' own HTML
        assert set(cells(readable(df[[column]]).to_html())) <= set(cells(df[[column]]._repr_html_()))


def test_a_long_frame_shows_min_rows_and_says_how_many_it_has():
    n = 10_000
    df = pd.DataFrame({"i": range(n), "url": [f"{URL}/{i}" for i in range(n)],
                       "duration": pd.to_timedelta(np.arange(n), unit="s")})
    markup = readable(df).to_html()
    shown = pd.get_option("display.min_rows")
    assert markup.count("<tr>") == shown + 1  # the header row and min_rows rows
    assert re.findall(r'row_heading level0 row\d+" >(\d+)<', markup) == ["0", "1", "2", "3", "4",
                                                                        "9995", "9996", "9997", "9998", "9999"]
    assert "10,000 rows × 3 columns</caption>" in markup
    assert len(markup) < 20_000


def test_a_wide_frame_is_trimmed_as_pandas_trims_it():
    df = pd.DataFrame([range(30)], columns=[f"c{i}" for i in range(30)])
    with pd.option_context("display.max_columns", 10):
        markup = readable(df).to_html()
    headers = re.findall(r'col_heading level0 col\d+" >(\w+)<', markup)
    assert headers == ["c0", "c1", "c2", "c3", "c4", "c25", "c26", "c27", "c28", "c29"]
    assert "1 rows × 30 columns</caption>" in markup
    assert "<caption>" not in readable(df).to_html()  # no limit: all shown, nothing to say


def test_the_html_is_the_same_every_time():
    df = runs_like()
    first = readable(df).to_html()
    assert readable(df.copy()).to_html() == first
    assert ' id="T_' in first and "<td id=" not in first  # one table id, no per-cell ids


def test_frames_are_marked_and_the_mark_follows_selections():
    run = {"workflowRunId": "wfr_1", "workflowUrl": URL, "workflowState": "RUN_SUCCESS",
           "workflowRunCreatedAt": 1_795_400_000_000, "workflowRunCompletedAt": 1_795_400_000_049, "steps": []}
    df = frames.runs_frame([run, {**run, "workflowRunId": "wfr_2"}])
    picked = df[["workflow_run_id", "workflow_url", "state", "created_at", "duration", "steps"]]
    for frame in (df, picked, picked.head(1), picked.sort_values("workflow_run_id"),
                  pd.concat([picked, picked]), picked.merge(df[["workflow_run_id", "key"]])):
        assert display.is_marked(frame)
    assert display.is_marked(frames.steps_frame([])) and display.is_marked(frames.keys_frame(["a"]))
    assert not display.is_marked(pd.DataFrame({"a": [1]}))
    assert "49 ms" in readable(picked).to_html()


@pytest.fixture
def shell(tmp_path, monkeypatch) -> Iterator[object]:
    """A real IPython shell, for this test only (a live one would change how other tests display)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    config = Config()
    config.HistoryManager.enabled = False
    assert not InteractiveShell.initialized()
    yield InteractiveShell.instance(config=config)
    InteractiveShell.clear_instance()


def test_in_ipython_marked_frames_display_readably_and_others_as_pandas_does(shell):
    marked, plain = display.mark(runs_like()), runs_like()
    html_of = shell.display_formatter.formatters["text/html"]  # type: ignore[attr-defined]
    assert html_of(marked) == plain._repr_html_()  # nothing registered yet
    assert use_readable_frames() is True and use_readable_frames(shell) is True  # twice: no change
    assert html_of(marked) == readable(marked).to_html() and "49 ms" in html_of(marked)
    assert html_of(plain) == plain._repr_html_()
    data, _ = shell.display_formatter.format(marked)  # type: ignore[attr-defined]
    assert data["text/plain"] == repr(marked)  # text stays pandas' own
    with pd.option_context("display.notebook_repr_html", False):
        assert html_of(marked) is None and html_of(plain) is None


def test_outside_ipython_nothing_is_registered():
    from IPython.core.interactiveshell import InteractiveShell

    assert not InteractiveShell.initialized()
    assert use_readable_frames() is False


def test_the_mark_is_one_attrs_entry():
    df = pd.DataFrame({"a": [1]})
    assert display.mark(df) is df and df.attrs == {READABLE: True}


def test_the_analyses_frames_are_marked_too():
    from types import SimpleNamespace

    from svckit.kv.analysis import KeyspaceAnalysis
    from svckit.kv.bulk import export_frame
    from svckit.kv.profiler import MonitorProfile
    from svckit.vector.evaluation import summarize

    report = KeyspaceAnalysis().report()
    for frame in (report.by_prefix, report.by_type, report.ttl, report.no_expiry, report.biggest, report.warnings):
        assert display.is_marked(frame)
    event = SimpleNamespace(time=1_795_400_000.0, command="GET", args=["user:1"])
    snapshot = MonitorProfile().feed_all([event]).snapshot()
    assert all(display.is_marked(f) for f in (snapshot.rate, snapshot.commands, snapshot.keys, snapshot.prefixes))
    assert display.is_marked(export_frame([{"key": "k", "type": "string", "ttl_ms": None, "value": "v"}]))
    per_query = display.mark(pd.DataFrame({"configuration": ["dense"], "recall": [1.0], "reciprocal_rank": [1.0],
                                           "ndcg": [1.0]}))
    assert display.is_marked(summarize(per_query))  # evaluate() marks; summarize() keeps its attrs
