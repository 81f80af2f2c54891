"""The static view of a widget (what a saved or exported notebook shows with no kernel): what it
holds, that it follows the widget's state in a real kernel, and the offline HTML export."""

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
from svckit.widgets._static import static_html

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
    html = static_html(box)
    assert "<b>Pattern</b> <code>shop:*</code>" in html and "<b>index</b> <code>hybrid</code>" in html
    assert "<option selected>k2</option>" in html and "Refresh" not in html  # buttons do nothing offline
    assert "secret panel" not in html
    # checkboxes drawn by the browser, not as glyphs a font may lack
    assert "<label><input type='checkbox' disabled checked> values</label>" in html
    assert "<label><input type='checkbox' disabled> TTLs</label>" in html
    assert "first tab" in html and html.count("type='radio'") == 2
    checked = re.findall(r"<input type='radio'[^>]*>", html)
    assert "checked" not in checked[0] and "checked" in checked[1]  # the tab the presenter had open
    figure = json.loads(re.search(r"<script type='application/json'>(.*?)</script>", html).group(1))
    assert figure == chart.figure_dict and "my-chart" in html and "data-title='Scores'" in html


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
    live, static = saved.cells[0].outputs
    assert "application/vnd.jupyter.widget-view+json" in live.data
    view = static.data["text/html"]
    # the second cell changed the widget: the first cell's static view says so
    assert "after the change" in view and "before the change" not in view
    assert "'title': {'text': 'second'}" in view.replace('"', "'") and "first" not in view
    model_id = live.data["application/vnd.jupyter.widget-view+json"]["model_id"]
    assert f"svc-static-{model_id}" in view and f"body:has(.svc-live-{model_id})" in view  # hidden while live
    assert "widgets" in saved.metadata  # the widget state is saved for JupyterLab
    # the offline copy keeps the static view in place of the live widget
    offline = offline_notebook(saved)
    assert [list(o.data) for o in offline.cells[0].outputs] == [["text/html"]]
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
