"""The exported pages of ``svckit demo --execute`` read offline, as a handout is: chromium with the
network off opens the dashboard, timeline, playground and analysis pages, and each draws its charts
and tables from what the page holds (no CDN, no kernel). Screenshots: test-output/screenshots/."""

from __future__ import annotations

import pytest

from tests.lab_harness import CHROMIUM, CHROMIUM_ARGS, NEXT_PAINT_JS, full_page_screenshot, require_chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: page -> (charts at least, tables at least) drawn on it
PAGES = {"account_dashboard": (1, 6), "workflow_timeline": (2, 1), "vector_playground": (3, 3),
         "kv_analysis": (3, 3)}

DRAWN = """() => {
  const charts = [...document.querySelectorAll('.svc-s-chart')];
  const shown = charts.filter(c => c.offsetParent !== null);
  return {charts: charts.length, shown: shown.length, drawn: shown.filter(c => c.querySelector('.main-svg')).length,
          tables: [...document.querySelectorAll('.svc-static table')].filter(t => t.offsetParent !== null).length};
}"""


@pytest.fixture(scope="module")
def offline_page(executed):
    from playwright.sync_api import sync_playwright

    require_chromium()
    folder = executed.folder
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def open_(name: str):
            # a context of its own per page (a test ends by closing it): nothing a page before it
            # left behind (a renderer that stopped producing frames during a screenshot) reaches it
            page = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000}).new_page()
            page.svc_errors = []
            page.on("pageerror", lambda e: page.svc_errors.append(str(e)))
            page.goto(f"file://{folder / (name + '.html')}")
            return page

        yield open_
        browser.close()


@pytest.mark.parametrize("name", list(PAGES))
def test_an_exported_page_draws_its_charts_and_tables_offline(name, offline_page, screenshots):
    page = offline_page(name)
    # scroll through it as a reader does: charts are drawn as they come near the screen
    height = page.evaluate("document.body.scrollHeight")
    for y in range(0, height + 800, 800):
        page.evaluate(f"window.scrollTo(0, {y})")
        page.evaluate(NEXT_PAINT_JS)  # the page's observers saw the scroll and drew what came near
    charts, tables = PAGES[name]
    # polled on a timer, not on animation frames (which a loaded headless chromium may not produce)
    page.wait_for_function(f"() => ({DRAWN})().drawn >= {charts}", polling=250, timeout=30_000)
    seen = page.evaluate(DRAWN)
    assert seen["drawn"] == seen["shown"], seen  # every chart on screen is drawn
    assert seen["tables"] >= tables, seen
    assert not page.svc_errors, page.svc_errors
    page.evaluate("window.scrollTo(0, 0)")
    full_page_screenshot(page, str(screenshots / f"offline_{name}.png"))
    page.context.close()


def test_a_tab_of_a_static_view_switches_with_no_script_and_draws_its_chart(offline_page):
    page = offline_page("vector_playground")
    label = page.locator(".svc-s-tabs > label", has_text="Compare modes").first
    label.scroll_into_view_if_needed()
    label.click()
    panel_chart = page.locator(".svc-s-tabs .svc-s-chart.svckit-rank-chart").first
    panel_chart.wait_for(state="visible", timeout=10_000)
    page.wait_for_function("() => document.querySelector('.svc-s-chart.svckit-rank-chart .main-svg')",
                           polling=250, timeout=20_000)
    page.context.close()
