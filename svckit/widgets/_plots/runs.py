"""Figures of the workflow timeline: the runs' Gantt and a run's steps."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
import plotly.graph_objects as go

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


def _now_ms(now: datetime | None) -> float:
    now = now or datetime.now(UTC)
    return now.timestamp() * 1000.0


def runs_gantt_figure(
    runs: pd.DataFrame,
    *,
    now: datetime | None = None,
    selected: int | None = None,
    webgl_threshold: int = WEBGL_THRESHOLD,
    title: str = "Workflow runs",
) -> go.Figure:
    """One row per run (row = position in ``runs``), a bar from creation to completion (running
    runs extend to ``now``), coloured by state.

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
    end = np.maximum(end, start + 1.0)  # a zero-length run still gets a visible sliver
    states = runs["state"].astype("string").fillna("UNKNOWN").to_numpy(dtype=object)
    run_ids = runs["workflow_run_id"].astype("string").to_numpy(dtype=object)
    rows = np.arange(n, dtype=float)
    duration_s = (end - start) / 1000.0
    fig = go.Figure()
    webgl = n > webgl_threshold
    for state in [s.value for s in RunState] + sorted(set(states) - {s.value for s in RunState}):
        sel = np.flatnonzero(states == state)
        if not len(sel):
            continue
        color = STATE_COLORS.get(state, OTHER_COLOR)
        if webgl:
            k = len(sel)
            xs = np.empty(3 * k)
            xs[0::3], xs[1::3], xs[2::3] = start[sel], end[sel], np.nan
            ys = np.empty(3 * k, dtype=np.float32)  # row numbers: float32 is exact up to 16 million
            ys[0::3], ys[1::3], ys[2::3] = rows[sel], rows[sel], np.nan
            cd = np.repeat(sel, 3).astype(np.int32)
            # the run id on the bar's start point only: a third of the strings shipped, and hovering
            # anywhere near the bar's left end names the run
            text = np.empty(3 * k, dtype=object)
            text[0::3], text[1::3], text[2::3] = run_ids[sel], "", ""
            fig.add_trace(go.Scattergl(
                x=xs, y=ys, mode="lines", name=state, line={"color": color, "width": 4},
                customdata=cd, text=text, connectgaps=False,
                hovertemplate=f"%{{text}}<br>{state}<extra></extra>",
            ))
        else:
            hover = [f"{r}<br>{state}<br>{d:.1f} s" for r, d in zip(run_ids[sel], duration_s[sel])]
            fig.add_trace(go.Bar(
                base=start[sel], x=end[sel] - start[sel], y=rows[sel], orientation="h", name=state,
                marker_color=color, customdata=sel, text=run_ids[sel], textposition="none", legendgroup=state,
                hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", width=0.8,
            ))
            # a start marker per run: a run of a second is a sliver on a day-wide axis, this keeps it
            # visible and clickable
            fig.add_trace(go.Scatter(
                x=start[sel], y=rows[sel], mode="markers", name=state, legendgroup=state, showlegend=False,
                marker={"color": color, "size": 9, "symbol": "diamond"}, customdata=sel, hovertext=hover,
                hovertemplate="%{hovertext}<extra></extra>",
            ))
    shapes = []
    if selected is not None and 0 <= selected < n:
        shapes.append({"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                       "y0": selected - 0.5, "y1": selected + 0.5, "line": {"width": 0},
                       "fillcolor": "rgba(255, 200, 0, 0.35)", "layer": "below"})
    yaxis: dict = {"autorange": "reversed", "title": "run", "showgrid": False}
    if n <= 40:
        yaxis.update(tickmode="array", tickvals=list(range(n)), ticktext=[str(r)[-12:] for r in run_ids])
    else:
        yaxis.update(showticklabels=False)
    fig.update_layout(
        title=f"{title} ({n:,})", template=TEMPLATE, barmode="overlay", shapes=shapes,
        height=min(200 + 22 * n, 640), xaxis={"type": "date", "title": "time (UTC)"}, yaxis=yaxis,
        margin={"l": 60, "r": 10, "t": 80, "b": 40}, clickmode="event",
        legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "xanchor": "left"},
    )
    return fig


def steps_figure(steps: pd.DataFrame, *, title: str = "Steps") -> go.Figure:
    """The selected run's steps: one lane per row, a parallel group's steps in adjacent lanes under
    a shaded band, each bar from the step's createdAt to the next event (``start``..``end``).

    The running step's ``end`` is already "now" in the frame; it is drawn hatched so it reads as
    open-ended. Retries and output are in the hover."""
    if steps.empty:
        return empty_figure(title, "select a run")
    # "g2=1 fetch": the second step of group 2, a parallel one ("=", two lanes side by side); "g3·0"
    # is a sequential group's step (every font draws both marks)
    labels = [
        f"g{g}{'=' if t == 'parallel' else '·'}{lane} {name}"
        for g, t, lane, name in zip(steps["group"], steps["group_type"], steps["position"], steps["step_name"])
    ]
    start = ms(steps["start"])
    end = np.maximum(ms(steps["end"]), start + 1.0)
    outs = steps["out"].astype("string").fillna("").str.slice(0, 200).to_numpy(dtype=object)
    retries = steps["retries"].fillna(0).astype(int).to_numpy()
    state = steps["state"].astype("string").fillna("").to_numpy(dtype=object)
    running = steps["running"].fillna(False).astype(bool).to_numpy()
    hover = [
        f"<b>{lbl}</b><br>{st}{' (running)' if run else ''}<br>{(e - s) / 1000:.2f} s"
        f"<br>retries: {r}" + (f"<br>out: {o}" if o else "")
        for lbl, st, run, s, e, r, o in zip(labels, state, running, start, end, retries, outs)
    ]
    colors = [STEP_COLORS.get(s, OTHER_COLOR) for s in state]
    fig = go.Figure(go.Bar(
        base=start, x=end - start, y=labels, orientation="h", marker_color=colors,
        marker_pattern_shape=["/" if r else "" for r in running], hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>", customdata=np.arange(len(steps)), width=0.7,
    ))
    shapes = []
    for rows in steps.reset_index(drop=True).groupby("group", sort=True).groups.values():
        if (steps["group_type"].iloc[rows[0]] == "parallel") and len(rows) > 1:
            shapes.append({"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                           "y0": min(rows) - 0.5, "y1": max(rows) + 0.5, "line": {"width": 0},
                           "fillcolor": "rgba(148, 103, 189, 0.12)", "layer": "below"})
    fig.update_layout(title=title, template=TEMPLATE, height=160 + 28 * len(steps), shapes=shapes,
                      xaxis={"type": "date", "title": "time (UTC)"},
                      yaxis={"autorange": "reversed", "automargin": True, "type": "category"},
                      margin={"l": 10, "r": 10, "t": 40, "b": 40}, showlegend=False)
    return fig
