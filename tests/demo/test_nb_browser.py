"""Real browser: JupyterLab on loopback, Debian's chromium driven by playwright, every demo notebook
run with "Run All Cells"; the widgets must render and react. Screenshots go to
test-output/screenshots/.

Never ``playwright install``: the browser is /usr/bin/chromium.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svckit import demo
from tests.lab_harness import Lab, full_page_screenshot, run_notebook, sandbox_lab, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with sandbox_lab(tmp_path_factory, seed="demo") as lab:
        yield lab


def test_kv_explorer_notebook(browser, lab, screenshots, ui):
    page = run_notebook(browser, lab, "kv_explorer.ipynb", ui=ui)
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
    page.close()


def test_account_dashboard_notebook(browser, lab, screenshots, ui):
    page = run_notebook(browser, lab, "account_dashboard.ipynb", height=1900)  # the whole widget in view
    dash = page.locator(".svc-account-dashboard").first
    dash.wait_for(state="visible", timeout=30_000)
    dash.scroll_into_view_if_needed()
    full_page_screenshot(page, shot(screenshots, "account_dashboard_page", ui))
    assert "Queue account" in dash.locator(".svc-account-header").inner_text()
    # the plotly chart rendered (bars drawn)
    page.wait_for_function("() => document.querySelectorAll("
                           "'.svc-account-dashboard .js-plotly-plot .barlayer .point').length >= 20", timeout=30_000)
    assert dash.locator(".svc-card").count() == 6
    token_text = dash.locator(".svc-token").inner_text()
    assert token_text.startswith("***") and len(token_text) <= 7
    # refresh reacts
    msg = dash.locator(".svc-message")
    before = msg.inner_text()
    dash.get_by_role("button", name="Refresh").click()
    page.wait_for_function(
        "(before) => { const m = document.querySelector('.svc-account-dashboard .svc-message');"
        " return m && m.textContent.includes('Loaded') && m.textContent !== before; }", arg=before, timeout=20_000)
    dash.scroll_into_view_if_needed()
    dash.screenshot(path=shot(screenshots, "account_dashboard", ui))
    page.close()


def test_tour_notebook(browser, lab, screenshots, ui):
    page = run_notebook(browser, lab, "00_tour.ipynb", ui=ui)
    page.locator(".svc-kv-explorer").first.wait_for(state="visible", timeout=30_000)
    page.locator(".svc-account-dashboard .js-plotly-plot").first.wait_for(timeout=30_000)
    page.locator(".svc-kv-explorer").first.screenshot(path=shot(screenshots, "tour_kv_explorer", ui))
    page.close()


def test_copied_notebooks_are_the_packaged_ones(lab):
    assert sorted(p.name for p in lab.root.glob("*.ipynb")) == sorted(p.name for p in demo.find_notebooks())
