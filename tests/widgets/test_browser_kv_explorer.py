"""Real browser: the kv_explorer notebook in JupyterLab and Notebook 7 (Debian's chromium through
playwright). What only a browser shows: no tab of the explorer draws a scrollbar where nothing
overflows. Screenshots of the tabs: test-output/screenshots/kv_explorer_*.png."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.lab_harness import Lab, run_notebook, sandbox_lab, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: every element under ``root`` that would draw a scrollbar for nothing: ``overflow: scroll`` with
#: nothing overflowing, or ``overflow: auto`` (every ipywidgets box has it) around content wider or
#: taller than the box by no more than a few pixels (a child of width 100% plus its margins). Measured
#: from the layout, not from drawn scrollbars: headless chromium draws them as overlays, taking no room.
IDLE_SCROLLBARS_JS = """(root) => {
  const idle = [];
  const scrolls = (o) => o === 'auto' || o === 'scroll';
  const name = (el) => [...el.classList].filter(k => k.startsWith('svc') || k.startsWith('widget-')).join('.');
  for (const el of [root, ...root.querySelectorAll('*')]) {
    if (!el.getClientRects().length || el.tagName === 'SELECT' || el.tagName === 'OPTION') continue;
    const cs = getComputedStyle(el);
    const what = `${name(el)} holding [${[...el.children].map(name).join(' | ')}]`;
    const dy = el.scrollHeight - el.clientHeight, dx = el.scrollWidth - el.clientWidth;
    if (cs.overflowY === 'scroll' && dy <= 0) idle.push(`vertical scrollbar, nothing overflows: ${what}`);
    if (cs.overflowX === 'scroll' && dx <= 0) idle.push(`horizontal scrollbar, nothing overflows: ${what}`);
    if (scrolls(cs.overflowY) && dy > 0 && dy <= SLACK) idle.push(`vertical scrollbar for ${dy} px: ${what}`);
    if (scrolls(cs.overflowX) && dx > 0 && dx <= SLACK) idle.push(`horizontal scrollbar for ${dx} px: ${what}`);
  }
  return idle;
}""".replace("SLACK", "8")


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with sandbox_lab(tmp_path_factory, notebooks=["kv_explorer.ipynb"], areas=["kv", "account"], seed="demo") as lab:
        yield lab


def test_no_tab_draws_a_scrollbar_where_nothing_overflows(browser, lab: Lab, screenshots, ui) -> None:
    page = run_notebook(browser, lab, "kv_explorer.ipynb", height=1300, ui=ui)
    explorer = page.locator(".svc-kv-explorer").first
    explorer.wait_for(state="visible", timeout=30_000)
    explorer.locator(".svc-key-list select option").first.wait_for(timeout=30_000)
    explorer.scroll_into_view_if_needed()
    tabs = explorer.locator(".lm-TabBar-tab, .p-TabBar-tab")
    found: dict[str, list[str]] = {}
    for i in range(tabs.count()):
        title = tabs.nth(i).inner_text()
        tabs.nth(i).click()
        page.wait_for_timeout(300)
        found[title] = explorer.evaluate(f"(e) => ({IDLE_SCROLLBARS_JS})(e.closest('.jp-Cell'))")
        if title in ("Key tree", "Pub/Sub", "Bulk"):
            explorer.screenshot(path=shot(screenshots, f"kv_explorer_{title.lower().replace(' ', '_').replace('/', '')}",
                                          ui))
    explorer.locator(".lm-TabBar-tab, .p-TabBar-tab").first.click()
    explorer.screenshot(path=shot(screenshots, "kv_explorer_browse", ui))
    assert {title: idle for title, idle in found.items() if idle} == {}
    page.close()
