"""What a widget moves to the browser: every widget's state at display (defaults included) is at
most 300 KB and carries no plotly.js bundle, and redrawing a chart moves only that chart's figure."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ipywidgets.embed import dependency_state

from svckit.sandbox.plans import PLAN_PRESETS
from svckit.widgets import (
    AccountDashboard,
    Deliveries,
    KeyspaceReport,
    KVExplorer,
    MonitorProfiler,
    VectorPlayground,
    WorkflowTimeline,
)
from svckit.widgets._chart import Chart
from tests.account.test_dashboard_overview import loaded

LIMIT = 300_000
#: the first bytes of plotly.js, and what every copy of it holds
PLOTLY_JS = ("plotly.js v", "window.Plotly")


@pytest.fixture(scope="module")
def clients(demo_sandbox):
    with demo_sandbox.connect() as c:
        yield c


WIDGETS = {
    "KVExplorer": lambda c: KVExplorer(c.kv),
    # its first page loads in a background job: weighed once loaded, what a person sees (and no job
    # left drawing while the next widget is weighed)
    "AccountDashboard": lambda c: loaded(AccountDashboard(c.account, presets=PLAN_PRESETS)),
    "WorkflowTimeline": lambda c: WorkflowTimeline(c.queue),
    "Deliveries": lambda c: Deliveries(c.queue),
    "KeyspaceReport": lambda c: KeyspaceReport(c.kv),
    "MonitorProfiler": lambda c: MonitorProfiler(c.kv),
    "VectorPlayground": lambda c: VectorPlayground.from_settings(c.settings, query="parse command line options"),
}


def state_bytes(widget: Any) -> tuple[int, list[str]]:
    """The JSON size of what displaying ``widget`` sends (every model it depends on, defaults
    included), and the models whose state holds plotly.js."""
    state = dependency_state(widget, drop_defaults=False)
    text = {model_id: json.dumps(entry["state"], default=str) for model_id, entry in state.items()}
    carriers = [model_id for model_id, t in text.items() if any(mark in t for mark in PLOTLY_JS)]
    return len(json.dumps(state, default=str)), carriers


@pytest.mark.parametrize("name", list(WIDGETS))
def test_a_widget_weighs_kilobytes_and_carries_no_plotly_js(name, clients):
    widget = WIDGETS[name](clients)
    size, carriers = state_bytes(widget)
    assert not carriers, f"{name}: plotly.js travels in the state of {carriers}"
    assert size <= LIMIT, f"{name}: {size:,} bytes at display"
    widget.close()


def test_the_check_sees_a_figure_widget_carrying_plotly_js():
    """The guard above is not vacuous: plotly's FigureWidget carries the bundle and is caught."""
    import plotly.graph_objects as go

    size, carriers = state_bytes(go.FigureWidget())
    assert carriers and size > 4_000_000


class Sent:
    """Records what a widget's comm would send to the browser."""

    def __init__(self, widget: Any) -> None:
        self.messages: list[dict[str, Any]] = []
        widget.comm.send = lambda data=None, metadata=None, buffers=None: self.messages.append(data)


def test_redrawing_a_chart_moves_only_its_figure(clients):
    pg = VectorPlayground.from_settings(clients.settings, query="parse command line options")
    chart: Chart = pg.results.score_fig
    sent = Sent(chart)
    others = [Sent(w) for w in (pg.rank_fig, pg.projection_fig, pg.browse_tab.browse_fig)]
    pg.query("read a zip file")
    updates = [m for m in sent.messages if m and m.get("method") == "update"]
    assert updates and all(set(m["state"]) == {"outputs"} for m in updates)
    figure = json.dumps(chart.figure_dict)
    moved = max(len(json.dumps(m["state"])) for m in updates)
    assert len(figure) <= moved <= len(figure) + 2_000  # the figure and a little framing
    assert not any(o.messages for o in others[1:])  # charts not redrawn moved nothing
    pg.close()
