"""Notebooks with svckit widgets as HTML pages that show what the notebook showed, offline.

nbconvert's own HTML draws widgets from the notebook's saved widget state with a widget manager it
loads from a CDN: offline, or without saved state, each widget is blank, and each plotly figure is
its PNG fallback where a front end wrote one (JupyterLab and Notebook 7 do once they drew it), else
its title. svckit's widgets write a static view beside each live one (:mod:`svckit.widgets._static`):
their tables as HTML, and their charts as plotly outputs that follow it. :class:`OfflineHTMLExporter`
keeps those static views in place of the live widgets, puts each chart back in its place in its
static view, draws every plotly figure with plotly.js put on the page once (only when it has a chart),
and leaves out the widget state and its CDN scripts, so the page works with the network off::

    jupyter nbconvert --to svckit notebook.ipynb        # the exporter is registered with nbconvert
    svckit demo --execute                               # runs the demo notebooks and writes them so

Other widgets (a tqdm bar, a user's own) fall back to their text, as nbconvert shows any widget
without state.
"""

from __future__ import annotations

import copy
import html
import re
from typing import Any

import jinja2
from nbconvert import HTMLExporter
from traitlets import default

from svckit.widgets._chart import PLOTLY_MIME
from svckit.widgets._static import SLOT_KEY, SLOT_RULES, script_json

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: the class every static view's outer element carries (see svckit.widgets._static)
STATIC_MARK = "svc-static-"
#: a chart drawn on the page; nbconvert may rewrite its quotes
CHART_MARK = re.compile(r"""class=["']svc-s-chart\b""")
#: the line of a static view that names a chart, which is its own output after the view
CHART_REF = re.compile(r"<div class='svc-s-chartref ([^']*)' data-chart='([^']*)'>.*?</div>")
#: the static view's rules for its chart outputs, which the page does not have
SLOT_STYLE = re.compile(f"<style {SLOT_RULES}>.*?</style>", re.DOTALL)

#: a chart's own style on the page
CHART_STYLE = "<style>.svc-s-chart { min-height: 60px; }</style>"
#: draws a page's charts with its plotly.js once they come near the screen (a hidden tab never draws)
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


def chart_html(figure: dict[str, Any], title: str = "chart", classes: str = "") -> str:
    """A plotly figure (its JSON, as a notebook holds it) as a chart of the page: an element that
    :data:`DRAW_SCRIPT` draws with the page's plotly.js, and the figure beside it as JSON."""
    return (f"<div class='svc-s-chart {html.escape(classes)}' data-title='{html.escape(title, quote=True)}'></div>"
            f"<script type='application/json'>{script_json(figure)}</script>")


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _static_ids(outputs: list[Any]) -> set[str]:
    """The model ids whose static view is among ``outputs``."""
    found = set()
    for out in outputs:
        text = _text(out.get("data", {}).get("text/html", ""))
        start = text.find(STATIC_MARK)
        if start >= 0:
            end = start + len(STATIC_MARK)
            while end < len(text) and text[end] not in " '\"":
                end += 1
            found.add(text[start + len(STATIC_MARK):end])
    return found


def _title(figure: dict[str, Any]) -> str:
    title = (figure.get("layout", {}) or {}).get("title") or {}
    return str(title.get("text") if isinstance(title, dict) else title) or "chart"


def _plotly_as_html(output: Any) -> None:
    """A plotly figure output (``application/vnd.plotly.v1+json``, which nbconvert cannot draw) gets
    the HTML of a chart, drawn with the page's plotly.js."""
    figure = output.get("data", {}).get(PLOTLY_MIME)
    if figure is None or "text/html" in output.data:
        return
    chart = f"<div class='svc-static'>{CHART_STYLE}{chart_html(figure, _title(figure))}{DRAW_SCRIPT}</div>"
    output.data = {"text/html": chart, "text/plain": output.data.get("text/plain", _title(figure))}


def _charts_in_place(outputs: list[Any]) -> list[Any]:
    """``outputs`` with each static view's charts drawn where the view names them (from the chart
    outputs that follow it, which are dropped, as are empty ones)."""
    slots = {o["metadata"][SLOT_KEY]: o.get("data", {}).get(PLOTLY_MIME)
             for o in outputs if SLOT_KEY in o.get("metadata", {})}
    placed: set[str] = set()

    def place(m: re.Match[str]) -> str:
        figure = slots.get(html.unescape(m.group(2)))
        if figure is None:
            return m.group(0)
        placed.add(html.unescape(m.group(2)))
        return chart_html(figure, _title(figure), html.unescape(m.group(1)))

    for out in outputs:
        text = _text(out.get("data", {}).get("text/html", ""))
        if STATIC_MARK not in text:
            continue
        # the charts in place, and no rules for the outputs around the view (the page has none of them)
        text = SLOT_STYLE.sub("", CHART_REF.sub(place, text))
        out["data"]["text/html"] = _with_script(text) if CHART_MARK.search(text) else text
    return [o for o in outputs if SLOT_KEY not in o.get("metadata", {})
            or (o["metadata"][SLOT_KEY] not in placed and PLOTLY_MIME in o.get("data", {}))]


def _with_script(view: str) -> str:
    """A static view with the chart style and the script that draws its charts, at its end (inside
    its outer element, which the script finds as its parent)."""
    end = view.rstrip().rfind("</div>")
    return view[:end] + CHART_STYLE + DRAW_SCRIPT + view[end:] if end >= 0 else view


def offline_notebook(nb: Any) -> Any:
    """A copy of ``nb`` where every svckit widget is its static view with its charts in place (the
    live widget's output is dropped where its static view follows, and the widget state is left
    out) and every plotly figure a chart drawn with the page's plotly.js."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        outputs = cell.get("outputs")
        if not outputs:
            continue
        static = _static_ids(outputs)
        outputs = [o for o in outputs if o.get("data", {}).get(WIDGET_VIEW, {}).get("model_id") not in static]
        cell.outputs = _charts_in_place(outputs)
        for output in cell.outputs:
            _plotly_as_html(output)
    return nb


def plotly_script() -> str:
    """plotly.js, inline, once per page (it sets ``window.Plotly``, with or without a module loader)."""
    from plotly.offline import get_plotlyjs

    return f"<script>{get_plotlyjs()}</script>"


#: JupyterLab's page as nbconvert writes it, without require.js (no widget manager is loaded), and
#: with plotly.js in the head when a chart is on the page
TEMPLATE = """{%- extends 'index.html.j2' -%}
{% block html_head_js_requirejs %}{% endblock html_head_js_requirejs %}
{% block html_head_js %}{{ super() }}{{ resources.get('svckit_plotly', '') }}{% endblock html_head_js %}
"""


def _has_chart(nb: Any) -> bool:
    return any(CHART_MARK.search(str(o.get("data", {}).get("text/html", "")))
               for cell in nb.cells for o in cell.get("outputs", ()))


class OfflineHTMLExporter(HTMLExporter):
    """HTML that shows each svckit widget's static view and every plotly figure, with plotly.js on the
    page once and no CDN widget manager (see the module)."""

    export_from_notebook = "HTML with svckit widgets, offline"

    @default("extra_loaders")
    def _svckit_template(self) -> list[Any]:
        return [jinja2.DictLoader({"svckit_offline.html.j2": TEMPLATE})]

    @default("template_file")
    def _svckit_template_file(self) -> str:
        return "svckit_offline.html.j2"

    def from_notebook_node(self, nb: Any, resources: dict[str, Any] | None = None,
                           **kw: Any) -> tuple[str, Any]:
        nb = offline_notebook(nb)
        resources = dict(resources or {})
        if _has_chart(nb):
            resources["svckit_plotly"] = plotly_script()
        return super().from_notebook_node(nb, resources, **kw)


__all__ = ["OfflineHTMLExporter", "chart_html", "offline_notebook", "plotly_script"]
