"""Figures of the vector playground: scores, rank shifts, the projection map, explained hits and the
retrieval evaluation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from svckit._units import DECIMALS, decimal_text
from svckit.widgets._plots._base import CONFIG_COLORS, MODE_COLORS, OTHER_COLOR, TEMPLATE, empty_figure

#: pixels at the top of a figure where plotly's toolbar (the modebar) appears on hover: titles start below
MODEBAR_PX = 34
#: one precision for the playground's numbers, in charts as in its tables and as frames display them
#: (:data:`svckit._units.DECIMALS`): d3's format for plotly, :func:`score_text` for text
SCORE = f".{DECIMALS}~f"
#: a categorical colouring shows this many values by name (most frequent first); the rest are "other"
TOP_CATEGORIES = 9
#: distinct colours for those values (plotly's own qualitative palette without its grey); "other" is grey
CATEGORY_COLORS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#aec7e8",
                   "#98df8a")
OTHER_CATEGORY = "#c7c7c7"
LABEL_PX = 7.5  # width of a character of an 12 px label, for the margin a label needs


def score_text(value: object) -> str:
    """A score (or any float of the playground) as the charts' ``SCORE`` writes it
    (:func:`svckit._units.decimal_text`: 2/61 is ``0.032787``); missing is ``—``."""
    if value is None or pd.isna(value):  # type: ignore[arg-type]
        return "—"
    return decimal_text(float(value))  # type: ignore[arg-type]


def titled(fig: go.Figure, title: str, detail: str = "", *, top: int = 0) -> go.Figure:
    """The title at the top left below the modebar's row (``pad``, so any height keeps it there), the
    ``detail`` as its subtitle in smaller type (one line per ``\\n``), and a top margin that holds
    them (``top`` more for what sits between them and the plot): the toolbar shown on hover never
    covers the title."""
    lines = [line for line in detail.split("\n") if line]
    fig.update_layout(title={"text": title, "subtitle": {"text": "<br>".join(lines),
                                                         "font": {"size": 12, "color": "#4b5563"}},
                             "x": 0, "xref": "container", "xanchor": "left", "y": 1, "yref": "container",
                             "yanchor": "top", "pad": {"t": MODEBAR_PX, "l": 10}, "font": {"size": 15}},
                      margin={"t": MODEBAR_PX + 28 + 18 * len(lines) + top})
    return fig


def score_figure(hits: pd.DataFrame, *, title: str = "Scores", color: str = "#1f77b4") -> go.Figure:
    """Horizontal bars of the hits' scores, best on top, labelled by id."""
    if hits.empty:
        return empty_figure(title, "no results")
    labels = [f"{r}. {i}" for r, i in zip(hits["rank"], hits["id"])]
    hover = hits["data"].fillna("").astype(str).str.slice(0, 120) if "data" in hits else [""] * len(hits)
    fig = go.Figure(go.Bar(
        x=hits["score"].to_numpy(dtype=float), y=labels, orientation="h", marker_color=color,
        customdata=np.asarray(hover, dtype=object),
        hovertemplate=f"%{{y}}<br>score %{{x:{SCORE}}}<br>%{{customdata}}<extra></extra>",
    ))
    fig.update_layout(template=TEMPLATE, height=150 + 22 * len(hits), margin={"l": 10, "r": 10, "b": 30},
                      yaxis={"autorange": "reversed", "automargin": True},
                      xaxis={"title": "score", "hoverformat": SCORE})
    return titled(fig, title)


def rank_shift_figure(by_mode: Mapping[str, pd.DataFrame], *, title: str = "Rank shift") -> go.Figure:
    """A slope chart: one column per query mode, one line per id joining its ranks across modes.

    An id missing from a mode's top-K has no point in that column, so its line breaks there."""
    modes = [m for m in by_mode if by_mode[m] is not None]
    ids: list[str] = []
    for m in modes:
        ids.extend(i for i in by_mode[m]["id"] if i not in ids)
    if not ids:
        return empty_figure(title, "no results")
    ranks = {m: dict(zip(by_mode[m]["id"], by_mode[m]["rank"])) for m in modes}
    fig = go.Figure()
    for i in ids:
        ys = [ranks[m].get(i) for m in modes]
        last = max(k for k, y in enumerate(ys) if y is not None)  # the id is named where its line ends
        fig.add_trace(go.Scatter(
            x=modes, y=ys, mode="lines+markers+text", name=str(i), connectgaps=False, cliponaxis=False,
            text=[str(i) if k == last else "" for k in range(len(modes))], textposition="middle right",
            hovertemplate=f"{i}<br>%{{x}}: rank %{{y}}<extra></extra>",
        ))
    top = max(len(by_mode[m]) for m in modes)
    # the names are drawn right of the last column, outside the plot: the right margin holds the longest
    right = int(min(max(LABEL_PX * max(len(str(i)) for i in ids) + 24, 60), 480))
    fig.update_layout(template=TEMPLATE, height=150 + 26 * top, showlegend=False,
                      yaxis={"autorange": "reversed", "title": "rank", "dtick": 1},
                      xaxis={"type": "category"}, margin={"l": 40, "r": right, "b": 30})
    return titled(fig, title)


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
                        subplot_titles=(f"{fusion or 'fusion'}: dense + sparse = {score_text(num(row.get('recomputed')) or 0)}"
                                        if fused else "score", "BM25 terms: what each adds"))
    if fused:
        for name, value, color in parts:
            fig.add_trace(go.Bar(x=[value or 0.0], y=[name], orientation="h", marker_color=color, name=name,
                                 text=[score_text(value or 0.0)], textposition="auto",
                                 hovertemplate=f"{name} part %{{x:{SCORE}}}<extra></extra>"), row=1, col=1)
    else:
        score = num(row.get("dense_score")) if num(row.get("dense_score")) is not None else num(row.get("score"))
        fig.add_trace(go.Bar(x=[score or 0.0], y=["score"], orientation="h", marker_color=MODE_COLORS["DENSE"],
                             text=[score_text(score or 0.0)], textposition="auto"), row=1, col=1)
    if len(terms):
        words = terms["word"] if "word" in terms else terms["term"]  # the query's words, as typed
        fig.add_trace(go.Bar(x=terms["contribution"].to_numpy(dtype=float), y=words.astype(str).tolist(),
                             customdata=terms["term"].astype(str).to_numpy(dtype=object),
                             orientation="h", marker_color=MODE_COLORS["SPARSE"],
                             text=[f"{score_text(q)}×{score_text(d)}" for q, d in zip(terms["query_weight"].to_numpy(dtype=float),
                                                                      terms["doc_weight"].to_numpy(dtype=float))],
                             textposition="auto",
                             hovertemplate=f"%{{y}} (stem %{{customdata}}): %{{x:{SCORE}}}<extra></extra>"),
                      row=1, col=2)
    else:
        fig.add_annotation(text="no query term in this document", showarrow=False, xref="x2 domain",
                           yref="y2 domain", x=0.5, y=0.5)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(template=TEMPLATE, showlegend=False, height=240 + 26 * max(len(terms), 2),
                      margin={"l": 10, "r": 10, "b": 30})
    fig.update_annotations(font_size=13)
    return titled(fig, title, top=30)  # the subplots' titles sit above the plots


def evaluation_figure(summary: pd.DataFrame, *, title: str = "Retrieval evaluation") -> go.Figure:
    """Grouped bars: one group per metric (recall@k, MRR, nDCG@k), one bar per configuration.
    ``summary`` is :func:`svckit.vector.evaluation.summarize`'s frame."""
    if summary.empty:
        return empty_figure(title, "no evaluation yet")
    metrics = [c for c in summary.columns if c not in ("configuration", "queries")]
    fig = go.Figure()
    for _, row in summary.iterrows():
        name = str(row["configuration"])
        values = [float(row[m]) for m in metrics]
        fig.add_trace(go.Bar(x=metrics, y=values, name=name, marker_color=CONFIG_COLORS.get(name, OTHER_COLOR),
                             text=[score_text(v) for v in values], textposition="outside",
                             hovertemplate=f"{name}<br>%{{x}} %{{y:{SCORE}}}<extra></extra>"))
    fig.update_layout(template=TEMPLATE, barmode="group", height=400,
                      yaxis={"range": [0, 1.1], "title": "mean over the labelled queries"},
                      legend={"orientation": "h", "y": -0.15}, margin={"l": 50, "r": 10, "b": 40})
    return titled(fig, title)


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
    detail: str = "",
    explained: Sequence[float] | None = None,
) -> go.Figure:
    """Scatter of the index's 2-D projection (one WebGL trace) with the hits and the query on top.

    ``color`` is numeric (a colour scale) or categorical (one trace per category, so the legend
    names the values: the :data:`TOP_CATEGORIES` most frequent by name in distinct colours, the rest
    as one grey "other"). Hits are ringed and numbered by rank; the query is a star. ``explained``:
    the share of the variance each axis explains (the PCA's ``explained_variance_ratio_``), said on
    the axes and, summed, under the title (``detail`` before it)."""
    # float32 is plenty for screen positions and halves what is shipped to the browser
    coords = np.asarray(coords, dtype=np.float32)
    fig = go.Figure()
    if len(coords) == 0:
        return empty_figure(title, "empty index")
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
            labels = values.astype("string").fillna("(none)").to_numpy(dtype=object)
            counts = pd.Series(labels).value_counts(sort=True)
            named = list(counts.index[:TOP_CATEGORIES]) if len(counts) > TOP_CATEGORIES + 1 else list(counts.index)
            groups = [(str(cat), labels == cat, CATEGORY_COLORS[k % len(CATEGORY_COLORS)], hover_ids)
                      for k, cat in enumerate(named)]
            if len(named) < len(counts):  # the hover of an "other" point names its value
                rest = ~np.isin(labels, named)
                said = np.asarray([f"{i}<br>{color_label or 'value'}: {v}" for i, v in zip(hover_ids, labels)],
                                  dtype=object)
                groups.append((f"other: {len(counts) - len(named)} values", rest, OTHER_CATEGORY, said))
            for name, sel, colour, hover in groups:
                fig.add_trace(go.Scattergl(x=xs[sel], y=ys[sel], customdata=hover[sel],
                                           name=name,
                                           marker={"size": 5, "opacity": 0.7, "color": colour}, **base))
    if hits is not None and hit_coords is not None and len(hits):
        hc = np.asarray(hit_coords, dtype=float)
        fig.add_trace(go.Scatter(
            x=hc[:, 0], y=hc[:, 1], mode="markers+text", name="hits",
            text=[str(r) for r in hits["rank"]], textposition="top center",
            customdata=np.stack([hits["id"].astype(str), hits["score"].map(score_text)], axis=-1),
            hovertemplate="hit %{text}: %{customdata[0]}<br>score %{customdata[1]}<extra></extra>",
            marker={"size": 13, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "#d62728"}},
        ))
    if query_coords is not None:
        q = np.asarray(query_coords, dtype=float).reshape(-1, 2)
        fig.add_trace(go.Scatter(x=q[:, 0], y=q[:, 1], mode="markers", name="query",
                                 marker={"symbol": "star", "size": 18, "color": "#ff7f0e",
                                         "line": {"width": 1, "color": "black"}},
                                 hovertemplate="query<extra></extra>"))
    axes = ["PC 1", "PC 2"]
    if explained is not None and len(explained) >= 2:
        axes = [f"PC {k + 1}: {100 * float(share):.1f} % of the variance" for k, share in enumerate(explained[:2])]
        shown = f"the two axes explain {100 * float(sum(explained[:2])):.1f} % of the variance"
        detail = f"{detail}\n{shown}" if detail else shown
    fig.update_layout(template=TEMPLATE, height=500,
                      legend={"itemsizing": "constant", "title": {"text": color_label}} if color_label else
                      {"itemsizing": "constant"},
                      xaxis={"title": axes[0], "zeroline": False}, yaxis={"title": axes[1], "zeroline": False},
                      margin={"l": 50, "r": 10, "b": 40})
    return titled(fig, title, detail)
