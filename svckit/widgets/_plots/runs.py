"""Figures of the workflow timeline: the runs' Gantt and a run's steps.

Both show a duration at any scale: a bar narrower than :data:`MIN_BAR` of its axis's span is drawn
that wide, so a run of 48 ms on an axis of half an hour is a thin bar, not a dot, and its real
duration is the bar's text (``48 ms``) and in its hover."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from svckit._units import duration_text
from svckit.queue.models import RunState
from svckit.widgets._plots._base import (
    OTHER_COLOR,
    STATE_COLORS,
    STEP_COLORS,
    TEMPLATE,
    WEBGL_THRESHOLD,
    empty_figure,
    ms,
)

#: the narrowest bar, as a share of the axis's span (about 5 px of a chart 900 px wide)
MIN_BAR = 0.006
#: up to this many runs each is named on its axis and its duration written by its bar
LABELLED_ROWS = 40
#: the steps chart's legend: what each colour means, in the order it lists them
KEPT = "kept from the earlier run"
KEPT_COLOR = "#98df8a"  # a pale success: the step succeeded in the run this one was resumed from
_KIND_OF_STATE = {"STEP_SUCCESS": "success", "STEP_RETRY": "retry", "STEP_FAILED": "failed",
                  "STEP_CANCELED": "canceled", "STEP_PROGRESS": "in progress", "STEP_STARTED": "in progress"}
STEP_KINDS: dict[str, str] = {**{kind: STEP_COLORS[state] for state, kind in _KIND_OF_STATE.items()}, KEPT: KEPT_COLOR}


def _now_ms(now: datetime | None) -> float:
    now = now or datetime.now(UTC)
    return now.timestamp() * 1000.0


def visible_widths(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Each bar's drawn width (ms): its length, or :data:`MIN_BAR` of the span of every bar, whichever
    is larger (and at least 1 ms)."""
    if not len(start):
        return np.zeros(0)
    span = float(np.nanmax(end) - np.nanmin(start))
    return np.maximum(end - start, max(MIN_BAR * span, 1.0))


def _durations(start: np.ndarray, end: np.ndarray) -> list[str]:
    return [duration_text(d / 1000.0) for d in end - start]


def _column(frame: pd.DataFrame, name: str, fallback: str) -> np.ndarray:
    """A text column, or another where a frame (the benches' own) has no such column."""
    return frame[name if name in frame.columns else fallback].astype("string").fillna("").to_numpy(dtype=object)


def runs_gantt_figure(
    runs: pd.DataFrame,
    *,
    now: datetime | None = None,
    selected: int | None = None,
    webgl_threshold: int = WEBGL_THRESHOLD,
    title: str = "Workflow runs",
) -> go.Figure:
    """One row per run (row = position in ``runs``), named by ``run_name`` (workflow, label, short id,
    "resumed": :func:`svckit.frames.runs_frame`), a bar from creation to completion (running runs
    extend to ``now``), coloured by state; a bar is never narrower than :data:`MIN_BAR` of the axis.

    Up to ``webgl_threshold`` runs each state is a horizontal bar trace (crisp, clickable bars).
    Above it each state is ONE Scattergl line trace: bar i is the segment (start_i, i)-(end_i, i)
    and segments are separated by NaN, so 10,000 runs are three or four WebGL draws. Every
    trace's ``customdata`` holds the row number, which is how a click finds its run."""
    if runs.empty:
        return empty_figure(title, "no runs match the filters")
    n = len(runs)
    start = ms(runs["created_at"])
    end = ms(runs["completed_at"])
    running = np.isnan(end)
    end = np.where(running, _now_ms(now), end)
    end = np.maximum(end, start)
    width = visible_widths(start, end)
    states = runs["state"].astype("string").fillna("UNKNOWN").to_numpy(dtype=object)
    names = _column(runs, "run_name", "workflow_run_id")
    run_ids = runs["workflow_run_id"].astype("string").to_numpy(dtype=object)
    rows = np.arange(n, dtype=float)
    fig = go.Figure()
    webgl = n > webgl_threshold
    labelled = n <= LABELLED_ROWS
    took = [] if webgl else _durations(start, end)
    for state in [s.value for s in RunState] + sorted(set(states) - {s.value for s in RunState}):
        sel = np.flatnonzero(states == state)
        if not len(sel):
            continue
        color = STATE_COLORS.get(state, OTHER_COLOR)
        if webgl:
            k = len(sel)
            xs = np.empty(3 * k)
            xs[0::3], xs[1::3], xs[2::3] = start[sel], start[sel] + width[sel], np.nan
            ys = np.empty(3 * k, dtype=np.float32)  # row numbers: float32 is exact up to 16 million
            ys[0::3], ys[1::3], ys[2::3] = rows[sel], rows[sel], np.nan
            cd = np.repeat(sel, 3).astype(np.int32)
            # the run's name on the bar's start point only: a third of the strings shipped, and
            # hovering anywhere near the bar's left end names the run
            text = np.empty(3 * k, dtype=object)
            text[0::3], text[1::3], text[2::3] = names[sel], "", ""
            fig.add_trace(go.Scattergl(
                x=xs, y=ys, mode="lines", name=state, line={"color": color, "width": 4},
                customdata=cd, text=text, connectgaps=False,
                hovertemplate=f"%{{text}}<br>{state}<extra></extra>",
            ))
        else:
            hover = [f"<b>{names[i]}</b><br>{run_ids[i]}<br>{state}{' (running)' if running[i] else ''}"
                     f"<br>{took[i]}" for i in sel]
            fig.add_trace(go.Bar(
                base=start[sel], x=width[sel], y=rows[sel], orientation="h", name=state,
                marker_color=color, customdata=sel, text=[took[i] for i in sel],
                textposition="outside" if labelled else "none", cliponaxis=False, textfont={"size": 10},
                hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", width=0.8,
            ))
    shapes = []
    if selected is not None and 0 <= selected < n:
        shapes.append({"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                       "y0": selected - 0.5, "y1": selected + 0.5, "line": {"width": 0},
                       "fillcolor": "rgba(255, 200, 0, 0.35)", "layer": "below"})
    yaxis: dict = {"autorange": "reversed", "showgrid": False, "automargin": True}
    if labelled:
        yaxis.update(tickmode="array", tickvals=list(range(n)), ticktext=list(names))
    else:
        yaxis.update(showticklabels=False, title="run")
    fig.update_layout(
        title=f"{title} ({n:,})", template=TEMPLATE, barmode="overlay", shapes=shapes,
        height=min(200 + 22 * n, 640), xaxis={"type": "date", "title": "time (UTC)"}, yaxis=yaxis,
        margin={"l": 10, "r": 70, "t": 80, "b": 40}, clickmode="event",
        legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "xanchor": "left"},
    )
    return fig


def step_kind(state: str, kept: bool) -> str:
    """The steps chart's legend entry of a step: a kind of :data:`STEP_KINDS`, or the state itself."""
    return KEPT if kept else _KIND_OF_STATE.get(state, state or "unknown")


def steps_figure(steps: pd.DataFrame, *, title: str = "Steps") -> go.Figure:
    """The selected run's steps: one lane per row, a parallel group's steps in adjacent lanes under
    a shaded band, each bar from the step's ``start`` to ``end`` (the next event), coloured by what
    happened to it, with a legend of the colours (:data:`STEP_KINDS`).

    The running step's ``end`` is already "now" in the frame; it is drawn hatched so it reads as
    open-ended. A step ``kept`` from the run this one was resumed from is a mark at this run's start,
    not a bar: it did not run here. Retries and output are in the hover."""
    if steps.empty:
        return empty_figure(title, "select a run")
    # "g2=1 fetch": the second step of group 2, a parallel one ("=", two lanes side by side); "g3·0"
    # is a sequential group's step (every font draws both marks)
    labels = np.array([
        f"g{g}{'=' if t == 'parallel' else '·'}{lane} {name}"
        for g, t, lane, name in zip(steps["group"], steps["group_type"], steps["position"], steps["step_name"])
    ], dtype=object)
    start = ms(steps["start"])
    end = np.maximum(ms(steps["end"]), start)
    width = visible_widths(start, end)
    took = _durations(start, end)
    created = ms(steps["created_at"])
    outs = steps["out"].astype("string").fillna("").str.slice(0, 200).to_numpy(dtype=object)
    retries = steps["retries"].fillna(0).astype(int).to_numpy()
    state = steps["state"].astype("string").fillna("").to_numpy(dtype=object)
    running = steps["running"].fillna(False).astype(bool).to_numpy()
    kept = steps["kept"].to_numpy(dtype=bool)
    kinds = np.array([step_kind(s, k) for s, k in zip(state, kept)], dtype=object)
    hover = []
    for i, lbl in enumerate(labels):
        if kept[i]:
            ran = pd.Timestamp(created[i], unit="ms", tz="UTC")
            what = f"{state[i]}, {KEPT}: ran {ran:%Y-%m-%d %H:%M:%S}, not run again"
        else:
            what = f"{state[i]}{' (running)' if running[i] else ''}<br>{took[i]}"
        hover.append(f"<b>{lbl}</b><br>{what}<br>retries: {retries[i]}" + (f"<br>out: {outs[i]}" if outs[i] else ""))
    hover = np.array(hover, dtype=object)
    fig = go.Figure()
    for kind in [k for k in STEP_KINDS if k in set(kinds)] + sorted(set(kinds) - set(STEP_KINDS)):
        sel = np.flatnonzero(kinds == kind)
        color = STEP_KINDS.get(kind, OTHER_COLOR)
        if kind == KEPT:  # a mark at the run's start: a zero-length bar would not show at all
            fig.add_trace(go.Scatter(
                x=start[sel], y=labels[sel], mode="markers", name=kind, customdata=sel,
                marker={"color": color, "size": 11, "symbol": "circle", "line": {"color": STEP_KINDS["success"],
                                                                                  "width": 1.5}},
                hovertext=hover[sel], hovertemplate="%{hovertext}<extra></extra>"))
            continue
        fig.add_trace(go.Bar(
            base=start[sel], x=width[sel], y=labels[sel], orientation="h", name=kind, marker_color=color,
            marker_pattern_shape=["/" if running[i] else "" for i in sel], customdata=sel,
            text=[took[i] for i in sel], textposition="outside",
            cliponaxis=False, textfont={"size": 10}, hovertext=hover[sel],
            hovertemplate="%{hovertext}<extra></extra>", width=0.7,
        ))
    shapes = []
    for rows in steps.reset_index(drop=True).groupby("group", sort=True).groups.values():
        if (steps["group_type"].iloc[rows[0]] == "parallel") and len(rows) > 1:
            shapes.append({"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                           "y0": min(rows) - 0.5, "y1": max(rows) + 0.5, "line": {"width": 0},
                           "fillcolor": "rgba(148, 103, 189, 0.12)", "layer": "below"})
    fig.update_layout(title=title, template=TEMPLATE, height=190 + 28 * len(steps), shapes=shapes, barmode="overlay",
                      xaxis={"type": "date", "title": "time (UTC)"},
                      yaxis={"autorange": "reversed", "automargin": True, "type": "category",
                             "categoryorder": "array", "categoryarray": list(labels)},
                      margin={"l": 10, "r": 70, "t": 80, "b": 40}, showlegend=True,
                      legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "xanchor": "left",
                              "title": {"text": "steps"}})
    return fig
