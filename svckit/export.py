"""Notebooks with svckit widgets as HTML pages that show what the notebook showed, offline.

nbconvert's own HTML draws widgets from the notebook's saved widget state with a widget manager it
loads from a CDN: offline, or without saved state, each widget is blank. svckit's widgets write a
static view beside each live one (:mod:`svckit.widgets._static`): their tables as HTML and their charts
as plotly figures. :class:`OfflineHTMLExporter` keeps those static views in place of the live
widgets, leaves the widget state and its CDN scripts out, and puts plotly.js on the page once when a
static view holds a chart, so the page works with the network off::

    jupyter nbconvert --to svckit notebook.ipynb        # the exporter is registered with nbconvert
    svckit demo --execute                               # runs the demo notebooks and writes them so

Other widgets (a tqdm bar, a user's own) fall back to their text, as nbconvert shows any widget
without state.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import jinja2
from nbconvert import HTMLExporter
from traitlets import default

from svckit.widgets._chart import PLOTLY_MIME
from svckit.widgets._static import DRAW_SCRIPT, STATIC_STYLE, chart_html

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: the class every static view's outer element carries (see svckit.widgets._static)
STATIC_MARK = "svc-static-"
#: a static view's chart element (svckit.widgets._static); nbconvert may rewrite its quotes
CHART_MARK = re.compile(r"""class=["']svc-s-chart\b""")


def _static_ids(outputs: list[Any]) -> set[str]:
    """The model ids whose static view is among ``outputs``."""
    found = set()
    for out in outputs:
        text = out.get("data", {}).get("text/html", "")
        if isinstance(text, list):
            text = "".join(text)
        start = text.find(STATIC_MARK) if isinstance(text, str) else -1
        if start >= 0:
            end = start + len(STATIC_MARK)
            while end < len(text) and text[end] not in " '\"":
                end += 1
            found.add(text[start + len(STATIC_MARK):end])
    return found


def _plotly_as_html(output: Any) -> None:
    """A plotly figure output (``application/vnd.plotly.v1+json``, which nbconvert cannot draw) gets
    the HTML of a static chart, drawn with the page's plotly.js."""
    figure = output.get("data", {}).get(PLOTLY_MIME)
    if figure is None or "text/html" in output.data:
        return
    title = (figure.get("layout", {}).get("title") or {}).get("text") or "chart"
    chart = f"<div class='svc-static'>{STATIC_STYLE}{chart_html(figure, title)}{DRAW_SCRIPT}</div>"
    output.data = {"text/html": chart, "text/plain": output.data.get("text/plain", title)}


def offline_notebook(nb: Any) -> Any:
    """A copy of ``nb`` where every svckit widget is its static view (the live widget's output is
    dropped where its static view follows, and the widget state is left out) and every plotly figure
    a static chart."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        outputs = cell.get("outputs")
        if not outputs:
            continue
        static = _static_ids(outputs)
        cell.outputs = [o for o in outputs
                        if o.get("data", {}).get(WIDGET_VIEW, {}).get("model_id") not in static]
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


__all__ = ["OfflineHTMLExporter", "offline_notebook", "plotly_script"]
