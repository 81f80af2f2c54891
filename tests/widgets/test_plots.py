"""The figure builders: what each chart contains, independent of any widget."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from svckit.widgets import _plots


def _runs(n: int, states=("RUN_SUCCESS", "RUN_FAILED", "RUN_STARTED")) -> pd.DataFrame:
    created = pd.to_datetime(1_763_800_000_000 + np.arange(n) * 1000, unit="ms", utc=True)
    state = [states[i % len(states)] for i in range(n)]
    completed = [c + pd.Timedelta(seconds=5) if s != "RUN_STARTED" else pd.NaT for c, s in zip(created, state)]
    return pd.DataFrame({"workflow_run_id": [f"r{i}" for i in range(n)], "state": state,
                         "created_at": created, "completed_at": pd.to_datetime(completed, utc=True)})


def test_gantt_small_uses_one_bar_per_run_coloured_by_state():
    runs = _runs(6)
    fig = _plots.runs_gantt_figure(runs, now=runs["created_at"].max() + pd.Timedelta(seconds=5))
    assert {type(t) for t in fig.data} == {go.Bar}  # bars only: a short run is a thin bar, not a marker
    by_state = {t.name: t for t in fig.data if isinstance(t, go.Bar)}
    assert set(by_state) == {"RUN_SUCCESS", "RUN_FAILED", "RUN_STARTED"}
    assert by_state["RUN_FAILED"].marker.color == _plots.STATE_COLORS["RUN_FAILED"]
    assert sorted(np.concatenate([t.customdata for t in by_state.values()]).tolist()) == list(range(6))
    # a completed run's bar is exactly its duration (5 s)
    assert by_state["RUN_SUCCESS"].x[0] == 5000.0


def test_gantt_running_run_extends_to_now():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    fig = _plots.runs_gantt_figure(_runs(3), now=now)
    running = next(t for t in fig.data if t.name == "RUN_STARTED" and isinstance(t, go.Bar))
    assert running.base[0] + running.x[0] == now.timestamp() * 1000


def test_gantt_many_runs_switches_to_webgl_segments_separated_by_gaps():
    n = _plots.WEBGL_THRESHOLD + 100
    fig = _plots.runs_gantt_figure(_runs(n))
    assert all(isinstance(t, go.Scattergl) for t in fig.data)
    assert len(fig.data) == 3  # one WebGL trace per state, not one shape per run
    t = fig.data[0]
    xs = np.asarray(t.x, dtype=float)
    assert np.isnan(xs[2::3]).all() and not np.isnan(xs[0::3]).any()
    assert sum(len(t.x) // 3 for t in fig.data) == n


def test_gantt_bars_are_never_thinner_than_a_share_of_the_axis():
    # a run of 48 ms beside a run of half an hour: a bar a person sees, its real duration written
    runs = _runs(2, states=("RUN_SUCCESS",))
    runs.loc[0, "completed_at"] = runs.loc[0, "created_at"] + pd.Timedelta(milliseconds=48)
    runs.loc[1, "completed_at"] = runs.loc[1, "created_at"] + pd.Timedelta(minutes=30)
    fig_bars = [t for t in _plots.runs_gantt_figure(runs).data if isinstance(t, go.Bar)]
    (bars,) = fig_bars
    span = max(np.asarray(bars.base) + np.asarray(bars.x)) - min(bars.base)
    assert bars.x[0] >= _plots.runs.MIN_BAR * span > 48 and bars.x[1] == 30 * 60_000.0
    assert list(bars.text) == ["48 ms", "30 min"] and "48 ms" in bars.hovertext[0]
    # the same with many runs, drawn as WebGL segments
    many = pd.concat([runs] * (_plots.WEBGL_THRESHOLD // 2 + 1), ignore_index=True)
    (lines,) = _plots.runs_gantt_figure(many).data
    assert lines.x[1] - lines.x[0] >= _plots.runs.MIN_BAR * span


def test_gantt_empty_says_so():
    fig = _plots.runs_gantt_figure(_runs(0))
    assert "no runs" in fig.layout.annotations[0].text


def test_rank_shift_breaks_lines_where_an_id_is_missing():
    dense = pd.DataFrame({"rank": [1, 2], "id": ["a", "b"], "score": [0.9, 0.8]})
    sparse = pd.DataFrame({"rank": [1], "id": ["b"], "score": [3.0]})
    fig = _plots.rank_shift_figure({"DENSE": dense, "SPARSE": sparse, "HYBRID": dense})
    lines = {t.name: list(t.y) for t in fig.data}
    assert lines == {"a": [1, None, 1], "b": [2, 1, 2]}


def test_projection_categorical_colour_makes_one_trace_per_value_and_marks_hits_and_query():
    coords = np.array([[0, 0], [1, 1], [2, 2]], dtype=float)
    hits = pd.DataFrame({"rank": [1], "id": ["b"], "score": [0.5]})
    fig = _plots.projection_figure(coords, ids=["a", "b", "c"], color=pd.Series(["x", "y", "x"]),
                                   hits=hits, hit_coords=coords[[1]], query_coords=np.array([0.5, 0.5]))
    names = [t.name for t in fig.data]
    assert names == ["x", "y", "hits", "query"]
    assert list(fig.data[2].x) == [1.0] and fig.data[3].marker.symbol == "star"


def test_the_profile_rate_axis_fixes_its_ticks_only_over_the_points_it_has():
    # plotly's default date range with no point is a year: a one-second dtick over it is 31 million
    # ticks, which held the browser for minutes when a profiler was shown before its first event
    from svckit.kv import MonitorProfile

    snap = MonitorProfile().snapshot()
    assert len(snap.rate) == 0
    empty = _plots.profile_figure(snap.rate, snap.commands, snap.keys, snap.prefixes)
    assert empty.layout.xaxis.dtick is None and empty.layout.xaxis.type == "date"
    times = pd.date_range("2026-11-28 12:00", periods=12, freq="s", tz="UTC")
    rate = pd.DataFrame({"time": times, "commands": np.arange(12.0)})
    full = _plots.profile_figure(rate, snap.commands, snap.keys, snap.prefixes)
    assert full.layout.xaxis.dtick == 3000  # a tick every 3 s: 4 ticks over 12 points
