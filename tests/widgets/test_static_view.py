"""The static view of a widget (what a saved or exported notebook shows with no kernel): what it
holds, its charts as plotly's own outputs after it, that both follow the widget's state in a real
kernel, and the offline HTML export that puts each chart back in its place."""

from __future__ import annotations

import json
import re

import ipywidgets as W
import nbformat
import plotly.graph_objects as go
import pytest

from svckit import demo
from svckit.export import OfflineHTMLExporter, offline_notebook
from svckit.widgets._chart import PLOTLY_MIME, Chart
from svckit.widgets._static import SLOT_KEY, Slots, StaticView, chart_bundle, static_html

pytestmark = pytest.mark.slow


def bar(title: str) -> go.Figure:
    return go.Figure(go.Bar(x=[1, 2], y=["a", "b"], orientation="h")).update_layout(title=title)


def test_the_static_view_shows_tables_fields_tabs_and_charts_but_not_what_is_hidden():
    hidden = W.HTML("<b>secret panel</b>", layout=W.Layout(display="none"))
    chart = Chart(bar("Scores")).add_class("my-chart")
    tabs = W.Tab(children=[W.HTML("<table class='svc-table'><tr><td>first tab</td></tr></table>"),
                           W.VBox([chart])], titles=["Table", "Chart"], selected_index=1)
    box = W.VBox([W.Text(value="shop:*", description="Pattern"), W.Button(description="Refresh"),
                  W.Select(options=["k1", "k2"], value="k2"), W.Dropdown(options=["hybrid"], description="index"),
                  W.Checkbox(value=True, description="values"), W.Checkbox(value=False, description="TTLs"),
                  hidden, tabs])
    slots = Slots()
    html = static_html(box, slots)
    assert "<b>Pattern</b> <code>shop:*</code>" in html and "<b>index</b> <code>hybrid</code>" in html
    assert "<option selected>k2</option>" in html and "Refresh" not in html  # buttons do nothing offline
    assert "secret panel" not in html
    # checkboxes drawn by the browser, not as glyphs a font may lack
    assert "<label><input type='checkbox' disabled checked> values</label>" in html
    assert "<label><input type='checkbox' disabled> TTLs</label>" in html
    assert "first tab" in html and html.count("type='radio'") == 2
    checked = re.findall(r"<input type='radio'[^>]*>", html)
    assert "checked" not in checked[0] and "checked" in checked[1]  # the tab the presenter had open
    # the chart is named where it is, and is its own output after the view
    assert slots == [chart] and "chart: Scores (below)" in html and "my-chart" in html
    assert "<script" not in html


NOTEBOOK = [
    ("import ipywidgets as W, plotly.graph_objects as go\n"
     "from svckit.widgets._chart import Chart\nfrom svckit.widgets._static import StaticView\n"
     "class Panel(StaticView, W.VBox):\n    pass\n"
     "note = W.HTML('<p>before the change</p>')\n"
     "chart = Chart(go.Figure(go.Bar(x=[1], y=['a'])).update_layout(title='first'))\n"
     "Panel([note, chart])"),
    ("note.value = '<p>after the change</p>'\n"
     "chart.show(go.Figure(go.Bar(x=[2], y=['b'])).update_layout(title='second'))"),
]


def test_in_a_kernel_the_static_view_follows_the_widget_and_export_shows_it_offline(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK])
    path = tmp_path / "panel.ipynb"
    nbformat.write(nb, path)
    run = demo.execute_notebook(path, tmp_path / "out", demo.kernel_env({}), timeout=120)
    assert run.ok, run.error
    saved = nbformat.read(tmp_path / "out" / "panel.ipynb", as_version=4)
    live, static, chart = saved.cells[0].outputs
    assert "application/vnd.jupyter.widget-view+json" in live.data
    view = static.data["text/html"]
    # the second cell changed the widget: the first cell's static view and its chart output say so
    assert "after the change" in view and "before the change" not in view
    assert re.search(r"Static view as of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", view)
    assert "chart: second (below)" in view
    # the chart: plotly's own bundle, no HTML in it (nbconvert shows the PNG a front end adds, or the title)
    assert set(chart.data) == {PLOTLY_MIME, "text/plain"} and chart.data["text/plain"] == "second"
    assert chart.data[PLOTLY_MIME]["layout"]["title"]["text"] == "second"
    model_id = live.data["application/vnd.jupyter.widget-view+json"]["model_id"]
    assert chart.metadata[SLOT_KEY] == f"svckit-chart-{model_id}-0"
    assert f"svc-static-{model_id}" in view and f":has(.svc-live-{model_id})" in view  # hidden while live
    assert "widgets" in saved.metadata  # the widget state is saved for JupyterLab
    # the offline copy keeps the static view in place of the live widget, the chart in its place
    offline = offline_notebook(saved)
    [page_view] = offline.cells[0].outputs
    assert list(page_view.data) == ["text/html"]
    figure = json.loads(re.search(r"<script type='application/json'>(.*?)</script>",
                                  page_view.data["text/html"]).group(1))
    assert figure["layout"]["title"]["text"] == "second" and "(below)" not in page_view.data["text/html"]
    page = (tmp_path / "out" / "panel.html").read_text()
    assert "after the change" in page and page.count("window.Plotly = Plotly") == 1
    assert "require.min.js" not in page and "html-manager" not in page  # no widget manager from a CDN


def test_export_draws_plain_plotly_figures_and_leaves_other_widgets_to_their_text():
    fig = json.loads(bar("a plain figure").to_json())
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("fig", outputs=[
        nbformat.v4.new_output("display_data", data={PLOTLY_MIME: fig}),
        nbformat.v4.new_output("display_data", data={
            "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2, "version_minor": 0},
            "text/plain": "100%|██████████| 4/4"})])])
    offline = offline_notebook(nb)
    chart, tqdm_bar = offline.cells[0].outputs
    assert "svc-s-chart" in chart.data["text/html"] and "a plain figure" in chart.data["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in tqdm_bar.data  # not ours: nbconvert shows its text
    body, _ = OfflineHTMLExporter().from_notebook_node(nb)
    assert body.count("window.Plotly = Plotly") == 1 and "100%|██████████| 4/4" in body
    no_chart, _ = OfflineHTMLExporter().from_notebook_node(nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("1", outputs=[nbformat.v4.new_output("execute_result",
                                                                            data={"text/plain": "1"})])]))
    assert "window.Plotly" not in no_chart  # plotly.js only on a page that draws a chart


def test_nbconvert_finds_the_offline_exporter_by_name():
    """``jupyter nbconvert --to svckit`` reaches the exporter through the package's entry point."""
    from nbconvert.exporters import get_exporter

    assert get_exporter("svckit") is OfflineHTMLExporter


def test_a_static_chart_draws_webgl_traces_as_svg():
    """The live widget's WebGL charts, their static copies and the front end's PNG renderings of them
    would pass a browser's WebGL contexts (some 16) and blank the oldest chart: a static copy is SVG."""
    chart = Chart(go.Figure([go.Scattergl(x=[1, 2], y=[3, 4], name="index"), go.Bar(x=[1], y=["a"])]))
    figure = chart_bundle(chart)[PLOTLY_MIME]
    assert [t["type"] for t in figure["data"]] == ["scatter", "bar"]
    assert [t["type"] for t in chart.figure_dict["data"]] == ["scattergl", "bar"]  # the live chart keeps WebGL
    assert chart_bundle(None) == {"text/plain": ""}  # an empty slot


class Panel(StaticView, W.VBox):
    static_spare_charts = 2


def test_the_export_drops_the_rules_for_the_outputs_around_a_static_view():
    """In a notebook the static view's rules hide the live widget's output before it (when the widget
    cannot be drawn) and its empty chart outputs after it; the exported page has neither, so the
    rules would hide the cell's other outputs there: the page keeps none of them."""
    panel = Panel([W.HTML("<p>no chart yet</p>")])
    before = nbformat.v4.new_output("stream", name="stdout", text="printed before\n")
    after = nbformat.v4.new_output("stream", name="stdout", text="printed after\n")
    outputs = [before, *(nbformat.from_dict(o) for o in panel.static_outputs()), after]
    assert "data-svc-slots" in outputs[1].data["text/html"] and len(outputs) == 2 + 1 + 2
    offline = offline_notebook(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("p", outputs=outputs)]))
    shown = offline.cells[0].outputs
    assert [o.output_type for o in shown] == ["stream", "display_data", "stream"]  # the empty chart outputs dropped
    assert "no chart yet" in shown[1].data["text/html"] and "data-svc-slots" not in shown[1].data["text/html"]


class RenderedSlots:
    """The chart outputs as JupyterLab's plotly renderer leaves them: an update of an output that
    holds a drawn graph keeps that graph and writes no PNG into the new output; an update from an
    empty output draws the new figure and writes its PNG."""

    def __init__(self) -> None:
        self.png: dict[str, bool] = {}  # display id -> the output holds the PNG of what it shows
        self.drawn: dict[str, bool] = {}

    def update_display(self, bundle: dict, *, display_id: str, **_: object) -> None:
        figure = PLOTLY_MIME in bundle
        self.png[display_id] = figure and not self.drawn.get(display_id, False)
        self.drawn[display_id] = figure


def test_every_chart_output_the_front_end_drew_keeps_its_png_after_each_rewrite(monkeypatch):
    """A chart added after display is sent by the timer's rewrite and again at the end of the cell
    (for a headless run): the second send must not land on the graph the first one drew, or the
    saved notebook has that chart with no PNG (nbconvert then shows its title only)."""
    import IPython.display

    front = RenderedSlots()
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    monkeypatch.setattr(IPython.display, "update_display", front.update_display)
    first = Chart(bar("first"))
    panel = Panel([first])
    panel._ipython_display_()
    front.drawn[panel._slot_id(0)] = True  # the display drew it
    panel.children = [first, Chart(bar("added"))]
    panel._flush_static()  # the timer
    first.show(bar("first, redrawn"))
    panel._flush_static(cell=True)  # the end of the cell
    sent = [panel._slot_id(n) for n in (0, 1)]
    assert all(front.drawn[s] for s in sent)
    assert [front.png[s] for s in sent] == [True, True]
