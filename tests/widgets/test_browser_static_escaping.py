"""Real browser: an exported notebook whose data holds a key named ``<!--<script>x`` shows every cell.

A keyspace report over that key (its treemap's JSON carries the name) is the first of twelve cells of
a notebook exported with svckit's offline exporter, as ``svckit demo --execute`` exports; chromium,
offline, opens the page and finds all twelve cells and each one's output, and the chart drawn from
its escaped JSON. Before the charts' JSON was escaped, the name left the chart's ``<script>`` element
open and the browser swallowed the cells after it (half of an exported timeline lost). No script of
the page's data may run either."""

from __future__ import annotations

import uuid

import nbformat
import pytest

from svckit.export import OfflineHTMLExporter
from svckit.widgets import KeyspaceReport
from tests.lab_harness import CHROMIUM, CHROMIUM_ARGS, require_chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = 12
#: what the page shows: its cells, and the text of every output
SHOWN = """() => ({cells: document.querySelectorAll('.jp-Cell').length,
  outputs: [...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent.trim()),
  charts: document.querySelectorAll('.svc-s-chart').length, ran: window.__svc_hostile_ran || 0})"""


@pytest.fixture
def hostile_key(kv):
    key = f"<!--<script>x{uuid.uuid4().hex[:6]}"  # a prefix of its own: the report's first level
    kv.set(key + ":1", "<script>window.__svc_hostile_ran = 1</script>")
    yield key
    kv.delete(key + ":1")


def test_an_exported_page_shows_every_cell_after_a_hostile_key_name(kv, hostile_key, tmp_path):
    report = KeyspaceReport(kv, pattern="<!--*", complete=True)
    report.run(background=False)
    assert hostile_key in set(report.report.by_prefix["prefix"])
    cells = [nbformat.v4.new_code_cell("report", outputs=[nbformat.from_dict(o) for o in report.static_outputs()])]
    cells += [nbformat.v4.new_code_cell(f"print('cell {i}')", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=f"cell {i} ran\n")]) for i in range(1, CELLS)]
    body, _ = OfflineHTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=cells))
    page_file = tmp_path / "hostile.html"
    page_file.write_text(body, encoding="utf-8")

    from playwright.sync_api import sync_playwright

    require_chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(offline=True).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"file://{page_file}")
            # the treemap drawn from its escaped JSON by the page's plotly.js (polled on a timer)
            page.wait_for_function("() => document.querySelector('.svc-s-chart .main-svg')", polling=250,
                                   timeout=30_000)
            shown = page.evaluate(SHOWN)
        finally:
            browser.close()
    assert shown["cells"] == CELLS, shown
    assert [o for o in shown["outputs"] if o.startswith("cell ")] == [f"cell {i} ran" for i in range(1, CELLS)]
    assert shown["charts"] >= 1 and shown["ran"] == 0 and not errors, (shown, errors)
