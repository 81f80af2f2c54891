"""The static view of a widget: what it shows, as plain HTML and plotly charts, for a notebook read with
no kernel (a saved notebook, an exported HTML page, a handout). Its HTML is written by
:func:`~svckit.widgets._static_html.static_html`.

:class:`StaticView` is what svckit's widgets inherit: displaying one writes the live widget, its
static view (an HTML output, headed "Static view as of <UTC time>" so a frozen "expires in 28 min"
or "running" reads as of then), and one output per chart slot: the chart's figure as plotly's own
``application/vnd.plotly.v1+json`` bundle with no HTML in it. JupyterLab, Notebook 7 and VS Code draw
that bundle with the plotly.js they ship, in any notebook, trusted or not; JupyterLab's and Notebook
7's renderer also writes a PNG of what it drew into the output, which a saved notebook keeps and
plain ``nbconvert --to html`` shows; svckit's exporter (:mod:`svckit.export`) puts each chart back
in its place in the static view. Each output has a display id, so the static view follows the
widget's state (rewritten with ``update_display`` a moment after the widget changes, and at the end
of every cell); a widget that adds charts after it is displayed (a batch of queries) keeps
``static_spare_charts`` slots for them.

While the live widget is drawn, CSS rules in the static view keyed by the widget's id hide the static
view and its chart outputs (folded to no height, still laid out, so the renderer still draws them and
writes their PNG); where the live widget cannot be drawn (no kernel, no widget state, no widget
manager), the static view is what the reader sees.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import ipywidgets as W
import traitlets as T

from svckit._units import timestamp_text
from svckit.widgets._chart import CONFIG, PLOTLY_MIME, Chart
from svckit.widgets._common import CellHooks
from svckit.widgets._static_html import STATIC_STYLE, Slots, script_json, static_html

#: seconds between a change and the rewrite of the static view (changes in between are coalesced)
DELAY = 0.5
#: seconds at least between two rewrites by the timer: a widget that changes every second (the live
#: profiler) rewrites its static view every 5 s, not every second
MIN_INTERVAL = 5.0
#: an output's metadata key naming the chart slot it is (read by svckit.export)
SLOT_KEY = "svckit_chart"
#: the attribute of the static view's style element that places its chart outputs (the exporter,
#: which puts the charts back in the view, drops it)
SLOT_RULES = "data-svc-slots"
#: an output area's child element in JupyterLab 4, Notebook 7 and nbconvert's HTML
OUTPUT_CHILD = ".jp-OutputArea-child"


#: trace types drawn with WebGL, and the SVG type a static chart draws them with
SVG_OF_WEBGL = {"scattergl": "scatter"}


def chart_bundle(chart: Chart | None) -> dict[str, Any]:
    """A chart slot's output: plotly's own bundle (no HTML, so a viewer without plotly.js falls back
    to the PNG the renderer adds, or to the title), or an empty text for an empty slot. WebGL traces
    are drawn as SVG there: a browser keeps some 16 WebGL contexts, and the live widget's charts, their
    static copies and the PNG renderings would pass that (the oldest chart then loses its drawing)."""
    if chart is None:
        return {"text/plain": ""}
    figure = dict(chart.figure_dict)
    figure["data"] = [{**t, "type": SVG_OF_WEBGL[t["type"]]} if t.get("type") in SVG_OF_WEBGL else t
                      for t in figure.get("data", [])]
    return {PLOTLY_MIME: {**figure, "config": CONFIG}, "text/plain": chart.title}


def slot_rules(model_id: str, slots: int, empty: set[int]) -> str:
    """CSS for a static view and the ``slots`` chart outputs that follow it: while the live widget is
    drawn in JupyterLab or Notebook 7, the view is hidden and its charts folded away (still
    laid out: the renderer draws them and writes their PNG); the ``empty`` ones always hidden. On a
    page of nbconvert's (``body.jp-Notebook``), whose widget manager draws a widget from its saved
    state with no kernel and no plotly renderer, the live widget is hidden and the static view shown."""
    static = f"{OUTPUT_CHILD}:has(.svc-static-{model_id})"
    live_here = f"body:not(.jp-Notebook):has(.svc-live-{model_id})"
    live, hidden = [], []
    for n in range(slots):
        selector = static + f" + {OUTPUT_CHILD}" * (n + 1)
        (hidden if n in empty else live).append(selector)
    rules = [f"{live_here} .svc-static-{model_id} {{ display: none !important; }}",
             f"body.jp-Notebook .svc-live-{model_id} {{ display: none !important; }}",
             # the live widget's output where it is not drawn ("Error displaying widget: model not
             # found" in a notebook reopened with no kernel): the static view stands in its place
             # (one :has() may not hold another: "+ child .svc-static-X", not "+ child:has(...)")
             (f"body:not(:has(.svc-live-{model_id})) {OUTPUT_CHILD}:has(+ {OUTPUT_CHILD} .svc-static-{model_id})"
              " { display: none !important; }")]
    if live:
        rules.append(", ".join(f"{live_here} {s}" for s in live)
                     + " { display: block !important; height: 0 !important; overflow: hidden !important;"
                       " visibility: hidden !important; margin: 0 !important; padding: 0 !important; }")
    if hidden:
        rules.append(", ".join(hidden) + " { display: none !important; }")
    return f"<style {SLOT_RULES}>" + "\n".join(rules) + "</style>"


# -- displaying a widget with its static view ------------------------------------------------------

class _Watcher(CellHooks):
    """Every displayed :class:`StaticView`; rewrites the views of those that changed, a moment after
    the change (a timer) and at the end of each cell (so a headless run records the final state)."""

    def __init__(self) -> None:
        self.views: set[StaticView] = set()

    def events(self) -> dict[str, Callable[..., None]]:
        return {"post_run_cell": self.end_of_cell}

    def end_of_cell(self, *_args: Any) -> None:
        for view in list(self.views):
            view._flush_static(cell=True)


_WATCHER = _Watcher()


class StaticView:
    """Mixin of svckit's widgets: display the live widget, its static view and its charts (see the
    module)."""

    #: chart outputs kept beyond the charts the widget shows when displayed, for charts it adds later
    static_spare_charts = 0

    _static_display_id: str | None = None
    _static_slots: int | None = None  # how many chart outputs follow the static view, once displayed
    _static_timer: threading.Timer | None = None
    _static_flushed = 0.0  # time.monotonic() of the timer's last rewrite
    _static_dirty = False  # changed since the last rewrite
    _static_dirty_cell = False  # changed since the last rewrite at the end of a cell
    _static_sent: dict[Any, Any]  # what was sent last: "html" -> the view's body, slot n -> its figure
    _static_sent_cell: dict[Any, Any]  # the same, sent at the end of a cell
    _static_watched: set[int]

    def _static_parts(self) -> tuple[str, list[Chart | None]]:
        """The static view's body (without its time) and the chart of each slot (``None``: empty)."""
        model_id = self.model_id  # type: ignore[attr-defined]
        slots = Slots(self._static_slots)
        body = static_html(self, slots, f"svckit-chart-{model_id}-")
        charts: list[Chart | None] = list(slots)
        return body, charts + [None] * ((self._static_slots or 0) - len(charts))

    def _static_page(self, body: str, charts: list[Chart | None]) -> str:
        model_id = self.model_id  # type: ignore[attr-defined]
        rules = slot_rules(model_id, len(charts), {n for n, c in enumerate(charts) if c is None})
        asof = f"Static view as of {timestamp_text(datetime.now(UTC))} UTC"
        return (f"<div class='svc-static svc-static-{model_id}'>{STATIC_STYLE}{rules}"
                f"<div class='svc-s-asof'>{asof}</div>{body}</div>")

    def static_html(self) -> str:
        """The widget's static view now: its tables as HTML, each chart named where it is."""
        return self._static_page(*self._static_parts())

    def static_outputs(self) -> list[dict[str, Any]]:
        """The static view's outputs as displaying the widget now writes them (nbformat output
        dicts): the HTML, then one bundle per chart slot."""
        body, charts = self._static_parts()
        if self._static_slots is None:  # not displayed yet: as the first display would keep them
            charts += [None] * self.static_spare_charts
        outputs = [{"output_type": "display_data", "metadata": {},
                    "data": {"text/html": self._static_page(body, charts)}}]
        outputs += [{"output_type": "display_data", "data": chart_bundle(chart),
                     "metadata": {SLOT_KEY: self._slot_id(n)}} for n, chart in enumerate(charts)]
        return outputs

    def _slot_id(self, n: int) -> str:
        return f"svckit-chart-{self.model_id}-{n}"  # type: ignore[attr-defined]

    def _ipython_display_(self) -> None:
        from IPython.display import display

        self.add_class(f"svc-live-{self.model_id}")  # type: ignore[attr-defined]
        bundle = self._repr_mimebundle_()  # type: ignore[attr-defined]
        bundle["text/plain"] = f"{type(self).__name__} (its static view follows)"
        display(bundle, raw=True)
        if self._static_display_id is None:
            self._static_display_id = f"svckit-static-{self.model_id}"  # type: ignore[attr-defined]
            self._static_watched = set()
            self._watch(self)
            _WATCHER.views.add(self)
            _WATCHER.hook()
        if self._static_slots is None:  # room for the charts it shows now, and its spares
            self._static_slots = len(self._static_parts()[1]) + self.static_spare_charts
        body, charts = self._static_parts()
        display({"text/html": self._static_page(body, charts)}, raw=True, display_id=self._static_display_id)
        for n, chart in enumerate(charts):
            display(chart_bundle(chart), raw=True, metadata={SLOT_KEY: self._slot_id(n)},
                    display_id=self._slot_id(n))
        self._static_sent = self._static_sent_cell = self._sent_state(body, charts)
        self._static_dirty = self._static_dirty_cell = False

    @staticmethod
    def _sent_state(body: str, charts: list[Chart | None]) -> dict[Any, Any]:
        state: dict[Any, Any] = {"html": body}
        state.update({n: None if c is None else c.figure_dict for n, c in enumerate(charts)})
        return state

    # -- following the state -----------------------------------------------------------------------
    def _watch(self, widget: Any) -> None:
        if id(widget) in self._static_watched:
            return
        self._static_watched.add(id(widget))
        widget.observe(self._static_changed, names=T.All)
        layout = getattr(widget, "layout", None)
        if isinstance(layout, W.Layout):
            layout.observe(self._static_changed, names=["display", "visibility"])
        for child in getattr(widget, "children", ()):
            self._watch(child)

    def _static_changed(self, change: Any) -> None:
        if change["name"] == "children":
            for child in change["new"]:
                self._watch(child)
        self._static_dirty = self._static_dirty_cell = True
        if self._static_timer is None:
            wait = max(DELAY, self._static_flushed + MIN_INTERVAL - time.monotonic())
            self._static_timer = threading.Timer(wait, self._flush_static)
            self._static_timer.daemon = True
            self._static_timer.start()

    def _flush_static(self, cell: bool = False) -> None:
        """Rewrite the static view and the chart outputs that changed, if the widget changed. At the
        end of a cell (``cell``) the updates carry that cell's parent, so a headless run (nbclient)
        records them; the timer's updates reach a live notebook only."""
        if cell:
            if not self._static_dirty_cell:
                return
        else:
            self._static_timer = None
            self._static_flushed = time.monotonic()
            if not self._static_dirty:
                return
        self._static_dirty = False
        if cell:
            self._static_dirty_cell = False
        if getattr(self, "comm", None) is None:  # closed
            _WATCHER.views.discard(self)  # type: ignore[arg-type]
            return
        body, charts = self._static_parts()
        now = self._sent_state(body, charts)
        before = self._static_sent_cell if cell else self._static_sent
        changed = [k for k in now if k != "html" and now[k] is not before.get(k)]
        if not changed and now["html"] == before.get("html"):
            return
        from IPython.display import update_display

        # the view first (its time and its rules for empty slots), then the charts that changed
        update_display({"text/html": self._static_page(body, charts)}, raw=True,
                       display_id=self._static_display_id)
        shown = self._static_sent  # what the front end holds now, whichever rewrite sent it
        for n in changed:
            if charts[n] is not None and shown.get(n) is not None:
                # JupyterLab's plotly renderer keeps the graph it drew when its output is updated,
                # and writes no PNG into the new output: an empty output in between gets the new
                # figure a new renderer (and its PNG)
                update_display(chart_bundle(None), raw=True, metadata={SLOT_KEY: self._slot_id(n)},
                               display_id=self._slot_id(n))
            update_display(chart_bundle(charts[n]), raw=True, metadata={SLOT_KEY: self._slot_id(n)},
                           display_id=self._slot_id(n))
        self._static_sent = now
        if cell:
            self._static_sent_cell = now


__all__ = ["SLOT_KEY", "STATIC_STYLE", "Slots", "StaticView", "chart_bundle", "script_json", "slot_rules",
           "static_html"]
