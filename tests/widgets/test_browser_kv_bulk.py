"""Real browser: the kv_bulk notebook in JupyterLab (Debian's chromium through playwright): the KV
explorer's Bulk tab runs a dry run from its button, and the value viewer pages a long hash through a
formatter. Screenshots: test-output/screenshots/kv_bulk_*.png."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.lab_harness import Lab, run_notebook, sandbox_lab, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with sandbox_lab(tmp_path_factory, notebooks=["kv_bulk.ipynb"], areas=["kv", "account"], seed="demo") as lab:
        yield lab


def test_bulk_tab_and_value_formatter(browser, lab: Lab, screenshots, ui) -> None:
    page = run_notebook(browser, lab, "kv_bulk.ipynb", height=1300, ui=ui)
    explorers = page.locator(".svc-kv-explorer")
    bulk = explorers.nth(0)
    bulk.wait_for(state="visible", timeout=30_000)
    # the notebook's own dry run is shown, with its sample table
    result = bulk.locator(".svc-bulk-result")
    result.wait_for(timeout=30_000)
    assert "200 keys matching nb:user:*" in result.inner_text()
    assert bulk.locator(".svc-bulk-sample table tbody tr").count() == 20
    # a click on "Dry run" runs it again in the kernel's thread and shows it. The notebook's own result
    # says the same: it is blanked first, so that what is waited for is the new one (a "Run…" clicked
    # while the new dry run still counts is rightly refused, "already in progress")
    result.evaluate("r => { r.querySelector('.widget-html-content').innerHTML = ''; }")
    bulk.get_by_role("button", name="Dry run").click()
    page.wait_for_function("() => { const r = document.querySelector('.svc-kv-explorer .svc-bulk-result');"
                           " return r && r.textContent.includes('200 keys matching') &&"
                           " r.textContent.includes('Run… is enabled'); }", timeout=30_000)
    # Run asks first: the confirmation names the count, nothing runs until it is confirmed
    bulk.get_by_role("button", name="Run…").click()
    confirm = bulk.locator(".svc-bulk .svc-confirm")
    confirm.wait_for(state="visible", timeout=20_000)
    assert "Set a TTL of 3,600 s on 200 keys matching nb:user:*" in confirm.inner_text()
    bulk.scroll_into_view_if_needed()
    bulk.screenshot(path=shot(screenshots, "kv_bulk_dry_run", ui))
    confirm.get_by_role("button", name="Cancel").click()

    viewer = explorers.nth(1)
    viewer.scroll_into_view_if_needed()
    value = viewer.locator(".svc-value")
    page.wait_for_function("() => { const v = document.querySelectorAll('.svc-kv-explorer .svc-value')[1];"
                           " return v && v.textContent.includes('\"id\"'); }", timeout=30_000)
    assert "page 2" in viewer.inner_text()
    # switch the formatter in the browser: gzip does not fit, and the viewer says so
    viewer.locator(".svc-format select").select_option("gzip")
    page.wait_for_function("() => { const v = document.querySelectorAll('.svc-kv-explorer .svc-value')[1];"
                           " return v && v.textContent.includes('not valid gzip'); }", timeout=30_000)
    viewer.locator(".svc-format select").select_option("base64")
    page.wait_for_function("() => { const v = document.querySelectorAll('.svc-kv-explorer .svc-value')[1];"
                           " return v && v.textContent.includes('\"ok\"') && !v.textContent.includes('not valid'); }",
                           timeout=30_000)
    assert "rows shown of 600" in viewer.locator(".svc-detail-header").inner_text()
    assert value.locator("table tbody tr").count() >= 40
    viewer.screenshot(path=shot(screenshots, "kv_bulk_value_formatter", ui))
    page.close()
