"""The deliveries view's chart: one lane per message, a marker for each state it went through."""

from __future__ import annotations

from urllib.parse import urlsplit

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from svckit.widgets._plots._base import TEMPLATE, empty_figure, ms

#: event state -> colour and marker; a delivery's answers stand out (delivered, error, failed)
EVENT_STYLE: dict[str, tuple[str, str]] = {
    "CREATED": ("#9ca3af", "circle-open"), "ACTIVE": ("#1f77b4", "circle-open"),
    "RETRY": ("#ff7f0e", "circle-open"), "ERROR": ("#ff7f0e", "x"), "DELIVERED": ("#2ca02c", "circle"),
    "FAILED": ("#d62728", "x"), "CANCELED": ("#7f7f7f", "square"), "CANCEL_REQUESTED": ("#7f7f7f", "square-open"),
}


def deliveries_figure(events: pd.DataFrame, *, messages: int = 30, title: str = "Deliveries") -> go.Figure:
    """The newest ``messages`` messages of an events frame (:func:`svckit.frames.events_frame`), one
    lane each (labelled by destination path and id), with a marker per event: when it was accepted,
    each attempt, each error, and how it ended. A retry waiting is a dotted line to its next time."""
    if events.empty:
        return empty_figure(title, "no deliveries yet")
    newest = events.sort_values("time").groupby("message_id", sort=False)["time"].max().nlargest(messages)
    shown = events[events["message_id"].isin(newest.index)]
    lanes = {m: f"{_path(u)} · {m[-6:]}" for m, u in shown.groupby("message_id")["url"].first().items()}
    order = [lanes[m] for m in newest.index[::-1]]
    fig = go.Figure()
    state = shown["state"].astype("string")
    for name, (color, symbol) in EVENT_STYLE.items():
        part = shown[state == name]
        if part.empty:
            continue
        hover = [f"{name}<br>{m}" + (f"<br>HTTP {int(s)}" if pd.notna(s) else "") + (f"<br>{e}" if pd.notna(e) else "")
                 for m, s, e in zip(part["message_id"], part["response_status"], part["error"])]
        fig.add_trace(go.Scatter(x=ms(part["time"]), y=[lanes[m] for m in part["message_id"]], mode="markers",
                                 name=name, marker={"color": color, "symbol": symbol, "size": 10},
                                 hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"))
    waiting = shown[state.isin(["RETRY"]) & shown["next_delivery_at"].notna()]
    waiting = waiting[~waiting["message_id"].isin(shown.loc[state.isin(["DELIVERED", "FAILED", "CANCELED"]),
                                                             "message_id"])]
    if not waiting.empty:
        xs, ys = [], []
        for _, row in waiting.sort_values("time").groupby("message_id").tail(1).iterrows():
            xs += [ms(pd.Series([row["time"]]))[0], ms(pd.Series([row["next_delivery_at"]]))[0], np.nan]
            ys += [lanes[row["message_id"]]] * 2 + [None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="next retry",
                                 line={"color": "#ff7f0e", "dash": "dot"}, hoverinfo="skip"))
    fig.update_layout(title=title, template=TEMPLATE, height=140 + 24 * len(order),
                      xaxis={"type": "date", "title": "time (UTC)"},
                      yaxis={"type": "category", "categoryorder": "array", "categoryarray": order, "automargin": True},
                      legend={"orientation": "h", "y": -0.25}, margin={"l": 10, "r": 10, "t": 40, "b": 40})
    return fig


def _path(url: object) -> str:
    """A destination as a lane shows it: its path, cut to 30 characters."""
    try:
        return (urlsplit(str(url or "")).path or "/")[:30]
    except ValueError:
        return str(url)[:30]
