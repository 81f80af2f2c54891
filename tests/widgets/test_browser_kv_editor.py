"""Real browser: the KV explorer's editors in JupyterLab and Notebook 7 (Debian's chromium through
playwright). A JSON document is a tree whose nodes open and close in the page; a leaf is set from the
path picker and the tree redraws with the new value; a hash field is edited from the element editor;
the console's command box completes a name from the datalist and shows the command's help; the Slow
log tab shows a table. The notebook is the test's own, over a sandbox of its own.
Screenshots: test-output/screenshots/kv_editor_*.png."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab_harness import Lab, run_notebook, sandbox_lab, shot, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "kv_editor.ipynb"


def prepare(sandbox, root: Path) -> None:
    write_notebook(root / NOTEBOOK, (
        "from svckit.demo import notebook_clients\n"
        "from svckit.widgets import KVExplorer\n"
        "c = notebook_clients()\n"
        "c.kv.json_set('ed:doc', '$', {'name': 'Lamp', 'size': {'w': 10, 'h': 20}, 'tags': ['home']})\n"
        "c.kv.hset('ed:user', mapping={'name': 'Ada', 'city': 'London'})\n"
        "doc = KVExplorer(c.kv, pattern='ed:doc')\n"
        "doc"), "user = KVExplorer(c.kv, pattern='ed:user')\nuser")


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with sandbox_lab(tmp_path_factory, notebooks=[], prepare=prepare, areas=["kv"]) as lab:
        yield lab


def test_the_json_tree_the_element_editor_the_console_help_and_the_slow_log(browser, lab, screenshots, ui):
    page = run_notebook(browser, lab, NOTEBOOK, height=1600, ui=ui)
    doc, user = page.locator(".svc-kv-explorer").nth(0), page.locator(".svc-kv-explorer").nth(1)
    editor = doc.locator(".svc-json-editor")
    editor.wait_for(state="visible", timeout=30_000)
    tree = editor.locator(".svc-json-tree")
    size = tree.locator("details", has=page.locator("summary", has_text='"size"')).first
    assert size.get_attribute("open") is not None and size.locator("code").first.is_visible()
    size.locator("summary").first.click()  # closes in the page, no kernel involved
    assert size.get_attribute("open") is None and not size.locator("code").first.is_visible()
    size.locator("summary").first.click()
    # set a leaf from the path picker: the command is said first, then the tree shows the new value
    editor.locator("select").first.select_option("$.size.w")
    value = editor.locator("textarea").first
    page.wait_for_function("() => document.querySelector('.svc-json-editor textarea').value === '10'",
                           timeout=30_000)
    value.fill("12")
    page.wait_for_function("() => document.querySelector('.svc-json-editor').textContent"
                           ".includes('JSON.SET ed:doc $.size.w 12')", timeout=30_000)
    editor.get_by_role("button", name="Set").click()
    page.wait_for_function("() => [...document.querySelectorAll('.svc-json-tree code')]"
                           ".some(c => c.textContent === '12')", timeout=30_000)
    doc.scroll_into_view_if_needed()
    doc.screenshot(path=shot(screenshots, "kv_editor_json_tree", ui))

    # a hash field, edited in the element editor
    elements = user.locator(".svc-element-editor")
    elements.wait_for(state="visible", timeout=30_000)
    elements.locator("select").first.select_option("city")
    page.wait_for_function("() => document.querySelectorAll('.svc-element-editor')[1]"
                           ".querySelector('textarea').value === 'London'", timeout=30_000)
    elements.locator("textarea").first.fill("Paris")
    page.wait_for_function("() => document.querySelectorAll('.svc-element-editor')[1].textContent"
                           ".includes('HSET ed:user city Paris')", timeout=30_000)
    elements.get_by_role("button", name="Save").click()
    page.wait_for_function("() => document.querySelectorAll('.svc-kv-explorer .svc-value')[1].textContent"
                           ".includes('Paris')", timeout=30_000)
    user.scroll_into_view_if_needed()
    user.screenshot(path=shot(screenshots, "kv_editor_elements", ui))

    # the console: the command box completes from the service's COMMAND DOCS, and shows the help
    user.get_by_role("tab", name="Console").click()
    box = user.locator(".widget-combobox input, input[list]").first
    box.wait_for(state="visible", timeout=30_000)
    box.press_sequentially("hs")
    page.wait_for_function("() => { const i = [...document.querySelectorAll('input[list]')].pop();"
                           " const l = i && document.getElementById(i.getAttribute('list'));"
                           " return l && [...l.options].some(o => o.value === 'HSET'); }", timeout=30_000)
    box.fill("HSET")
    box.dispatch_event("change")
    page.wait_for_function("() => { const h = document.querySelectorAll('.svc-command-help');"
                           " return h.length && h[h.length - 1].textContent"
                           ".includes('HSET key field value [field value ...]'); }", timeout=30_000)
    user.screenshot(path=shot(screenshots, "kv_editor_console_help", ui))

    # the slow log tab reads SLOWLOG GET when opened
    user.get_by_role("tab", name="Slow log").click()
    page.wait_for_function("() => [...document.querySelectorAll('.svc-slowlog')].some(s =>"
                           " s.textContent.includes('newest first') || s.textContent.includes('slow log is empty'))",
                           timeout=30_000)
    user.screenshot(path=shot(screenshots, "kv_editor_slowlog", ui))
