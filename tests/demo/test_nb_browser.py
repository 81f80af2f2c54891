"""First impressions, in a real browser: every notebook in notebooks/ opened fresh, outside
``svckit demo``, in JupyterLab 4 or Notebook 7 (the tour in both), and run with "Run All Cells".

"Fresh" is what a new user gets from ``jupyter lab`` in a clone: the kernels have no SVC_* settings
(nor ``svckit demo``'s kernel environment), so each notebook's first cell starts the kernel's own
sandbox. What the reader sees must read clean: no stderr and no warning in any output, the sandbox's
one-line status, tables whose durations and timestamps read as a person writes them, and every
widget drawn. A screenshot of each notebook in its front end goes to test-output/screenshots/
(``fresh_<notebook>.png``, ``fresh_<notebook>_notebook.png``). The notebooks with an explorer or a
dashboard are then used: type a pattern, click a key, refresh.

Never ``playwright install``: the browser is /usr/bin/chromium.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from svckit import demo
from tests.lab_harness import (
    CELLS_JS,
    CHARTS_DRAWN_JS,
    TALL,
    Lab,
    notebook_screenshot,
    require_chromium,
    run_notebook,
    serve_lab,
    shot,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = [path.name for path in demo.find_notebooks()]
#: every output of every code cell of the open notebook, as saved (nbformat JSON)
OUTPUTS_JS = (f"() => {CELLS_JS}.map(c => {{ const o = c.model.outputs, out = [];"
              " for (let i = 0; i < o.length; i++) out.push(o.get(i).toJSON()); return out; })")
#: how Python's warnings and pandas' raw reprs read, wherever they land
WARNING = re.compile(r"\b\w*Warning\b|\bwarn\(")
RAW_TIMEDELTA = re.compile(r"\d+ days? \d\d:\d\d:\d\d")


@pytest.fixture(scope="module")
def fresh_lab(tmp_path_factory) -> Iterator[Lab]:
    require_chromium()
    root = tmp_path_factory.mktemp("fresh")
    demo.copy_notebooks(root)
    with serve_lab(root, {}, plain=True) as lab:
        yield lab


def unwelcome(cells: list[list[dict[str, Any]]]) -> list[str]:
    """What a reader should never see in a notebook that works: stderr, errors, warnings."""
    found = []
    for n, outputs in enumerate(cells, start=1):
        for out in outputs:
            kind = out["output_type"]
            if kind == "stream" and out["name"] == "stderr":
                found.append(f"code cell {n}: stderr: {''.join(out['text'])[:500]}")
            elif kind == "error":
                found.append(f"code cell {n}: {out['ename']}: {out['evalue']}")
            else:
                text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
                if WARNING.search(text):
                    found.append(f"code cell {n}: a warning: {text[:500]}")
    return found


#: the tour in both front ends, every other notebook in one of them, in turn: the widgets of each
#: notebook are driven in both by tests/widgets/test_browser_*.py; what this test adds (a fresh
#: kernel's own sandbox, outputs that read clean) is the kernel's, the same in either front end
FRESH = [("lab", NOTEBOOKS[0]), ("notebook", NOTEBOOKS[0])] + [
    (("lab", "notebook")[i % 2], name) for i, name in enumerate(NOTEBOOKS[1:])]


@pytest.mark.parametrize(("ui", "name"), FRESH, ids=[f"{ui}-{name}" for ui, name in FRESH])
def test_a_notebook_opened_fresh_reads_clean(browser, fresh_lab, screenshots, ui, name):
    page = run_notebook(browser, fresh_lab, name, ui=ui, height=TALL)  # the whole notebook in one picture
    assert unwelcome(page.evaluate(OUTPUTS_JS)) == []
    # every chart with a figure has drawn it
    wait_until(page, CHARTS_DRAWN_JS, f"{name}: charts drawn", 60)
    # the first cell's status line: where the sandbox runs, what it holds, how to stop it
    status = page.locator(".svc-sandbox-status").first.inner_text()
    assert re.search(r"Local sandbox at http://127\.0\.0\.1:\d+ with demo data: [\d,]+ keys", status), status
    assert "stop_local_sandbox()" in status
    # tables read as a person writes: durations in ms/s, timestamps in one zone named in the header
    tables = " ".join(page.locator(".jp-OutputArea-output table").all_inner_texts())
    assert not RAW_TIMEDELTA.search(tables) and "+00:00" not in tables
    notebook_screenshot(page, shot(screenshots, f"fresh_{Path(name).stem}", ui))
    USED.get(name, lambda *_: None)(page, screenshots, ui)
    page.close()


# -- then used, as a reader would ----------------------------------------------------------------
def use_kv_explorer(page: Any, screenshots: Path, ui: str) -> None:
    explorer = page.locator(".svc-kv-explorer").first
    explorer.wait_for(state="visible", timeout=30_000)
    options = explorer.locator(".svc-key-list select option")
    options.first.wait_for(timeout=30_000)
    assert "demo:" in options.first.inner_text()
    # type a pattern: the key list changes
    box = explorer.locator(".svc-pattern input")
    box.fill("demo:user:*")
    box.press("Enter")
    page.wait_for_function(
        "() => { const o = [...document.querySelector('.svc-kv-explorer .svc-key-list select').options];"
        " return o.length > 0 && o.every(x => x.textContent.startsWith('demo:user:')); }", timeout=20_000)
    # click a key: its value shows
    label = options.nth(2).inner_text()
    key = label.split()[0]
    explorer.locator(".svc-key-list select").select_option(label=label)
    page.wait_for_function(
        "(key) => { const h = document.querySelector('.svc-kv-explorer .svc-detail-header');"
        " return h && h.textContent.includes(key); }", arg=key, timeout=20_000)
    page.wait_for_function(
        "() => { const v = document.querySelector('.svc-kv-explorer .svc-value table');"
        " return v && v.textContent.includes('plan') && v.textContent.includes('visits'); }", timeout=20_000)
    assert "matching" in explorer.locator(".svc-scan-status").inner_text()
    explorer.scroll_into_view_if_needed()
    explorer.screenshot(path=shot(screenshots, "kv_explorer", ui))


def use_account_dashboard(page: Any, screenshots: Path, ui: str) -> None:
    # the first page first: a card per resource of the account, grouped by kind
    home = page.locator(".svc-account-dashboard").first
    home.locator(".svc-account-overview").wait_for(state="visible", timeout=30_000)
    page.wait_for_function("() => document.querySelectorAll('.svc-account-dashboard .svc-resource').length >= 8",
                           timeout=30_000)
    assert "Key-value databases" in home.inner_text() and "Vector indexes" in home.inner_text()
    # then the queue account's page (the second dashboard, opened on it)
    dash = page.locator(".svc-account-dashboard").nth(1)
    dash.wait_for(state="visible", timeout=30_000)
    assert "Queue account" in dash.locator(".svc-account-header").inner_text()
    # the plotly chart rendered (bars drawn)
    page.wait_for_function("() => document.querySelectorAll("
                           "'.svc-account-dashboard .js-plotly-plot .barlayer .point').length >= 20", timeout=30_000)
    assert dash.locator(".svc-card").count() == 7  # the usage, then six groups of limits
    usage = dash.locator(".svc-account-usage").inner_text()
    assert "Requests today (UTC)" in usage and "Schedules" in usage and "URL groups" in usage
    # today's requests, the DLQ, and (given the queue client) schedules, queues and URL groups
    assert dash.locator(".svc-account-usage .svc-meter").count() == 5
    token_text = dash.locator(".svc-token").inner_text()
    assert token_text.startswith("***") and len(token_text) <= 7
    # refresh reacts
    msg = dash.locator(".svc-queue-account .svc-message")
    before = msg.inner_text()
    dash.get_by_role("button", name="Refresh").click()
    page.wait_for_function(
        "(before) => { const m = document.querySelectorAll('.svc-account-dashboard')[1]"
        ".querySelector('.svc-queue-account .svc-message');"
        " return m && m.textContent.includes('Loaded') && m.textContent !== before; }", arg=before, timeout=20_000)
    dash.scroll_into_view_if_needed()
    dash.screenshot(path=shot(screenshots, "account_dashboard", ui))


def use_deliveries(page: Any, screenshots: Path, ui: str) -> None:
    view = page.locator(".svc-deliveries").first
    view.wait_for(state="visible", timeout=30_000)
    # a lane per message: the chart drew a marker per state each of the four went through
    page.wait_for_function("() => document.querySelectorAll('.svc-deliveries .js-plotly-plot .scatterlayer"
                           " .point').length >= 8", timeout=30_000)
    table = view.locator(".svc-deliveries-table")
    assert "503 503 200" in table.inner_text() and "500 500" in table.inner_text()
    assert "1 in the DLQ" in view.inner_text()
    # Follow starts reading live, and the same button stops it
    follow = view.get_by_role("button", name="Follow")
    follow.click()
    view.get_by_role("button", name="Stop").wait_for(timeout=20_000)
    view.get_by_role("button", name="Stop").click()
    view.get_by_role("button", name="Follow").wait_for(timeout=20_000)
    view.scroll_into_view_if_needed()
    view.screenshot(path=shot(screenshots, "deliveries", ui))


def use_tour(page: Any, screenshots: Path, ui: str) -> None:
    page.locator(".svc-kv-explorer").first.wait_for(state="visible", timeout=30_000)
    page.locator(".svc-account-dashboard .js-plotly-plot").first.wait_for(timeout=30_000)
    page.locator(".svc-kv-explorer").first.screenshot(path=shot(screenshots, "tour_kv_explorer", ui))


USED: dict[str, Callable[[Any, Path, str], None]] = {
    "kv_explorer.ipynb": use_kv_explorer, "account_dashboard.ipynb": use_account_dashboard, "00_tour.ipynb": use_tour,
    "queue_deliveries.ipynb": use_deliveries,
}
