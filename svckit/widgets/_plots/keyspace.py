"""Figures of the keyspace report and the live profiler: memory by prefix, TTLs, the profile."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from svckit.frames import format_bytes
from svckit.widgets._plots._base import TEMPLATE, empty_figure, ms


def memory_treemap_figure(by_prefix: pd.DataFrame, *, per_parent: int = 25, title: str = "Memory by prefix"
                          ) -> go.Figure:
    """Treemap of memory by key prefix from :attr:`svckit.kv.KeyspaceReport.by_prefix` (``level``,
    ``prefix``, ``parent``, ``keys``, ``memory``, ``memory ±``). Sized by memory, or by key count
    when the backend reports no memory.

    At most ``per_parent`` children per prefix are drawn (the rest become one "… N more" tile), so
    a keyspace with 100,000 second-level prefixes stays a readable picture. A parent is drawn at
    least as large as its children: sampled estimates of children can add up to slightly more."""
    if by_prefix.empty:
        return empty_figure(title, "no keys")
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
            text += f"<br>{format_bytes(mem)}" + (f" ± {format_bytes(pm)}" if pd.notna(pm) and pm > 0 else "")
        return text + f"<br>{row['size'] / root_total:.1%} of all"

    fig = go.Figure(go.Treemap(
        ids=frame["prefix"].astype(str), labels=frame["label"].astype(str), parents=frame["parent"].astype(str),
        values=frame["size"].to_numpy(dtype=float), branchvalues="total",
        hovertext=[hover(r) for _, r in frame.iterrows()], hovertemplate="%{hovertext}<extra></extra>",
        texttemplate="%{label}<br>%{percentRoot:.1%}", marker={"colorscale": "Blues"},
    ))
    if size_col != "memory":
        title = "Keys by prefix (this backend has no MEMORY USAGE)"
    fig.update_layout(title=title, template=TEMPLATE, height=420,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def ttl_histogram_figure(ttl: pd.DataFrame, *, title: str = "TTL distribution") -> go.Figure:
    """Bars of key counts per TTL bucket (:attr:`svckit.kv.KeyspaceReport.ttl`), with the 95%
    interval of a sampled pass as error bars."""
    if ttl.empty or float(ttl["keys"].sum()) == 0:
        return empty_figure(title, "no keys")
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
    fig.update_layout(title=title, template=TEMPLATE, height=320, yaxis={"title": "keys"},
                      xaxis={"title": "time to live", "type": "category"},
                      margin={"l": 50, "r": 10, "t": 40, "b": 40})
    return fig


def profile_figure(rate: pd.DataFrame, commands: pd.DataFrame, keys: pd.DataFrame, prefixes: pd.DataFrame,
                   *, top: int = 10, title: str = "Live profile", mean: tuple[float, int] | None = None
                   ) -> go.Figure:
    """One figure of four panels from a :class:`svckit.kv.ProfileSnapshot`'s frames: commands per
    second (line), command mix, hottest keys and hottest prefixes (horizontal bars).

    ``mean``: (commands/s, seconds), the snapshot's ``commands_per_second`` and ``rate_seconds``,
    drawn as a dashed line over the last seconds it averages, so the headline's figure is on the
    chart. The figure has no fixed width: plotly sizes it to the output it is drawn in."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=2, horizontal_spacing=0.2, vertical_spacing=0.2,
                        subplot_titles=("commands / second", "command mix", "hottest keys", "hottest prefixes"))
    fig.add_trace(go.Scatter(x=ms(rate["time"]) if len(rate) else [], y=rate["commands"].to_numpy(dtype=float),
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
    # after the bars: the traces keep their places (rate, command mix, keys, prefixes)
    if mean is not None and mean[1] and len(rate):
        value, seconds = mean
        span = ms(rate["time"].iloc[-seconds:])
        fig.add_trace(go.Scatter(x=[span[0], span[-1]] if len(span) > 1 else [span[0]], y=[value] * min(len(span), 2),
                                 mode="lines+markers" if len(span) == 1 else "lines",
                                 line={"color": "#111827", "dash": "dash", "width": 1.5},
                                 name=f"mean over the last {seconds} s",
                                 hovertemplate=f"%{{y:,.1f}} commands/s: mean over the last {seconds} s<extra></extra>"),
                      row=1, col=1)
    # whole seconds, at most about five ticks: the rate has one point per second. With no point yet
    # plotly's default date range is a year, and a one-second dtick over it is 31 million ticks,
    # which held the browser's main thread for minutes: ticks are fixed only over the points' span.
    seconds = {"dtick": 1000 * -(-len(rate) // 5)} if len(rate) else {}
    fig.update_xaxes(type="date", tickformat="%H:%M:%S", tickangle=0, row=1, col=1, **seconds)
    fig.update_layout(title=title, template=TEMPLATE, height=580, showlegend=False, autosize=True,
                      margin={"l": 10, "r": 10, "t": 60, "b": 30})
    return fig
