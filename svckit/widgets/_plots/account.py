"""The account dashboard's figure: the account's limits beside another plan's."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from svckit.widgets._plots._base import TEMPLATE

CURRENT_COLOR, OTHER_COLOR = "#2563eb", "#f59e0b"


def limits_figure(cmp: pd.DataFrame, *, current: str, other: str) -> go.Figure:
    """Grouped horizontal bars from :func:`svckit.frames.comparison_frame`: each limit as a share of the
    larger of the two plans' values (limits differ by orders of magnitude), labelled with the real
    value and its unit. ``current`` and ``other`` are the legend's names for the two plans.

    A row is named by the limit's label alone: the unit is written once, in the value ("7 d"), as in
    the dashboard's tables; the wire unit beside the label ("DLQ retention (ms)" next to "7 d") would
    contradict it."""
    labels = list(cmp["label"])
    fig = go.Figure([
        go.Bar(name=current, orientation="h", marker_color=CURRENT_COLOR, y=labels,
               x=cmp["current_pct"].to_numpy(dtype=float), text=list(cmp["display"]), textposition="outside",
               cliponaxis=False, hovertemplate=f"%{{y}}: %{{text}}<extra>{current}</extra>"),
        go.Bar(name=other, orientation="h", marker_color=OTHER_COLOR, y=labels,
               x=cmp["compare_pct"].to_numpy(dtype=float), text=list(cmp["compare_display"]),
               textposition="outside", cliponaxis=False, hovertemplate=f"%{{y}}: %{{text}}<extra>{other}</extra>"),
    ])
    fig.update_layout(
        title=f"Limits: {current} vs {other}", barmode="group", height=560,
        margin={"l": 10, "r": 150, "t": 60, "b": 40}, template=TEMPLATE, font={"size": 11},
        xaxis={"title": "share of the larger value (%)", "range": [0, 100], "ticksuffix": "%"},
        yaxis={"autorange": "reversed"}, legend={"orientation": "h", "y": 1.06, "x": 0})
    return fig
