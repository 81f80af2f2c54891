"""The queue account's usage (``GET /devapi/v2/qstash/stats``, the vendor's QStashStats) over real HTTP:
what the sandbox counted is what the client, the frame and the dashboard show, against the limits
the plan sets, and an upgrade lifts them at once."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

import httpx
import pytest

from svckit import frames
from svckit.account import Account
from svckit.errors import InvalidArgument, NotFound, ProtocolError
from svckit.sandbox.plans import PLAN_PRESETS
from svckit.widgets import AccountDashboard
from tests.conftest import eventually
from tests.receiver import Receiver


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


@pytest.fixture
def delivered(queue):
    """Three messages accepted: two delivered, one failed into the DLQ (no retries)."""
    with Receiver() as receiver:
        receiver.answer("/broken", 500)
        queue.publish("a", url=receiver.url("/ok"))
        queue.publish("b", url=receiver.url("/ok"))
        queue.publish("c", url=receiver.url("/broken"), retries=0)
        eventually(lambda: queue.dlq().messages, "the failed message to reach the DLQ", 20)
        receiver.wait_for("/ok", 2)
    return queue


def test_stats_count_messages_deliveries_and_the_dlq(account, raw_devapi, delivered):
    stats = eventually(lambda: (s := account.queue_stats("1h")).messages_by_state().get("delivered") == 2 and s,
                       lambda: f"two deliveries in the stats, got {account.queue_stats('1h').messages_by_state()}")
    assert stats.requests_on(_today()) == 3
    assert stats.dlq_message_count == 1
    by_state = stats.messages_by_state()
    assert by_state["created"] == 3 and by_state["failed"] == 1
    now = datetime.now(UTC)
    month_days = calendar.monthrange(now.year, now.month)[1]
    assert len(stats.days) == len(stats.daily_requests) == month_days
    assert stats.days[now.day - 1] == calendar.day_name[now.weekday()]
    assert len(stats.daily_used) == 60 and sum(p.y for p in stats.daily_used) == 3
    assert stats.daily_used[-1].x.endswith(" +0000 UTC")
    wire = raw_devapi.get("/qstash/stats", params={"period": "30d"}).json()
    assert len(wire["daily_used"]) == 240 and wire["dlq_message_count"] == 1
    assert sorted(wire) == sorted([
        "days", "daily_requests", "daily_billings", "daily_bandwidths", "daily_used", "daily_used_workflow",
        "daily_qstash_messages", "daily_workflow_messages", "dlq_message_count", "daily_bandwidth_used",
        "total_monthly_billing"])


def test_a_bad_period_is_refused_on_both_sides(account, raw_devapi):
    with pytest.raises(InvalidArgument, match="period.*1h, 3h"):
        account.queue_stats("2h")
    r = raw_devapi.get("/qstash/stats", params={"period": "2h"})
    assert r.status_code == 400 and "1h, 3h, 12h, 1d, 3d, 7d, 30d" in r.json()["error"]


async def test_the_async_client_reads_the_same_stats(aaccount, account):
    assert (await aaccount.queue_stats("1d")).days == account.queue_stats("1d").days


def test_the_usage_frame_measures_against_the_plan(account, delivered):
    record = account.queue_account()
    stats = eventually(lambda: (s := account.queue_stats("1d")).dlq_message_count and s, "the DLQ entry")
    frame = frames.account_usage_frame(record, stats).set_index("measure")
    today = frame.loc["messages_today"]
    assert (today["used"], today["limit"], today["limit_field"]) == (3, PLAN_PRESETS["free"]["max_requests_per_day"],
                                                                      "max_requests_per_day")
    assert today["display"] == f"3 of {PLAN_PRESETS['free']['max_requests_per_day']:,}"
    assert frame.loc["dlq", "used"] == 1 and frame.loc["dlq", "limit"] == PLAN_PRESETS["free"]["max_dlq_size"]
    assert frame.loc["events_failed", "used"] == 1 and frame["limit"].isna()["events_failed"]


def test_the_dashboard_shows_usage_and_an_upgrade_lifts_its_limits(account, delivered):
    eventually(lambda: account.queue_stats("1d").dlq_message_count, "the DLQ entry")
    d = AccountDashboard(account, presets=PLAN_PRESETS, page="queue")
    free, paid = PLAN_PRESETS["free"], PLAN_PRESETS["paid"]
    assert f"3 of {free['max_requests_per_day']:,}" in d.queue_view.usage_box.value
    assert f"1 of {free['max_dlq_size']:,}" in d.queue_view.usage_box.value
    assert "Messages failed (last 1d)" in d.queue_view.usage_box.value and "svc-meter" in d.queue_view.usage_box.value
    d.upgrade("paid")
    assert f"3 of {paid['max_requests_per_day_hard']:,}" in d.queue_view.usage_box.value
    assert f"1 of {paid['max_dlq_size']:,}" in d.queue_view.usage_box.value


class _NoStats:
    """A service that reports no usage: the record alone."""

    def __init__(self, real) -> None:
        self.real = real

    def queue_account(self):
        return self.real.queue_account()

    def queue_stats(self, period: str = "1h"):
        raise NotFound("not found")


def test_the_dashboard_without_usage_still_shows_the_record(account):
    d = AccountDashboard(_NoStats(account), presets=PLAN_PRESETS, page="queue")
    assert d.account is not None and d.usage is None and d.queue_view.usage_box.value == ""
    assert len(d.queue_view.groups_box.children) == 6 and "Usage not shown" in d.message


def test_a_reply_of_another_shape_is_a_protocol_error_that_does_not_echo_it():
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"days": "tok_SECRET_1234", "dlq_message_count": 1})

    with (Account("http://127.0.0.1:9/devapi/v2", "e@x.test", "key", transport=httpx.MockTransport(reply)) as acct,
          pytest.raises(ProtocolError, match=r"queue stats: .*QStashStats: days") as err):
        acct.queue_stats()
    assert "tok_SECRET" not in str(err.value)
