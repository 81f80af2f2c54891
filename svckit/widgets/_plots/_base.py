"""What every figure shares: colours, the slim ``svckit`` template, the empty placeholder, times as
milliseconds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

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
OTHER_COLOR = "#9467bd"
#: colours of the evaluation's configurations (the modes' colours; DBSF apart from RRF)
CONFIG_COLORS: dict[str, str] = {"dense": MODE_COLORS["DENSE"], "sparse": MODE_COLORS["SPARSE"],
                                 "hybrid RRF": MODE_COLORS["HYBRID"], "hybrid DBSF": "#9467bd"}


def _slim_template() -> go.layout.Template:
    """plotly_white's layout (fonts, colours, grid, axes) without its defaults for every trace type:
    what the 2-D charts here need, a seventh of the bytes a figure carries."""
    white = pio.templates["plotly_white"].layout
    keep = ("autotypenumbers", "colorway", "font", "hoverlabel", "hovermode", "paper_bgcolor", "plot_bgcolor",
            "title", "xaxis", "yaxis", "coloraxis")
    return go.layout.Template(layout={k: white[k] for k in keep})


TEMPLATE = "svckit"
pio.templates[TEMPLATE] = _slim_template()


def empty_figure(title: str, message: str) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, template=TEMPLATE, height=260,
                      xaxis={"visible": False}, yaxis={"visible": False},
                      annotations=[{"text": message, "showarrow": False, "font": {"size": 14},
                                    "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}])
    return fig


def ms(values: pd.Series) -> np.ndarray:
    """Datetimes as float Unix milliseconds (NaN for NaT): plotly date axes take ms numbers, and a
    float array is shipped to the browser as a typed array instead of 10,000 ISO strings."""
    s = pd.to_datetime(pd.Series(values), utc=True)
    raw = s.dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")
    out = raw.view("int64").astype("float64") / 1e6
    out[np.isnat(raw)] = np.nan
    return out
