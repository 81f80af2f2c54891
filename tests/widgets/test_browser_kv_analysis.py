"""Real browser: the keyspace analysis notebook in JupyterLab (Debian's chromium through playwright):
the report widget's treemap and TTL histogram, then the live profiler's panels after the traffic.

Reuses the JupyterLab harness of tests/lab_harness.py. The lab's sandbox has only the key-value area,
on a real redis-server (MEMORY USAGE: the treemap is sized by memory). Screenshots:
test-output/screenshots/kv_analysis_report.png and kv_analysis_profiler.png.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.lab_harness import Lab, painted, run_notebook, sandbox_lab, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with sandbox_lab(tmp_path_factory, notebooks=["kv_analysis.ipynb"], areas=["kv"], backend="redis") as lab:
        yield lab


def test_kv_analysis_notebook(browser, lab, screenshots, ui):
    page = run_notebook(browser, lab, "kv_analysis.ipynb", height=1400, ui=ui)
    report = page.locator(".svc-keyspace-report").first
    report.wait_for(state="visible", timeout=30_000)
    # the report the notebook ran: its summary line, a treemap tile per prefix, one bar per TTL bucket
    summary = report.locator(".svc-msg.info").first.inner_text()
    assert "Sampled pass: 1,000 of" in summary and "± = 95% interval" in summary
    page.wait_for_function("() => document.querySelectorAll('.svc-keyspace-report .treemaplayer .slice').length >= 6",
                           timeout=30_000)
    page.wait_for_function("() => document.querySelectorAll('.svc-keyspace-report .barlayer .point').length === 6",
                           timeout=30_000)
    tiles = report.locator(".treemaplayer").first.text_content() or ""
    assert all(name in tiles for name in ("user", "session", "cart", "cache"))
    assert "memory ±" in report.locator(".widget-tab").inner_text()
    report.scroll_into_view_if_needed()
    painted(page, ".svc-keyspace-report")  # plotly's transition over before the picture
    report.screenshot(path=shot(screenshots, "kv_analysis_report", ui))

    profiler = page.locator(".svc-monitor-profiler").first
    profiler.wait_for(state="visible", timeout=30_000)
    # stopped after the traffic: the status line, hot keys in the table and three bar panels drawn
    status = profiler.locator(".svc-msg.info").first.inner_text()
    assert "commands/s" in status and "stopped" in status
    assert "shop:product:" in profiler.locator(".svc-card").inner_text()
    page.wait_for_function("() => document.querySelectorAll('.svc-monitor-profiler .barlayer .point').length >= 6",
                           timeout=30_000)
    profiler.scroll_into_view_if_needed()
    painted(page, ".svc-monitor-profiler")
    profiler.screenshot(path=shot(screenshots, "kv_analysis_profiler", ui))
