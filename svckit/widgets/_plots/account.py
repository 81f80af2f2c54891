"""The account dashboard's figure: the account's limits beside another plan's."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from svckit.widgets._plots._base import TEMPLATE

CURRENT_COLOR, OTHER_COLOR = "#2563eb", "#f59e0b"


def limits_figure(cmp: pd.DataFrame, *, current: str, other: str) -> go.Figure:
    """Grouped horizontal bars from :func:`svckit.frames.comparison_frame`: each limit as a share of the
    larger of the two plans' values (limits differ by orders of magnitude), labelled with the real
    value and its unit."""
    labels = [f"{lab} ({unit})" if unit else lab for lab, unit in zip(cmp["label"], cmp["unit"])]
    fig = go.Figure([
        go.Bar(name=f"current ({current})", orientation="h", marker_color=CURRENT_COLOR, y=labels,
               x=cmp["current_pct"].to_numpy(dtype=float), text=list(cmp["display"]), textposition="outside",
               cliponaxis=False, hovertemplate="%{y}: %{text}<extra>current</extra>"),
        go.Bar(name=f"{other} preset", orientation="h", marker_color=OTHER_COLOR, y=labels,
               x=cmp["compare_pct"].to_numpy(dtype=float), text=list(cmp["compare_display"]),
               textposition="outside", cliponaxis=False, hovertemplate=f"%{{y}}: %{{text}}<extra>{other}</extra>"),
    ])
    fig.update_layout(
        title=f"Limits: current ({current}) vs the {other} preset", barmode="group", height=560,
        margin={"l": 10, "r": 150, "t": 60, "b": 40}, template=TEMPLATE, font={"size": 11},
        xaxis={"title": "share of the larger value (%)", "range": [0, 100], "ticksuffix": "%"},
        yaxis={"autorange": "reversed"}, legend={"orientation": "h", "y": 1.06, "x": 0})
    return fig
