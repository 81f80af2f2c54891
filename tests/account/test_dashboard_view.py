"""The account dashboard as a person reads it, against a real sandbox over HTTP: each limit's unit once
(in the value, never beside it in the label), plans by their display names, no offer to move to the
plan the account is on, and the usage of today (requests, the DLQ, schedules, queues, URL groups)
as bars against the plan's limits after messages were published through the sandbox.

What is asserted is the text a person sees: the HTML of the dashboard's parts with the tags taken
out (tooltips are not read), the dropdowns' labels, and the chart's title, legend and labels."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from svckit.sandbox.plans import PLAN_PRESETS
from svckit.widgets import AccountDashboard
from tests.conftest import eventually
from tests.receiver import Receiver

RAW_PLAN_IDS = ("queue_enterprise_1m", "queue_enterprise_10m")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        self._skip += tag in ("style", "script")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("style", "script")

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.parts.append(" ".join(data.split()))


def text(markup: str) -> str:
    """``markup``'s visible text, one space between the pieces."""
    parser = _Text()
    parser.feed(markup)
    return " | ".join(parser.parts)


def rows(markup: str) -> dict[str, list[str]]:
    """A table's rows as seen: first cell -> the other cells' texts."""
    seen: dict[str, list[str]] = {}
    for row in markup.split("<tr")[1:]:
        cells = [text("<td" + c) for c in row.split("<td")[1:]]
        if cells:
            seen[cells[0]] = cells[1:]
    return seen


def seen(d: AccountDashboard) -> str:
    """Everything the dashboard shows as text: header, toolbar labels, usage, limit cards, chart."""
    fig = d.queue_view.figure.figure
    chart = []
    if fig is not None and d.queue_view.figure in d.queue_view.children:  # the queue account's page
        chart = [str(fig.layout.title.text), *(t.name for t in fig.data), *(str(y) for t in fig.data for y in t.y)]
    toolbar = [text(d.queue_view.current_plan_label.value) if hasattr(d, "current_plan_label") else "",
               *(label for label, _ in _labelled(d.queue_view.compare_box)), *(label for label, _ in _labelled(d.queue_view.upgrade_box)),
               d.queue_view.upgrade_button.description]
    return " | ".join([text(d.queue_view.header.value), *toolbar, text(d.queue_view.usage_box.value),
                       *(text(c.value) for c in d.queue_view.groups_box.children), *chart])


def _labelled(dropdown) -> list[tuple[str, str]]:
    return list(zip(dropdown._options_labels, dropdown._options_values))


def limit_rows(d: AccountDashboard) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for card in d.queue_view.groups_box.children:
        out.update(rows(card.value))
    return out


# -- units ------------------------------------------------------------------------------------------
#: the dashboard's units, pinned: label -> (the free plan's value, the Fixed 1M preset's) as shown
FREE_VS_FIXED_1M = {
    "Requests per second": ("100 requests/s", "1,000 requests/s"),
    "Requests per day (soft)": ("1,000 requests/day", "1,000,000 requests/day"),
    "Requests per day (hard)": ("1,500 requests/day", "1,200,000 requests/day"),
    "Message size": ("1.0 MiB", "50.0 MiB"),
    "Events size": ("1,000 B", "976.6 KiB"),
    "DLQ size": ("1,000 messages", "1,000,000 messages"),
    "DLQ retention": ("3 d", "14 d"),
    "Retries per message": ("3 retries", "20 retries"),
    "Schedules": ("10 schedules", "1,000 schedules"),
    "Maximum delay": ("7 d", "365 d"),
    "Request timeout": ("15 min", "2 h"),
    "Parallelism per endpoint": ("10 requests", "500 requests"),
    "Global parallelism": ("10 requests", "1,000 requests"),
    "URL groups": ("10 URL groups", "1,000 URL groups"),
    "Endpoints per URL group": ("100 endpoints", "1,000 endpoints"),
    "Queues": ("10 queues", "1,000 queues"),
    "Reserved price": ("$0.00", "$180.00"),
    "Production pack": ("no", "yes"),
}


def test_the_dashboard_pins_its_units(account):
    d = AccountDashboard(account, presets=PLAN_PRESETS, compare_plan="queue_enterprise_1m", page="queue")
    shown = limit_rows(d)
    assert {label: tuple(shown[label]) for label in FREE_VS_FIXED_1M} == FREE_VS_FIXED_1M
    # the chart labels each bar with the same value text, and its rows by the same labels
    current, other = d.queue_view.figure.figure.data
    assert dict(zip(current.y, current.text)) == {k: v[0] for k, v in FREE_VS_FIXED_1M.items()
                                                  if k not in ("Reserved price", "Production pack")}
    assert dict(zip(other.y, other.text))["DLQ retention"] == "14 d"


def test_a_unit_is_written_once_in_the_value_never_beside_the_label(account):
    d = AccountDashboard(account, presets=PLAN_PRESETS, compare_plan="queue_enterprise_1m", page="queue")
    everything = seen(d)
    for stray in ("(ms)", "(s)", "(requests/s)", "(requests/day)", "(bytes)", "(messages)", "(retries)"):
        assert stray not in everything, f"{stray} shown beside a label: {everything}"
    assert "DLQ retention | 3 d" in text(d.queue_view.groups_box.children[2].value)
    assert "Maximum delay | 7 d" in text(d.queue_view.groups_box.children[3].value)


# -- plan names -------------------------------------------------------------------------------------
def test_plans_are_shown_by_their_display_names(account):
    d = AccountDashboard(account, presets=PLAN_PRESETS, compare_plan="queue_enterprise_1m", page="queue")
    everything = seen(d)
    for raw in RAW_PLAN_IDS:
        assert raw not in everything, f"raw plan id {raw} shown: {everything}"
    assert text(d.queue_view.groups_box.children[0].value).startswith("Throughput | limit | Free (current plan) | Fixed 1M |")
    assert [label for label, _ in _labelled(d.queue_view.compare_box)] == ["Free", "Pay as you go", "Fixed 1M", "Fixed 10M", "Fixed 100M"]
    assert d.queue_view.compare_box.value == "queue_enterprise_1m"  # the value stays the plan's id
    assert "plan: Free" in text(d.queue_view.header.value)
    fig = d.queue_view.figure.figure
    assert [t.name for t in fig.data] == ["Free (current plan)", "Fixed 1M"]
    assert fig.layout.title.text == "Limits: Free (current plan) vs Fixed 1M"


# -- the current plan ---------------------------------------------------------------------------------
def test_the_current_plan_is_not_offered_as_an_upgrade(account):
    d = AccountDashboard(account, presets=PLAN_PRESETS, page="queue")
    assert text(d.queue_view.current_plan_label.value) == "Current plan: | Free"
    assert _labelled(d.queue_view.upgrade_box) == [("Pay as you go", "paid"), ("Fixed 1M", "queue_enterprise_1m"),
                                        ("Fixed 10M", "queue_enterprise_10m")]
    d.upgrade("paid")
    assert d.account.plan == "paid"
    assert text(d.queue_view.current_plan_label.value) == "Current plan: | Pay as you go"
    assert "paid" not in d.queue_view.upgrade_box.options and [v for _, v in _labelled(d.queue_view.upgrade_box)] == [
        "queue_enterprise_1m", "queue_enterprise_10m"]
    assert d.queue_view.upgrade_box.value == "queue_enterprise_1m" and d.queue_view.upgrade_button.description == "Upgrade"
    d.upgrade("queue_enterprise_10m")
    assert [v for _, v in _labelled(d.queue_view.upgrade_box)] == ["paid", "queue_enterprise_1m"]
    assert d.queue_view.upgrade_button.description == "Change plan"  # nothing above the top plan: no "Upgrade" offer
    assert "Change the queue plan to Fixed 1M?" in _asked(d, "queue_enterprise_1m")


class _Counting:
    """The real client, counting the plan changes asked of it."""

    def __init__(self, real) -> None:
        self.real, self.changes = real, 0

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def upgrade_queue_plan(self, customer_id: str, plan_name: str) -> str:
        self.changes += 1
        return self.real.upgrade_queue_plan(customer_id, plan_name)


def test_moving_to_the_current_plan_sends_nothing_and_says_so(account):
    client = _Counting(account)
    d = AccountDashboard(client, presets=PLAN_PRESETS, page="queue")
    d.upgrade("paid")
    assert client.changes == 1 and d.account.plan == "paid"
    assert d.upgrade("paid") is None
    assert client.changes == 1
    assert d.message == "The account is already on the Pay as you go plan."


def test_the_comparison_follows_the_plan_until_a_plan_is_picked(account):
    d = AccountDashboard(account, presets=PLAN_PRESETS, page="queue")
    assert d.queue_view.compare_box.label == "Pay as you go"
    d.upgrade("paid")  # never "Pay as you go (current plan) vs Pay as you go", every bar at 100 %
    assert d.queue_view.compare_box.label == "Fixed 1M"
    assert d.queue_view.figure.figure.layout.title.text == "Limits: Pay as you go (current plan) vs Fixed 1M"
    d.upgrade("queue_enterprise_10m")  # the top plan: compared with the tier below
    assert d.queue_view.compare_box.label == "Fixed 1M"
    d.queue_view.compare_box.value = "free"  # a person's pick stays
    d.upgrade("paid")
    assert d.queue_view.compare_box.label == "Free"
    assert text(d.queue_view.groups_box.children[0].value).startswith("Throughput | limit | Pay as you go (current plan) | Free |")


def _asked(d: AccountDashboard, plan: str) -> str:
    d.request_upgrade(plan)
    try:
        return text(d.confirm_bar.question.value)
    finally:
        d.confirm_bar.cancel()


# -- usage --------------------------------------------------------------------------------------------
PUBLISHED = 5


@pytest.fixture
def busy(queue):
    """What the queue area then records: PUBLISHED messages today (one fails into the DLQ), two
    schedules, one queue, one URL group."""
    with Receiver() as receiver:
        receiver.answer("/broken", 500)
        for n in range(PUBLISHED - 1):
            queue.publish(f"m{n}", url=receiver.url("/ok"))
        queue.publish("bad", url=receiver.url("/broken"), retries=0)
        eventually(lambda: queue.dlq().messages, "the failed message to reach the DLQ", 20)
        receiver.wait_for("/ok", PUBLISHED - 1)
        queue.create_schedule("tick", destination=receiver.url("/ok"), cron="0 0 1 1 *")
        queue.create_schedule("tock", destination=receiver.url("/ok"), cron="0 0 2 1 *")
        queue.upsert_queue("dashboard-q")
        queue.add_endpoints("dashboard-group", [receiver.url("/ok")])
    return queue


def test_usage_shows_todays_counts_as_bars_against_the_limits(account, busy):
    eventually(lambda: account.queue_stats("1d").dlq_message_count, "the DLQ entry")
    free = PLAN_PRESETS["free"]
    d = AccountDashboard(account, queue=busy, presets=PLAN_PRESETS, page="queue")
    usage = rows(d.queue_view.usage_box.value)
    assert usage["Requests today (UTC)"][1] == f"{PUBLISHED} of {free['max_requests_per_day']:,}"
    assert usage["Dead-letter queue"][1] == f"1 of {free['max_dlq_size']:,}"
    assert usage["Schedules"][1] == f"2 of {free['max_schedules']:,}"
    assert usage["Queues"][1] == f"1 of {free['max_queues']:,}"
    assert usage["URL groups"][1] == f"1 of {free['max_topics']:,}"
    # each measured row is a bar filled to its share of the limit
    bars = {label: cells[0] for label, cells in usage.items()}
    for row in d.queue_view.usage_box.value.split("<tr")[1:]:
        if "Schedules" in row:
            assert "svc-meter" in row and "width:20.0%" in row  # 2 of 10
    assert set(bars) >= {"Requests today (UTC)", "Dead-letter queue", "Schedules", "Queues", "URL groups"}
    # the usage comes first: before the limit cards
    assert d.queue_view.children.index(d.queue_view.usage_box) < d.queue_view.children.index(d.queue_view.groups_box)
    # a plan change moves the bars against the new limits
    d.upgrade("paid")
    usage = rows(d.queue_view.usage_box.value)
    assert usage["Schedules"][1] == f"2 of {PLAN_PRESETS['paid']['max_schedules']:,}"
    assert usage["Requests today (UTC)"][1] == f"{PUBLISHED} of {PLAN_PRESETS['paid']['max_requests_per_day_hard']:,}"


def test_without_the_queue_client_the_usage_says_what_it_cannot_count(account):
    d = AccountDashboard(account, presets=PLAN_PRESETS, page="queue")
    usage = rows(d.queue_view.usage_box.value)
    assert "Requests today (UTC)" in usage and "Schedules" not in usage
    assert "schedules, queues and URL groups are counted with the queue client" in text(d.queue_view.usage_box.value)


def test_record_usage_and_counts_are_asked_side_by_side(queue_sandbox):
    from svckit.account import Account
    from svckit.queue import Queue
    from tests.counting import CountingTransport

    transport = CountingTransport(hold=5)  # both clients' requests: all five must be in flight at once
    with (Account.from_settings(queue_sandbox.settings, transport=transport) as account,
          Queue.from_settings(queue_sandbox.settings, transport=transport) as queue):
        d = AccountDashboard(account, queue=queue, presets=PLAN_PRESETS, page="queue")  # the queue page's requests
    assert sorted(transport.paths()) == ["/devapi/v2/qstash/stats", "/devapi/v2/queue/user", "/queue/v2/queues",
                                         "/queue/v2/schedules", "/queue/v2/topics"]
    assert transport.round_trips == 1
    assert rows(d.queue_view.usage_box.value)["Schedules"][1] == "0 of 10"
