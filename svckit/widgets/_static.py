"""The static view of a widget: what it shows, as plain HTML and charts, for a notebook read with no
kernel (a saved notebook, an exported HTML page, a handout).

:func:`static_html` walks any ipywidgets tree and writes what each piece shows: HTML widgets as
their HTML, fields as ``label: value``, selections as the chosen item, progress bars, tabs as tabs
that switch with no script, and each :class:`~svckit.widgets._chart.Chart` as a plotly chart
(drawn when plotly.js is on the page; :mod:`svckit.export` puts it there once).

:class:`StaticView` is what svckit's widgets inherit: displaying one writes two outputs, the live
widget and its static view, and the static view follows the widget's state (it is rewritten with
``update_display`` a moment after the widget changes, and at the end of every cell). While the live
widget is drawn, a CSS rule keyed by the widget's id hides the static view; where the live widget
cannot be drawn (no kernel, no widget state, no widget manager), the static view is what the
reader sees.
"""

from __future__ import annotations

import html
import itertools
import threading
import time
from typing import Any

import ipywidgets as W
import traitlets as T
from jinja2.utils import htmlsafe_json_dumps

from svckit.widgets._chart import Chart, ClickRelay

#: seconds between a change and the rewrite of the static view (changes in between are coalesced)
DELAY = 0.5
#: seconds at least between two rewrites by the timer: a widget that changes every second (the live
#: profiler) rewrites its static view every 5 s, not every second
MIN_INTERVAL = 5.0

#: the static view's own styles: fields, tabs that switch with radio buttons (no script), charts
STATIC_STYLE = """<style>
.svc-static { font: 13px var(--jp-ui-font-family, sans-serif); }
.svc-s-row { display: flex; flex-flow: row wrap; gap: 4px 12px; align-items: flex-start; }
.svc-s-col { display: flex; flex-direction: column; gap: 4px; min-width: 0; }
.svc-s-field { color: #374151; } .svc-s-field b { font-weight: 600; }
.svc-s-field code { background: #f3f4f6; padding: 0 4px; border-radius: 3px; }
.svc-s-tabs > input { display: none; }
.svc-s-tabs > label { display: inline-block; padding: 3px 12px; border: 1px solid #d1d5db; border-bottom: none;
  border-radius: 4px 4px 0 0; background: #f3f4f6; cursor: pointer; margin-right: 2px; }
.svc-s-tabs > .svc-s-panel { display: none; border-top: 1px solid #d1d5db; padding-top: 6px; }
.svc-s-chart { min-height: 60px; }
.svc-s-chart:empty::before { content: attr(data-title) " (chart: drawn where plotly.js is on the page)";
  color: #6b7280; font-style: italic; }
""" + "".join(
    f".svc-s-tabs > input:nth-of-type({i}):checked + label {{ background: white; font-weight: 600; }}\n"
    f".svc-s-tabs > input:nth-of-type({i}):checked ~ .svc-s-panel:nth-of-type({i}) {{ display: block; }}\n"
    for i in range(1, 13)) + "</style>"

#: draws a static view's charts once they are on screen (a hidden static view never draws)
DRAW_SCRIPT = """<script>(function(root){
  if (!root) return;
  const draw = (el) => {
    const data = el.nextElementSibling;
    if (!window.Plotly || el.dataset.drawn || !data) return;
    el.dataset.drawn = '1';
    const fig = JSON.parse(data.textContent);
    window.Plotly.newPlot(el, fig.data || [], fig.layout || {}, {displaylogo: false, responsive: true});
  };
  const charts = root.querySelectorAll('.svc-s-chart');
  if (!('IntersectionObserver' in window)) { charts.forEach(draw); return; }
  const seen = new IntersectionObserver((entries) => entries.forEach((e) => {
    if (e.isIntersecting) { seen.unobserve(e.target); draw(e.target); }
  }), {rootMargin: '800px 0px'});
  charts.forEach((el) => seen.observe(el));
})(document.currentScript && document.currentScript.parentElement);</script>"""


def _hidden(widget: Any) -> bool:
    layout = getattr(widget, "layout", None)
    return isinstance(layout, W.Layout) and (layout.display == "none" or layout.visibility == "hidden")


def _field(label: str, value: str) -> str:
    label = f"<b>{html.escape(label)}</b> " if label else ""
    return f"<span class='svc-s-field'>{label}{value}</span>"


def _text(value: Any) -> str:
    return f"<code>{html.escape(str(value))}</code>" if value not in (None, "") else "<i>(empty)</i>"


def script_json(value: Any) -> str:
    """``value`` as JSON to put inside a ``<script>`` element: ``<``, ``>``, ``&`` and ``'`` as
    ``\\u003c``-style escapes (U+2028/2029 too, by ``json.dumps``), so no stored text in it (a key
    named ``<!--<script>``, ``</script>``) can end the element early or keep it open past its end
    and swallow the rest of the page. The one way svckit embeds JSON in a page (jinja2's ``tojson``)."""
    return str(htmlsafe_json_dumps(value))


def chart_html(figure: dict[str, Any], title: str = "chart", classes: str = "") -> str:
    """A plotly figure (its JSON, as a notebook holds it) as a static chart: an element that
    :data:`DRAW_SCRIPT` draws with the page's plotly.js, and the figure beside it as JSON."""
    return (f"<div class='svc-s-chart {html.escape(classes)}' data-title='{html.escape(title, quote=True)}'></div>"
            f"<script type='application/json'>{script_json(figure)}</script>")


def _chart(chart: Chart) -> str:
    if not chart.figure.data and not chart.figure.layout.annotations:
        return ""
    return chart_html(chart.figure_dict, chart.title, " ".join(chart._dom_classes))


def _tabs(tab: W.Tab) -> str:
    group = f"svc-tab-{tab.model_id}"
    heads, panels = [], []
    for i, child in enumerate(tab.children):
        title = tab.titles[i] if i < len(tab.titles) else f"tab {i + 1}"
        checked = " checked" if i == (tab.selected_index or 0) else ""
        heads.append(f"<input type='radio' name='{group}' id='{group}-{i}'{checked}>"
                     f"<label for='{group}-{i}'>{html.escape(str(title))}</label>")
        panels.append(f"<div class='svc-s-panel'>{static_html(child)}</div>")
    return f"<div class='svc-s-tabs'>{''.join(heads)}{''.join(panels)}</div>"


def static_html(widget: Any) -> str:
    """What ``widget`` shows, as HTML that needs no kernel and no widget manager."""
    if isinstance(widget, ClickRelay) or _hidden(widget):
        return ""
    if isinstance(widget, Chart):
        return _chart(widget)
    if isinstance(widget, W.Tab):
        return _tabs(widget)
    if isinstance(widget, W.Box):
        inner = "".join(static_html(c) for c in widget.children)
        if not inner:
            return ""
        kind = "svc-s-row" if isinstance(widget, W.HBox) else "svc-s-col"
        return f"<div class='{kind}'>{inner}</div>"
    if isinstance(widget, (W.HTML, W.HTMLMath)):
        return widget.value
    if isinstance(widget, W.Label):
        return html.escape(widget.value)
    if isinstance(widget, W.Button):
        return ""
    label = getattr(widget, "description", "") or ""
    if isinstance(widget, (W.IntProgress, W.FloatProgress)):
        if widget.value == widget.min:
            return ""
        return _field(label, f"<progress value='{widget.value}' max='{widget.max}'></progress>")
    if isinstance(widget, W.Select):
        options = "".join(f"<option{' selected' if v == widget.value else ''}>{html.escape(str(k))}</option>"
                          for k, v in itertools.islice(zip(widget._options_labels, widget._options_values), 500))
        return _field(label, f"<select size='{min(widget.rows, 12)}' disabled>{options}</select>") if options else ""
    if isinstance(widget, W.SelectMultiple):
        return _field(label, _text(", ".join(map(str, widget.label)))) if widget.label else ""
    if isinstance(widget, (W.Dropdown, W.ToggleButtons, W.RadioButtons)):
        return _field(label, _text(widget.label))
    if isinstance(widget, (W.Checkbox, W.ToggleButton)):
        # a disabled checkbox of the page's own, not a glyph: every browser draws it in any font
        box = f"<input type='checkbox' disabled{' checked' if widget.value else ''}>"
        return _field("", f"<label>{box} {html.escape(label)}</label>")
    if isinstance(widget, W.Textarea):
        return _field(label, f"<pre>{html.escape(widget.value)}</pre>") if widget.value else ""
    if hasattr(widget, "value"):
        return _field(label, _text(widget.value))
    return ""


# -- displaying a widget with its static view ------------------------------------------------------

class _Watcher:
    """Every displayed :class:`StaticView`; rewrites the views of those that changed, a moment after
    the change (a timer) and at the end of each cell (so a headless run records the final state)."""

    def __init__(self) -> None:
        self.views: set[StaticView] = set()
        self.hooked = False

    def hook(self) -> None:
        if self.hooked:
            return
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            shell.events.register("post_run_cell", self.end_of_cell)
            self.hooked = True

    def end_of_cell(self, *_args: Any) -> None:
        for view in list(self.views):
            view._flush_static(cell=True)


_WATCHER = _Watcher()


class StaticView:
    """Mixin of svckit's widgets: display the live widget and its static view (see the module)."""

    _static_display_id: str | None = None
    _static_timer: threading.Timer | None = None
    _static_flushed = 0.0  # time.monotonic() of the timer's last rewrite
    _static_dirty = False  # changed since the last rewrite
    _static_dirty_cell = False  # changed since the last rewrite at the end of a cell
    _static_sent = ""  # the last static view sent
    _static_sent_cell = ""  # the last one sent at the end of a cell
    _static_watched: set[int]

    def static_html(self) -> str:
        """The widget's static view now: its tables and charts as HTML."""
        model_id = self.model_id  # type: ignore[attr-defined]
        hide = f"<style>body:has(.svc-live-{model_id}) .svc-static-{model_id} {{ display: none !important; }}</style>"
        return (f"<div class='svc-static svc-static-{model_id}'>{STATIC_STYLE}{hide}{static_html(self)}"
                f"{DRAW_SCRIPT}</div>")

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
        self._static_sent = self._static_sent_cell = self.static_html()
        self._static_dirty = self._static_dirty_cell = False
        display({"text/html": self._static_sent}, raw=True, display_id=self._static_display_id)

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
        """Rewrite the static view if the widget changed. At the end of a cell (``cell``) the update
        carries that cell's parent, so a headless run (nbclient) records it; the timer's updates
        reach a live notebook only."""
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
        now = self.static_html()
        if now == (self._static_sent_cell if cell else self._static_sent):
            return
        from IPython.display import update_display

        update_display({"text/html": now}, raw=True, display_id=self._static_display_id)
        self._static_sent = now
        if cell:
            self._static_sent_cell = now
