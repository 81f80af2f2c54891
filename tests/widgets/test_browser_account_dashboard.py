"""Real browser: the account dashboard as a person meets it in JupyterLab and Notebook 7 (the harness
of tests/lab_harness.py), on a sandbox of its own (a key-value database, the account, the queue)
where the test sent KV commands, published messages and made schedules.

First the first page: a card per resource, grouped by kind, with its usage as bars and its token
masked. Then *Open* on the queue account's card: its usage first, as bars with today's counts against
the plan's limits; plans by their display names; each unit once, in the value (the chart's rows are
labels alone); the current plan named and not offered. *Back to all resources* returns. It only
looks (the plan changes are tests/account/test_dashboard_view.py's), so JupyterLab and Notebook 7 see
the same account. Last, the notebook saved and reopened with no kernel shows the first page's static
view, cards and bars, in place of the live widget.
Screenshots: test-output/screenshots/account_dashboard_{overview,usage,reopened}_<ui>.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from svckit.sandbox.plans import PLAN_PRESETS
from tests.lab_harness import (
    TALL,
    Lab,
    painted,
    reopen,
    run_notebook,
    sandbox_lab,
    saved_outputs,
    shot,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "dashboard_usage.ipynb"
PUBLISHED = 7
SCHEDULES = 3
KEY = "browser:overview"


def prepare(sandbox, root: Path) -> None:
    """A key written, PUBLISHED messages accepted today (delayed an hour: none delivered while the test
    runs) and SCHEDULES schedules, through the clients; then the notebook that shows the dashboard."""
    with sandbox.connect() as c:
        c.kv.set(KEY, "seen")
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
    with sandbox_lab(tmp_path_factory, notebooks=[], prepare=prepare, seed=None, areas=["kv", "account", "queue"],
                     backend="fakeredis") as lab:
        yield lab


def _usage_rows(dash) -> dict[str, str]:
    rows = {}
    for row in dash.locator(".svc-account-usage tr").all():
        cells = row.locator("td").all_inner_texts()
        if len(cells) == 3:
            rows[cells[0].strip()] = cells[2].strip()
    return rows


def _card_rows(card) -> dict[str, str]:
    rows = {}
    for row in card.locator("tr").all():
        cells = row.locator("td").all_inner_texts()
        if len(cells) >= 2:
            rows[cells[0].strip()] = cells[-1].strip()
    return rows


def check_first_page(page, dash) -> None:
    overview = dash.locator(".svc-account-overview")
    overview.wait_for(state="visible", timeout=30_000)
    page.wait_for_function("() => document.querySelectorAll('.svc-account-dashboard .svc-resource').length >= 2",
                           timeout=30_000)
    text = overview.inner_text()
    assert "Key-value databases" in text and "Queue accounts" in text
    db = overview.locator(".svc-resource-card", has_text="Key-value database")
    rows = _card_rows(db)
    assert rows["region"] == "local" and rows["token"].startswith("***") and len(rows["token"]) <= 7
    assert " of " in rows["Commands today"] and int(rows["Commands today"].split(" of ")[0]) >= 1
    assert rows["Keys"].startswith("1") and "(no limit)" in rows["Keys"]
    assert db.locator(".svc-meter").count() >= 1  # commands today against the daily limit, as a bar
    queue = _card_rows(overview.locator(".svc-resource-card", has_text="Queue account"))
    free = PLAN_PRESETS["free"]
    assert queue["Messages today"] == f"{PUBLISHED} of {free['max_requests_per_day']:,}"
    assert not dash.get_by_role("button", name="Back to all resources").is_visible()


def test_the_first_page_then_the_queue_account_usage_units_once_and_plan_names(browser, lab, screenshots, ui):
    free = PLAN_PRESETS["free"]
    page = run_notebook(browser, lab, NOTEBOOK, height=1600, ui=ui)
    dash = page.locator(".svc-account-dashboard").first
    dash.wait_for(state="visible", timeout=30_000)
    check_first_page(page, dash)
    painted(page, ".svc-account-dashboard")
    dash.screenshot(path=shot(screenshots, "account_dashboard_overview", ui))

    # drill into the queue account
    dash.locator(".svc-resource-card", has_text="Queue account").get_by_role("button", name="Open").click()
    dash.locator(".svc-account-usage").wait_for(state="visible", timeout=30_000)
    assert not dash.locator(".svc-account-overview").is_visible()
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
    queue_page = dash.locator(".svc-queue-account")
    text = queue_page.inner_text()
    assert "queue_enterprise" not in text and "(ms)" not in text and "(requests/s)" not in text
    assert "Current plan: Free" in text
    # ipywidgets writes the options' spaces as no-break spaces
    offered = [o.replace("\xa0", " ") for o in queue_page.locator(".widget-dropdown select").nth(1).locator("option")
               .all_inner_texts()]
    assert offered == ["Pay as you go", "Fixed 1M", "Fixed 10M"]
    painted(page, ".svc-account-dashboard")
    dash.screenshot(path=shot(screenshots, "account_dashboard_usage", ui))

    # and back
    dash.get_by_role("button", name="Back to all resources").click()
    dash.locator(".svc-account-overview").wait_for(state="visible", timeout=30_000)
    assert not queue_page.is_visible()
    check_first_page(page, dash)
    page.close()


def test_the_first_page_reopened_with_no_kernel_shows_its_cards(browser, lab, screenshots, ui):
    name = f"reopened_{ui}.ipynb"
    (lab.root / name).write_text((lab.root / NOTEBOOK).read_text(encoding="utf-8"), encoding="utf-8")
    page = run_notebook(browser, lab, name, height=TALL, ui=ui)
    page.locator(".svc-account-dashboard .svc-resource").first.wait_for(state="visible", timeout=30_000)
    saved_outputs(lab, page, name, "svc-resource")  # the static view was rewritten once the cards came
    page.close()
    page = reopen(browser, lab, name, ui)
    static = page.locator(".svc-static")
    static.first.wait_for(state="visible", timeout=60_000)
    cards = static.locator(".svc-resource")
    assert cards.count() >= 2
    text = static.first.inner_text()
    assert "All resources of the account" in text and "Key-value databases" in text and "Queue accounts" in text
    assert "Commands today" in text and f"{PUBLISHED} of " in text
    assert static.locator(".svc-meter").count() >= 2 and "***" in static.locator(".svc-token").first.inner_text()
    page.screenshot(path=shot(screenshots, "account_dashboard_reopened", ui), full_page=True)
    page.close()
