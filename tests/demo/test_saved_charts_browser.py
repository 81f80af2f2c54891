"""A saved notebook keeps every chart: a demo notebook run in JupyterLab 4 or Notebook 7, saved, its
kernel stopped, and opened again shows every chart its live widgets drew (each widget's static view
is followed by its charts as plotly's own outputs, drawn by the front end's plotly.js, or as the
PNG the front end wrote into them after drawing); and the same notebook through plain
``jupyter nbconvert --to html``, opened with every request off the machine aborted, shows each of
them too (the PNGs: nbconvert's page has no plotly.js).

The notebooks: every demo notebook that draws a chart (kv_explorer and kv_bulk draw none), each in
one of the two front ends (each case is a Run All in a
browser, then a reopen and an nbconvert, about a minute; both front ends draw plotly outputs with
the same renderer, and test_nb_browser.py opens every notebook fresh in both): workflow_timeline (a
Gantt and a steps chart redrawn after display), kv_analysis (charts in tabs, a live profiler chart
redrawn every second), vector_playground (charts in tabs, three batch charts added after display into
the static view's spare outputs, plotly figures shown on their own), account_dashboard, the tour and
the rest. Nothing else may read "Loading widget..." either: a finished progress bar leaves a line of
text where its widget was (svckit._progress).

Screenshots of each reopened notebook: test-output/screenshots/saved_<notebook>_<ui>.png.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.conftest import wait_vector_seeded
from tests.lab_harness import (
    TALL,
    Lab,
    reopen,
    run_notebook,
    sandbox_lab,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CORPUS = 200
#: (front end, notebook)
CASES = [("lab", "workflow_timeline.ipynb"), ("notebook", "kv_analysis.ipynb"),
         ("lab", "vector_playground.ipynb"), ("notebook", "account_dashboard.ipynb"),
         ("notebook", "00_tour.ipynb"), ("lab", "queue_deliveries.ipynb"), ("notebook", "vector_evaluation.ipynb"),
         ("lab", "workflows_with_the_sdk.ipynb")]
PLOTLY_MIME = "application/vnd.plotly.v1+json"

#: the charts the live widgets hold (in any tab; not those a widget hides) and the plotly figures
#: shown on their own (a static view's chart outputs are folded away while its live widget is drawn)
LIVE_CHARTS_JS = """() => {
  const figured = (gd) => ((gd.data || []).length || ((gd.layout || {}).annotations || []).length) > 0;
  const shown = (el, root) => { for (let e = el; e && e !== root; e = e.parentElement)
    if (e.style && (e.style.display === 'none' || e.style.visibility === 'hidden')) return false; return true; };
  let n = 0;
  for (const live of document.querySelectorAll('[class*="svc-live-"]'))
    for (const c of live.querySelectorAll('.svc-chart')) {
      const gd = c.querySelector('.js-plotly-plot');
      if (gd && figured(gd) && shown(c, live)) n++;
    }
  for (const gd of document.querySelectorAll('.jp-RenderedPlotly'))
    if (!gd.closest('.svc-chart') && gd.checkVisibility({visibilityProperty: true}) && figured(gd)) n++;
  return n;
}"""
#: the charts a reader sees in the reopened notebook: plotly outputs drawn as a graph or as their PNG
REOPENED_CHARTS_JS = """() => [...document.querySelectorAll('.jp-RenderedPlotly')]
  .filter(r => r.checkVisibility({visibilityProperty: true}))
  .filter(r => { const img = r.querySelector('img.plot-img');
    return (img && img.checkVisibility() && img.naturalWidth > 0) || r.querySelector('.plot-container .main-svg'); })
  .length"""
#: the charts of a page written by nbconvert: the PNGs of the plotly outputs, on screen
PAGE_CHARTS_JS = """() => [...document.querySelectorAll('.jp-OutputArea-output img')]
  .filter(i => i.src.startsWith('data:image/png') && i.naturalWidth > 0 && i.checkVisibility()).length"""

#: a live widget drawn on the page for each static view, as a widget manager with saved state draws it
LIVE_ON_PAGE_JS = """() => { for (const v of document.querySelectorAll('.svc-static')) {
  const id = [...v.classList].find(c => c.startsWith('svc-static-')).slice('svc-static-'.length);
  const w = document.createElement('div'); w.className = `svc-fake-live svc-live-${id}`; w.textContent = 'live';
  v.closest('.jp-Cell').prepend(w); } }"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    names = sorted({name for _ui, name in CASES})
    with sandbox_lab(tmp_path_factory, notebooks=names, seed="demo", demo_limit=CORPUS,
                     prepare=lambda sandbox, _root: wait_vector_seeded(sandbox, CORPUS)) as lab:
        yield lab


def saved_with_pngs(lab: Lab, page: Any, name: str, timeout: float = 60.0) -> dict[str, Any]:
    """Save the open notebook until every plotly output in its file carries the PNG the front end
    wrote after drawing it; the saved notebook."""
    deadline = time.monotonic() + timeout
    while True:
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        time.sleep(1.0)
        nb = json.loads((lab.root / name).read_text(encoding="utf-8"))
        plotly = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]
                  if PLOTLY_MIME in o.get("data", {})]
        missing = [o["data"].get("text/plain") for o in plotly if "image/png" not in o["data"]]
        if not missing:
            return nb
        assert time.monotonic() < deadline, f"{name}: saved with plotly outputs that have no PNG: {missing}"


def nbconvert_page(browser: Any, notebook: Path) -> Any:
    """Plain ``jupyter nbconvert --to html`` of ``notebook``, opened with every request that leaves the
    machine aborted (its CDN scripts: require.js, MathJax)."""
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(notebook)],
                   check=True, capture_output=True, timeout=120)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    aborted: list[str] = []

    def route(r: Any) -> None:
        url = r.request.url
        if url.startswith(("file:", "data:", "blob:", "http://127.0.0.1", "http://localhost")):
            r.continue_()
        else:
            aborted.append(url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.svc_errors = []
    page.on("pageerror", lambda e: page.svc_errors.append(str(e)))
    page.goto(f"file://{notebook.with_suffix('.html')}")
    page.svc_aborted = aborted
    return page


@pytest.mark.parametrize(("ui", "name"), CASES)
def test_a_saved_notebook_shows_every_chart_reopened_and_through_nbconvert(browser, lab, screenshots, ui, name):
    page = run_notebook(browser, lab, name, height=TALL, ui=ui)
    # the live widgets' charts, once the count holds for a few seconds (a profiler still redraws)
    live, steady = -1, 0
    deadline = time.monotonic() + 60
    while steady < 3 and time.monotonic() < deadline:
        now = page.evaluate(LIVE_CHARTS_JS)
        steady = steady + 1 if now == live else 0
        live = now
        time.sleep(1.0)
    assert live > 0, f"{name}: no chart drawn by the live widgets"
    saved = saved_with_pngs(lab, page, name)
    page.close()

    page = reopen(browser, lab, name, ui)
    with contextlib.suppress(PlaywrightTimeout):  # the count below says what is missing
        page.wait_for_function(f"() => ({REOPENED_CHARTS_JS})() >= {live}", polling=500, timeout=60_000)
    reopened = page.evaluate(REOPENED_CHARTS_JS)
    # the live widgets cannot be drawn with no kernel: their static views stand in their place, not
    # ipywidgets' "Loading widget..." or "Error displaying widget: model not found"
    stuck = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')].filter(o => o.checkVisibility()"
                          " && /Loading widget|Error displaying widget/.test(o.innerText)).map(o => o.innerText.trim())")
    page.screenshot(path=str(screenshots / f"saved_{Path(name).stem}_{ui}.png"), full_page=True, timeout=60_000)
    page.close()
    assert reopened == live, f"{name} reopened in {ui}: {reopened} charts drawn, the live widgets drew {live}"
    assert not stuck, f"{name} reopened in {ui}: the live widgets' outputs show {stuck}"

    # the saved notebook through plain nbconvert, offline: the PNG of every chart
    out = lab.root / f"nbconvert_{ui}" / name
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(saved), encoding="utf-8")
    html = nbconvert_page(browser, out)
    try:
        shown = html.evaluate(PAGE_CHARTS_JS)
        assert shown == live, f"{name} through nbconvert --to html, offline: {shown} charts, live {live}"
        assert not html.svc_errors, html.svc_errors
        # online, nbconvert's widget manager would draw a widget from saved state (no kernel, no plotly
        # renderer) with its svc-live class: the page keeps the static view and its charts instead
        html.evaluate(LIVE_ON_PAGE_JS)
        assert html.evaluate(PAGE_CHARTS_JS) == live
        assert html.evaluate("() => [...document.querySelectorAll('.svc-static')].every(v => v.checkVisibility())"
                             " && ![...document.querySelectorAll('.svc-fake-live')].some(w => w.checkVisibility())")
    finally:
        html.context.close()

