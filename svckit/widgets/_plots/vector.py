"""Figures of the vector playground: scores, rank shifts, the projection map, explained hits and the
retrieval evaluation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from svckit.widgets._plots._base import CONFIG_COLORS, MODE_COLORS, OTHER_COLOR, TEMPLATE, empty_figure


def score_figure(hits: pd.DataFrame, *, title: str = "Scores", color: str = "#1f77b4") -> go.Figure:
    """Horizontal bars of the hits' scores, best on top, labelled by id."""
    if hits.empty:
        return empty_figure(title, "no results")
    labels = [f"{r}. {i}" for r, i in zip(hits["rank"], hits["id"])]
    hover = hits["data"].fillna("").astype(str).str.slice(0, 120) if "data" in hits else [""] * len(hits)
    fig = go.Figure(go.Bar(
        x=hits["score"].to_numpy(dtype=float), y=labels, orientation="h", marker_color=color,
        customdata=np.asarray(hover, dtype=object),
        hovertemplate="%{y}<br>score %{x:.4f}<br>%{customdata}<extra></extra>",
    ))
    fig.update_layout(title=title, template=TEMPLATE, height=120 + 22 * len(hits),
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
        return empty_figure(title, "no results")
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
    fig.update_layout(title=title, template=TEMPLATE, height=140 + 26 * top, showlegend=False,
                      yaxis={"autorange": "reversed", "title": "rank", "dtick": 1},
                      xaxis={"type": "category"}, margin={"l": 40, "r": 190, "t": 40, "b": 30})
    return fig


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
    fig.update_layout(title=title, template=TEMPLATE, showlegend=False,
                      height=220 + 26 * max(len(terms), 2), margin={"l": 10, "r": 10, "t": 90, "b": 30})
    fig.update_annotations(font_size=13)
    return fig


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
                             text=[f"{v:.3f}" for v in values], textposition="outside",
                             hovertemplate=f"{name}<br>%{{x}} %{{y:.4f}}<extra></extra>"))
    fig.update_layout(title=title, template=TEMPLATE, barmode="group", height=380,
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
    fig.update_layout(title=title, template=TEMPLATE, height=480, legend={"itemsizing": "constant"},
                      xaxis={"title": "PC 1", "zeroline": False}, yaxis={"title": "PC 2", "zeroline": False},
                      margin={"l": 40, "r": 10, "t": 40, "b": 40})
    return fig
