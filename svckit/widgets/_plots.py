"""Figure builders for the vector playground and the workflow timeline.

Pure functions from DataFrames (and numpy arrays) to ``plotly.graph_objects.Figure``: no widgets, no
clients, no I/O. That keeps them unit-testable and lets ``bench/widgets_bench.py`` time them against
plain plotly express over the same frames.

Why not plotly express here: express re-groups the frame per colour and validates every column, which
is fine for a few hundred rows but is the dominant cost at 10,000 runs or 100,000 points. These
builders hand plotly numpy arrays directly (plotly ships them as typed arrays), draw one WebGL trace
per colour, and encode bar gaps as NaN in a single line trace instead of one shape per bar.

Frame shapes the builders read (extra columns are ignored):

* hits: ``rank`` (1-based), ``id``, ``score``; optional ``data`` and ``metadata.*`` columns.
* runs (:func:`svckit.frames.runs_frame`): ``workflow_run_id``, ``state``, ``created_at`` and
  ``completed_at`` (tz-aware datetimes; ``completed_at`` NaT while a run is running).
* steps (:func:`svckit.frames.steps_frame` plus the timeline's columns): ``group``, ``group_type``,
  ``position`` (index inside the group), ``step_name``, ``state``, ``start``, ``end`` (datetimes),
  ``running`` (bool), ``retries`` (int), ``out`` (str or None).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from svckit.queue.models import RunState, StepState

#: run state -> colour; the same palette in the Gantt, the steps view and the state legend.
STATE_COLORS: dict[RunState, str] = {
    RunState.RUN_STARTED: "#1f77b4",
    RunState.RUN_SUCCESS: "#2ca02c",
    RunState.RUN_FAILED: "#d62728",
    RunState.RUN_CANCELED: "#7f7f7f",
}
#: step states are not enumerated by the spec; anything unknown falls back to grey.
STEP_COLORS: dict[str, str] = {
    StepState.STEP_SUCCESS: "#2ca02c",
    StepState.STEP_FAILED: "#d62728",
    StepState.STEP_RETRY: "#ff7f0e",
    StepState.STEP_PROGRESS: "#1f77b4",
    "STEP_STARTED": "#1f77b4",  # seen from the hosted service, not one of the sandbox's states
    StepState.STEP_CANCELED: "#7f7f7f",
}
MODE_COLORS: dict[str, str] = {"DENSE": "#1f77b4", "SPARSE": "#ff7f0e", "HYBRID": "#2ca02c"}
#: above this many runs the Gantt switches from bar traces to one WebGL line trace per state.
WEBGL_THRESHOLD = 500
_OTHER_COLOR = "#9467bd"


def _empty(title: str, message: str) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, template="plotly_white", height=260,
                      xaxis={"visible": False}, yaxis={"visible": False},
                      annotations=[{"text": message, "showarrow": False, "font": {"size": 14},
                                    "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}])
    return fig


def _ms(values: pd.Series) -> np.ndarray:
    """Datetimes as float Unix milliseconds (NaN for NaT): plotly date axes take ms numbers, and a
    float array is shipped to the browser as a typed array instead of 10,000 ISO strings."""
    s = pd.to_datetime(pd.Series(values), utc=True)
    raw = s.dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")
    out = raw.view("int64").astype("float64") / 1e6
    out[np.isnat(raw)] = np.nan
    return out


# -- vector playground ------------------------------------------------------------------------------

def score_figure(hits: pd.DataFrame, *, title: str = "Scores", color: str = "#1f77b4") -> go.Figure:
    """Horizontal bars of the hits' scores, best on top, labelled by id."""
    if hits.empty:
        return _empty(title, "no results")
    labels = [f"{r}. {i}" for r, i in zip(hits["rank"], hits["id"])]
    hover = hits["data"].fillna("").astype(str).str.slice(0, 120) if "data" in hits else [""] * len(hits)
    fig = go.Figure(go.Bar(
        x=hits["score"].to_numpy(dtype=float), y=labels, orientation="h", marker_color=color,
        customdata=np.asarray(hover, dtype=object),
        hovertemplate="%{y}<br>score %{x:.4f}<br>%{customdata}<extra></extra>",
    ))
    fig.update_layout(title=title, template="plotly_white", height=120 + 22 * len(hits),
                      margin={"l": 10, "r": 10, "t": 40, "b": 30},
                      yaxis={"autorange": "reversed", "automargin": True}, xaxis={"title": "score"})
    return fig


def rank_shift_figure(by_mode: Mapping[str, pd.DataFrame], *, title: str = "Rank shift") -> go.Figure:
    """A slope chart: one column per query mode, one line per id joining its ranks across modes.

    An id missing from a mode's top-K has no point in that column, so its line breaks there."""
    modes = [m for m in by_mode if by_mode[m] is not None]
    ids: list[str] = []
    for m in modes:
        ids.extend(i for i in by_mode[m]["id"] if i not in ids)
    if not ids:
        return _empty(title, "no results")
    ranks = {m: dict(zip(by_mode[m]["id"], by_mode[m]["rank"])) for m in modes}
    fig = go.Figure()
    for i in ids:
        ys = [ranks[m].get(i) for m in modes]
        fig.add_trace(go.Scatter(
            x=modes, y=ys, mode="lines+markers+text", name=str(i), connectgaps=False,
            text=[str(i) if (y is not None and k == len(modes) - 1) else "" for k, y in enumerate(ys)],
            textposition="middle right",
            hovertemplate=f"{i}<br>%{{x}}: rank %{{y}}<extra></extra>",
        ))
    top = max(len(by_mode[m]) for m in modes)
    fig.update_layout(title=title, template="plotly_white", height=140 + 26 * top, showlegend=False,
                      yaxis={"autorange": "reversed", "title": "rank", "dtick": 1},
                      xaxis={"type": "category"}, margin={"l": 40, "r": 190, "t": 40, "b": 30})
    return fig


#: colours of the evaluation's configurations (the modes' colours; DBSF apart from RRF)
CONFIG_COLORS: dict[str, str] = {"dense": MODE_COLORS["DENSE"], "sparse": MODE_COLORS["SPARSE"],
                                 "hybrid RRF": MODE_COLORS["HYBRID"], "hybrid DBSF": "#9467bd"}


def explain_figure(row: Mapping[str, object], terms: pd.DataFrame, *, title: str = "Contributions",
                   fusion: str | None = None) -> go.Figure:
    """One explained hit: what each side adds to the fused score (left) and what each matched BM25
    term adds to the sparse score (right). ``row`` is a row of :func:`svckit.frames.explain_frame`,
    ``terms`` that hit's rows of :func:`svckit.frames.explain_terms_frame`."""
    from plotly.subplots import make_subplots

    def num(value: object) -> float | None:
        return None if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]

    parts = [("dense", num(row.get("dense_part")), MODE_COLORS["DENSE"]),
             ("sparse", num(row.get("sparse_part")), MODE_COLORS["SPARSE"])]
    fused = any(v is not None for _, v, _ in parts)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.42, 0.58], horizontal_spacing=0.16,
                        subplot_titles=(f"{fusion or 'fusion'}: dense + sparse = {num(row.get('recomputed')) or 0:.4g}"
                                        if fused else "score", "BM25 terms: what each adds"))
    if fused:
        for name, value, color in parts:
            fig.add_trace(go.Bar(x=[value or 0.0], y=[name], orientation="h", marker_color=color, name=name,
                                 text=[f"{value or 0.0:.4g}"], textposition="auto",
                                 hovertemplate=f"{name} part %{{x:.5f}}<extra></extra>"), row=1, col=1)
    else:
        score = num(row.get("dense_score")) if num(row.get("dense_score")) is not None else num(row.get("score"))
        fig.add_trace(go.Bar(x=[score or 0.0], y=["score"], orientation="h", marker_color=MODE_COLORS["DENSE"],
                             text=[f"{score or 0.0:.4g}"], textposition="auto"), row=1, col=1)
    if len(terms):
        fig.add_trace(go.Bar(x=terms["contribution"].to_numpy(dtype=float), y=terms["term"].astype(str).tolist(),
                             orientation="h", marker_color=MODE_COLORS["SPARSE"],
                             text=[f"{q:.3g}×{d:.3g}" for q, d in zip(terms["query_weight"].to_numpy(dtype=float),
                                                                      terms["doc_weight"].to_numpy(dtype=float))],
                             textposition="auto", hovertemplate="%{y}: %{x:.4f}<extra></extra>"), row=1, col=2)
    else:
        fig.add_annotation(text="no query term in this document", showarrow=False, xref="x2 domain",
                           yref="y2 domain", x=0.5, y=0.5)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(title=title, template="plotly_white", showlegend=False,
                      height=220 + 26 * max(len(terms), 2), margin={"l": 10, "r": 10, "t": 90, "b": 30})
    fig.update_annotations(font_size=13)
    return fig


def evaluation_figure(summary: pd.DataFrame, *, title: str = "Retrieval evaluation") -> go.Figure:
    """Grouped bars: one group per metric (recall@k, MRR, nDCG@k), one bar per configuration.
    ``summary`` is :func:`svckit.vector.evaluation.summarize`'s frame."""
    if summary.empty:
        return _empty(title, "no evaluation yet")
    metrics = [c for c in summary.columns if c not in ("configuration", "queries")]
    fig = go.Figure()
    for _, row in summary.iterrows():
        name = str(row["configuration"])
        values = [float(row[m]) for m in metrics]
        fig.add_trace(go.Bar(x=metrics, y=values, name=name, marker_color=CONFIG_COLORS.get(name, _OTHER_COLOR),
                             text=[f"{v:.3f}" for v in values], textposition="outside",
                             hovertemplate=f"{name}<br>%{{x}} %{{y:.4f}}<extra></extra>"))
    fig.update_layout(title=title, template="plotly_white", barmode="group", height=380,
                      yaxis={"range": [0, 1.1], "title": "mean over the labelled queries"},
                      legend={"orientation": "h", "y": -0.15}, margin={"l": 50, "r": 10, "t": 50, "b": 40})
    return fig


def projection_figure(
    coords: np.ndarray,
    *,
    ids: Sequence[str] | None = None,
    color: np.ndarray | pd.Series | None = None,
    color_label: str = "",
    hits: pd.DataFrame | None = None,
    hit_coords: np.ndarray | None = None,
    query_coords: np.ndarray | None = None,
    title: str = "Projection (PCA)",
) -> go.Figure:
    """Scatter of the index's 2-D projection (one WebGL trace) with the hits and the query on top.

    ``color`` is numeric (a colour scale) or categorical (one trace per category, so the legend
    names the values). Hits are ringed and numbered by rank; the query is a star."""
    # float32 is plenty for screen positions and halves what is shipped to the browser
    coords = np.asarray(coords, dtype=np.float32)
    fig = go.Figure()
    if len(coords) == 0:
        return _empty(title, "empty index")
    # contiguous columns: plotly ships those as base64 typed arrays; a strided view becomes a JSON list
    xs, ys = np.ascontiguousarray(coords[:, 0]), np.ascontiguousarray(coords[:, 1])
    hover_ids = np.asarray(ids if ids is not None else np.arange(len(coords)).astype(str), dtype=object)
    base = {"mode": "markers", "hovertemplate": "%{customdata}<extra></extra>"}
    if color is None:
        fig.add_trace(go.Scattergl(x=xs, y=ys, customdata=hover_ids, name="index",
                                   marker={"size": 4, "color": "#9db4d0", "opacity": 0.6}, **base))
    else:
        values = pd.Series(np.asarray(color)) if not isinstance(color, pd.Series) else color.reset_index(drop=True)
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            fig.add_trace(go.Scattergl(
                x=xs, y=ys, customdata=hover_ids, name=color_label or "index",
                marker={"size": 5, "color": values.to_numpy(dtype=np.float32), "colorscale": "Viridis",
                        "showscale": True, "colorbar": {"title": color_label, "len": 0.6}, "opacity": 0.7},
                **base))
        else:
            codes, cats = pd.factorize(values.astype("string").fillna("(none)"))
            for k, cat in enumerate(cats):
                sel = codes == k
                fig.add_trace(go.Scattergl(x=xs[sel], y=ys[sel], customdata=hover_ids[sel],
                                           name=str(cat), marker={"size": 5, "opacity": 0.7}, **base))
    if hits is not None and hit_coords is not None and len(hits):
        hc = np.asarray(hit_coords, dtype=float)
        fig.add_trace(go.Scatter(
            x=hc[:, 0], y=hc[:, 1], mode="markers+text", name="hits",
            text=[str(r) for r in hits["rank"]], textposition="top center",
            customdata=np.stack([hits["id"].astype(str), hits["score"].map("{:.4f}".format)], axis=-1),
            hovertemplate="hit %{text}: %{customdata[0]}<br>score %{customdata[1]}<extra></extra>",
            marker={"size": 13, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "#d62728"}},
        ))
    if query_coords is not None:
        q = np.asarray(query_coords, dtype=float).reshape(-1, 2)
        fig.add_trace(go.Scatter(x=q[:, 0], y=q[:, 1], mode="markers", name="query",
                                 marker={"symbol": "star", "size": 18, "color": "#ff7f0e",
                                         "line": {"width": 1, "color": "black"}},
                                 hovertemplate="query<extra></extra>"))
    fig.update_layout(title=title, template="plotly_white", height=480, legend={"itemsizing": "constant"},
                      xaxis={"title": "PC 1", "zeroline": False}, yaxis={"title": "PC 2", "zeroline": False},
                      margin={"l": 40, "r": 10, "t": 40, "b": 40})
    return fig


# -- workflow timeline ------------------------------------------------------------------------------

def _now_ms(now: datetime | None) -> float:
    now = now or datetime.now(timezone.utc)
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
        return _empty(title, "no runs match the filters")
    n = len(runs)
    start = _ms(runs["created_at"])
    end = _ms(runs["completed_at"])
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
        color = STATE_COLORS.get(state, _OTHER_COLOR)
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
        title=f"{title} ({n:,})", template="plotly_white", barmode="overlay", shapes=shapes,
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
        return _empty(title, "select a run")
    labels = [
        f"g{g}{'∥' if t == 'parallel' else '·'}{lane} {name}"
        for g, t, lane, name in zip(steps["group"], steps["group_type"], steps["position"], steps["step_name"])
    ]
    start = _ms(steps["start"])
    end = np.maximum(_ms(steps["end"]), start + 1.0)
    outs = steps["out"].astype("string").fillna("").str.slice(0, 200).to_numpy(dtype=object)
    retries = steps["retries"].fillna(0).astype(int).to_numpy()
    state = steps["state"].astype("string").fillna("").to_numpy(dtype=object)
    running = steps["running"].fillna(False).astype(bool).to_numpy()
    hover = [
        f"<b>{lbl}</b><br>{st}{' (running)' if run else ''}<br>{(e - s) / 1000:.2f} s"
        f"<br>retries: {r}" + (f"<br>out: {o}" if o else "")
        for lbl, st, run, s, e, r, o in zip(labels, state, running, start, end, retries, outs)
    ]
    colors = [STEP_COLORS.get(s, _OTHER_COLOR) for s in state]
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
    fig.update_layout(title=title, template="plotly_white", height=160 + 28 * len(steps), shapes=shapes,
                      xaxis={"type": "date", "title": "time (UTC)"},
                      yaxis={"autorange": "reversed", "automargin": True, "type": "category"},
                      margin={"l": 10, "r": 10, "t": 40, "b": 40}, showlegend=False)
    return fig


def show_in(target: go.FigureWidget, fig: go.Figure) -> None:
    """Replace what a FigureWidget shows with ``fig``.

    Assigning ``layout`` reaches the browser as a diff against the widget's Python-side layout, so a
    key the new layout leaves unset (the "empty" placeholder's annotation, the highlight shape,
    hidden axes) would survive in the page. Those keys are reset first, as a change of their own."""
    reset: dict = {}
    if target.layout.annotations:
        reset["annotations"] = []
    if target.layout.shapes:
        reset["shapes"] = []
    for axis in ("xaxis", "yaxis"):
        if target.layout[axis].visible is False:
            reset[f"{axis}.visible"] = True
    if reset:
        target.plotly_relayout(reset)
    with target.batch_update():
        target.data = []
        target.add_traces(list(fig.data))
        target.layout = fig.layout


# -- keyspace analysis and the live profiler --------------------------------------------------------

def memory_treemap_figure(by_prefix: pd.DataFrame, *, per_parent: int = 25, title: str = "Memory by prefix"
                          ) -> go.Figure:
    """Treemap of memory by key prefix from :attr:`svckit.kv.KeyspaceReport.by_prefix` (``level``,
    ``prefix``, ``parent``, ``keys``, ``memory``, ``memory ±``). Sized by memory, or by key count
    when the backend reports no memory.

    At most ``per_parent`` children per prefix are drawn (the rest become one "… N more" tile), so
    a keyspace with 100,000 second-level prefixes stays a readable picture. A parent is drawn at
    least as large as its children: sampled estimates of children can add up to slightly more."""
    if by_prefix.empty:
        return _empty(title, "no keys")
    size_col = "memory" if by_prefix["memory"].notna().any() else "keys"
    frame = by_prefix.assign(size=by_prefix[size_col].fillna(0).astype(float))
    kept = []
    for parent, group in frame.groupby("parent", sort=False):
        group = group.sort_values("size", ascending=False)
        kept.append(group.head(per_parent))
        rest = group.iloc[per_parent:]
        if len(rest):
            kept.append(pd.DataFrame([{"level": group["level"].iloc[0], "prefix": f"{parent}…more",
                                       "parent": parent, "keys": rest["keys"].sum(), "memory": rest["memory"].sum(),
                                       "memory ±": np.nan, "size": rest["size"].sum(),
                                       "label": f"… {len(rest):,} more"}]))
    frame = pd.concat(kept, ignore_index=True)
    if "label" not in frame:
        frame["label"] = None
    own = [str(p)[len(str(q)) + 1:] if q else str(p) for p, q in zip(frame["prefix"], frame["parent"])]
    frame["label"] = frame["label"].fillna(pd.Series(own, index=frame.index))
    ids = set(frame["prefix"])
    frame = frame[(frame["parent"] == "") | frame["parent"].isin(ids)].copy()
    # a parent's tile holds its children, deepest level first. Exact figures: the parent is at least
    # their sum (the rest are keys directly under it). Estimates: the children's sum, since a noisy
    # parent estimate above it would show as an empty band and one below it cannot be drawn.
    estimated = bool(frame["memory ±"].fillna(0).gt(0).any()) if size_col == "memory" else False
    sizes = dict(zip(frame["prefix"], frame["size"]))
    for level in sorted(frame["level"].unique(), reverse=True):
        rows = frame[(frame["level"] == level) & (frame["parent"] != "")]
        for parent, total in rows.groupby("parent")["prefix"].apply(lambda p: sum(sizes[x] for x in p)).items():
            sizes[parent] = float(total) if estimated else max(sizes.get(parent, 0.0), float(total))
    frame["size"] = frame["prefix"].map(sizes)
    root_total = float(frame.loc[frame["parent"] == "", "size"].sum()) or 1.0

    def hover(row: pd.Series) -> str:
        mem = row["memory"]
        pm = row.get("memory ±")
        text = f"<b>{row['prefix']}</b><br>{int(row['keys']):,} keys"
        if pd.notna(mem):
            text += f"<br>{_fmt_bytes(mem)}" + (f" ± {_fmt_bytes(pm)}" if pd.notna(pm) and pm > 0 else "")
        return text + f"<br>{row['size'] / root_total:.1%} of all"

    fig = go.Figure(go.Treemap(
        ids=frame["prefix"].astype(str), labels=frame["label"].astype(str), parents=frame["parent"].astype(str),
        values=frame["size"].to_numpy(dtype=float), branchvalues="total",
        hovertext=[hover(r) for _, r in frame.iterrows()], hovertemplate="%{hovertext}<extra></extra>",
        texttemplate="%{label}<br>%{percentRoot:.1%}", marker={"colorscale": "Blues"},
    ))
    if size_col != "memory":
        title = "Keys by prefix (this backend has no MEMORY USAGE)"
    fig.update_layout(title=title, template="plotly_white", height=420,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"


def ttl_histogram_figure(ttl: pd.DataFrame, *, title: str = "TTL distribution") -> go.Figure:
    """Bars of key counts per TTL bucket (:attr:`svckit.kv.KeyspaceReport.ttl`), with the 95%
    interval of a sampled pass as error bars."""
    if ttl.empty or float(ttl["keys"].sum()) == 0:
        return _empty(title, "no keys")
    labels = ttl["ttl"].astype(str).tolist()
    keys = ttl["keys"].to_numpy(dtype=float)
    pm = ttl["keys ±"].fillna(0).to_numpy(dtype=float)
    colors = ["#9ca3af" if label == "no expiry" else "#2563eb" for label in labels]
    fig = go.Figure(go.Bar(
        x=labels, y=keys, marker_color=colors,
        error_y={"type": "data", "array": pm, "visible": bool(pm.any()), "color": "#111827"},
        text=[f"{k:,.0f}" for k in keys], textposition="outside",
        customdata=pm, hovertemplate="%{x}: %{y:,.0f} keys ± %{customdata:,.0f}<extra></extra>",
    ))
    fig.update_layout(title=title, template="plotly_white", height=320, yaxis={"title": "keys"},
                      xaxis={"title": "time to live", "type": "category"},
                      margin={"l": 50, "r": 10, "t": 40, "b": 40})
    return fig


def profile_figure(rate: pd.DataFrame, commands: pd.DataFrame, keys: pd.DataFrame, prefixes: pd.DataFrame,
                   *, top: int = 10, title: str = "Live profile") -> go.Figure:
    """One figure of four panels from a :class:`svckit.kv.ProfileSnapshot`'s frames: commands per
    second (line), command mix, hottest keys and hottest prefixes (horizontal bars)."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=2, horizontal_spacing=0.2, vertical_spacing=0.2,
                        subplot_titles=("commands / second", "command mix", "hottest keys", "hottest prefixes"))
    fig.add_trace(go.Scatter(x=_ms(rate["time"]) if len(rate) else [], y=rate["commands"].to_numpy(dtype=float),
                             mode="lines+markers", line={"color": "#2563eb"}, name="commands/s",
                             hovertemplate="%{y:,.0f} commands<extra></extra>"), row=1, col=1)
    for (frame, name, color), (row, col) in zip(
            [(commands, "command", "#7c3aed"), (keys, "key", "#d97706"), (prefixes, "prefix", "#059669")],
            [(1, 2), (2, 1), (2, 2)]):
        head = frame.head(top)
        labels = [str(v)[:40] for v in head[name]]
        fig.add_trace(go.Bar(x=head["count"].to_numpy(dtype=float), y=labels, orientation="h", marker_color=color,
                             name=name, customdata=head["error"].to_numpy(dtype=float),
                             hovertemplate="%{y}: %{x:,.0f} (error ≤ %{customdata:,.0f})<extra></extra>"),
                      row=row, col=col)
        fig.update_yaxes(autorange="reversed", automargin=True, row=row, col=col)
    # whole seconds, at most about five ticks: the rate has one point per second
    fig.update_xaxes(type="date", tickformat="%H:%M:%S", dtick=1000 * max(1, -(-len(rate) // 5)), tickangle=0,
                     row=1, col=1)
    fig.update_layout(title=title, template="plotly_white", height=580, showlegend=False,
                      margin={"l": 10, "r": 10, "t": 60, "b": 30})
    return fig
