"""Real browser: the account dashboard as a person meets it in JupyterLab and Notebook 7 (the harness
of tests/lab_harness.py), on a sandbox of its own where the test published messages and made schedules
through the queue client: the usage first, as bars with today's counts against the plan's limits; plans
by their display names; each unit once, in the value (the chart's rows are labels alone); the current
plan named and not offered. It only looks (the plan changes are tests/account/test_dashboard_view.py's),
so JupyterLab and Notebook 7 see the same account.
Screenshot: test-output/screenshots/account_dashboard_usage.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from svckit.sandbox.plans import PLAN_PRESETS
from tests.lab_harness import Lab, painted, run_notebook, sandbox_lab, shot, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "dashboard_usage.ipynb"
PUBLISHED = 7
SCHEDULES = 3


def prepare(sandbox, root: Path) -> None:
    """PUBLISHED messages accepted today (delayed an hour: none delivered while the test runs) and
    SCHEDULES schedules, through the queue client; then the notebook that shows the dashboard."""
    with sandbox.connect() as c:
        for n in range(PUBLISHED):
            c.queue.publish(f"m{n}", url="http://127.0.0.1:9/never", delay="1h")
        for n in range(SCHEDULES):
            c.queue.create_schedule("tick", destination="http://127.0.0.1:9/never", cron=f"0 0 {n + 1} 1 *")
    write_notebook(root / NOTEBOOK, (
        "from svckit.demo import notebook_clients\n"
        "from svckit.sandbox.plans import PLAN_PRESETS\n"
        "from svckit.widgets import AccountDashboard\n\n"
        "c = notebook_clients()\n"
        "dashboard = AccountDashboard(c.account, queue=c.queue, presets=PLAN_PRESETS)\n"
        "dashboard"))


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with sandbox_lab(tmp_path_factory, notebooks=[], prepare=prepare, seed=None, areas=["account", "queue"]) as lab:
        yield lab


def _usage_rows(dash) -> dict[str, str]:
    rows = {}
    for row in dash.locator(".svc-account-usage tr").all():
        cells = row.locator("td").all_inner_texts()
        if len(cells) == 3:
            rows[cells[0].strip()] = cells[2].strip()
    return rows


def test_the_dashboard_shows_usage_first_with_units_once_and_plan_names(browser, lab, screenshots, ui):
    free = PLAN_PRESETS["free"]
    page = run_notebook(browser, lab, NOTEBOOK, height=1600, ui=ui)
    dash = page.locator(".svc-account-dashboard").first
    dash.wait_for(state="visible", timeout=30_000)
    dash.locator(".svc-account-usage").wait_for(timeout=30_000)
    usage = _usage_rows(dash)
    assert usage["Requests today (UTC)"] == f"{PUBLISHED} of {free['max_requests_per_day']:,}"
    assert usage["Schedules"] == f"{SCHEDULES} of {free['max_schedules']:,}"
    assert usage["Dead-letter queue"] == f"0 of {free['max_dlq_size']:,}"
    assert dash.locator(".svc-account-usage .svc-meter").count() == 5  # requests, DLQ, schedules, queues, URL groups
    # the usage is above the limits
    usage_top = dash.locator(".svc-account-usage").bounding_box()["y"]
    assert usage_top < dash.locator(".svc-card h4", has_text="Throughput").bounding_box()["y"]
    # the chart: rows named by their labels alone, the values carry the unit
    page.wait_for_function("() => document.querySelectorAll("
                           "'.svc-account-dashboard .js-plotly-plot .barlayer .point').length >= 20", timeout=30_000)
    ticks = page.evaluate("() => [...document.querySelectorAll('.svc-account-dashboard .js-plotly-plot .ytick text')]"
                          ".map(t => t.textContent)")
    assert "DLQ retention" in ticks and "Maximum delay" in ticks and "Requests per second" in ticks
    units = ("(ms)", "(s)", "(requests/s)", "(requests/day)", "(bytes)", "(messages)", "(retries)")
    assert not [t for t in ticks if t.endswith(units)], ticks
    legend = page.evaluate("() => [...document.querySelectorAll('.svc-account-dashboard .legendtext')]"
                           ".map(t => t.textContent)")
    assert legend == ["Free (current plan)", "Pay as you go"]
    text = dash.inner_text()
    assert "queue_enterprise" not in text and "(ms)" not in text and "(requests/s)" not in text
    assert "Current plan: Free" in text
    # ipywidgets writes the options' spaces as no-break spaces
    offered = [o.replace("\xa0", " ") for o in dash.locator(".widget-dropdown select").nth(1).locator("option")
               .all_inner_texts()]
    assert offered == ["Pay as you go", "Fixed 1M", "Fixed 10M"]
    painted(page, ".svc-account-dashboard")
    dash.screenshot(path=shot(screenshots, "account_dashboard_usage", ui))
    page.close()
