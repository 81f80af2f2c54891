"""A chart that weighs its data: a plotly figure drawn by the notebook's own plotly.js.

``go.FigureWidget`` (plotly 6 and later) is an anywidget whose state carries plotly.js itself, about
5 MB per figure: a widget with six charts moved 30 MB to the browser, and a saved notebook kept every
copy. :class:`Chart` is an ``ipywidgets.Output`` holding the figure as plotly's notebook output, the
``application/vnd.plotly.v1+json`` bundle that JupyterLab and Notebook 7 draw with the one plotly.js
they ship (the ``jupyterlab-plotly`` extension installed with plotly). Its state is the figure's JSON
(numbers as base64 typed arrays), and drawing a new figure moves only that.

A chart that must send clicks back to Python (the workflow timeline's Gantt) gets a
:class:`ClickRelay`: a few hundred bytes of JavaScript, shown inside the chart's output, that finds
the plotly graph drawn beside it and forwards ``plotly_click`` to :meth:`Chart.on_click` callbacks
with plotly's own ``(trace, points, state)`` arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anywidget
import ipywidgets as W
import plotly.graph_objects as go
import plotly.io as pio
import traitlets as T
from plotly.callbacks import Points

PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: the plotly.js config of every chart: no logo, no "edit in chart studio" link
CONFIG = {"displaylogo": False, "responsive": True}

_RELAY_ESM = """
function bind(chart, model) {
  for (const gd of chart.querySelectorAll('.js-plotly-plot')) {
    if (gd.__svcRelay === model || typeof gd.on !== 'function') continue;
    gd.__svcRelay = model;
    gd.on('plotly_click', (ev) => {
      const points = (ev.points || []).map(p => ({trace: p.curveNumber, point: p.pointNumber ?? p.pointIndex}));
      if (points.length) model.send({event: 'click', points});
    });
  }
}
export default {
  render({ model, el }) {
    let observer = null;
    const attach = () => {
      const chart = el.closest('.svc-chart');
      if (!chart) { requestAnimationFrame(attach); return; }
      bind(chart, model);
      observer = new MutationObserver(() => bind(chart, model));
      observer.observe(chart, {childList: true, subtree: true});
    };
    attach();
    return () => observer && observer.disconnect();
  }
};
"""


class ClickRelay(anywidget.AnyWidget):
    """Forwards clicks on the plotly graph of the :class:`Chart` it is shown in (see the module)."""

    _esm = T.Unicode(_RELAY_ESM).tag(sync=True)


def figure_json(fig: go.Figure) -> dict[str, Any]:
    """The figure as plotly's notebook bundle holds it (numpy arrays as base64 typed arrays)."""
    return json.loads(pio.to_json(fig, validate=False))


def _output_trait(name: str) -> T.Unicode:
    return T.Unicode(W.Output.class_traits()[name].default_value).tag(sync=True)


class Chart(W.Widget):
    """A plotly figure in a widget, drawn by the notebook's plotly.js; ``show(fig)`` replaces it.

    ``chart.figure`` is the ``go.Figure`` shown, and ``chart.data`` / ``chart.layout`` read it, as on
    a FigureWidget. That is why a Chart is the ipywidgets Output model and view (the notebook draws
    it as an Output) without being a ``DOMWidget``: a DOMWidget's ``layout`` is its CSS box. Size a
    chart through its figure (``width`` / ``height`` in the figure's layout)."""

    _model_name = _output_trait("_model_name")
    _model_module = _output_trait("_model_module")
    _model_module_version = _output_trait("_model_module_version")
    _view_name = _output_trait("_view_name")
    _view_module = _output_trait("_view_module")
    _view_module_version = _output_trait("_view_module_version")
    _dom_classes = T.Tuple().tag(sync=True)
    msg_id = T.Unicode("").tag(sync=True)
    outputs = T.Tuple().tag(sync=True)

    def __init__(self, fig: go.Figure | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_class("svc-chart")
        self.figure = go.Figure()
        self.figure_dict: dict[str, Any] = {}
        self._relay: ClickRelay | None = None
        self._click_callbacks: list[Callable[[Any, Points, Any], None]] = []
        if fig is not None:
            self.show(fig)

    @property
    def data(self) -> tuple[Any, ...]:
        return self.figure.data

    @property
    def layout(self) -> go.Layout:
        return self.figure.layout

    def add_class(self, name: str) -> Chart:
        """Add a CSS class to the chart's element (a hook for tests and user CSS)."""
        if name not in self._dom_classes:
            self._dom_classes = (*self._dom_classes, name)
        return self

    def remove_class(self, name: str) -> Chart:
        """Remove a CSS class :meth:`add_class` added."""
        self._dom_classes = tuple(c for c in self._dom_classes if c != name)
        return self

    def show(self, fig: go.Figure) -> None:
        """Draw ``fig`` in place of what the chart shows."""
        self.figure = fig
        self.figure_dict = figure_json(fig)
        outputs: list[dict[str, Any]] = [{
            "output_type": "display_data", "metadata": {},
            "data": {PLOTLY_MIME: {**self.figure_dict, "config": CONFIG}, "text/plain": self.title},
        }]
        if self._relay is not None:
            outputs.append({"output_type": "display_data", "metadata": {},
                            "data": {"application/vnd.jupyter.widget-view+json": {
                                "version_major": 2, "version_minor": 0, "model_id": self._relay.model_id},
                                "text/plain": ""}})
        self.outputs = tuple(outputs)

    @property
    def title(self) -> str:
        title = self.figure.layout.title.text
        return str(title) if title else "chart"

    def on_click(self, callback: Callable[[Any, Points, Any], None]) -> None:
        """Call ``callback(trace, points, None)`` when a point of the chart is clicked in the browser,
        as ``trace.on_click`` of a FigureWidget would."""
        self._click_callbacks.append(callback)
        if self._relay is None:
            self._relay = ClickRelay(layout=W.Layout(width="0px", height="0px"))
            self._relay.on_msg(self._on_relay_msg)
            self.show(self.figure)

    def click(self, trace_index: int, point_index: int) -> None:
        """What a click on point ``point_index`` of trace ``trace_index`` does."""
        trace = self.figure.data[trace_index]
        points = Points(point_inds=[point_index], xs=[], ys=[], trace_name=trace.name, trace_index=trace_index)
        for callback in self._click_callbacks:
            callback(trace, points, None)

    def _on_relay_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") != "click":
            return
        for p in content.get("points", [])[:1]:
            trace, point = int(p.get("trace", -1)), int(p.get("point", -1))
            if 0 <= trace < len(self.figure.data) and point >= 0:
                self.click(trace, point)

    def close(self) -> None:
        if self._relay is not None:
            self._relay.close()
        super().close()
