"""Where the sandbox delivers (loopback only, unless allowed), and when a schedule fires."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from svckit.sandbox.delivery.cron import CronError, parse_cron
from svckit.sandbox.delivery.destination import Destination, DestinationError, check_url, from_path


def test_a_destination_is_a_url_with_its_query_or_a_url_group():
    assert from_path("http://127.0.0.1:8000/hook", "a=1&b=2") == Destination(url="http://127.0.0.1:8000/hook?a=1&b=2")
    assert from_path("orders") == Destination(group="orders")
    with pytest.raises(DestinationError, match="must start with http"):
        from_path("ftp://127.0.0.1/x")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/x", "http://localhost/x", "https://[::1]:8443/",
                                 "http://127.9.9.9/", "http://LOCALHOST./x"])
def test_loopback_destinations_are_delivered_to(url):
    assert check_url(url) == url


@pytest.mark.parametrize("url", ["http://example.com/x", "http://10.0.0.1/", "http://localhost.example.com/",
                                 "http://127.0.0.1@example.com/", "http://169.254.169.254/latest/meta-data"])
def test_any_other_destination_is_refused_naming_the_rule_and_the_option(url):
    with pytest.raises(DestinationError, match=r"only to this machine .* --allow-destination HOST"):
        check_url(url)


def test_a_host_the_user_allows_is_delivered_to():
    assert check_url("http://api.internal:9000/x", ["API.internal"]) == "http://api.internal:9000/x"


def test_cron_times_in_utc_in_a_time_zone_and_by_the_second():
    noon = datetime(2026, 12, 6, 12, 0, 30, tzinfo=UTC).timestamp()
    assert parse_cron("*/5 * * * *").next_after(noon) == noon + 270
    # 09:00 in Istanbul (UTC+3) is 06:00 UTC, the next day
    assert parse_cron("CRON_TZ=Europe/Istanbul 0 9 * * *").next_after(noon) == \
        datetime(2026, 12, 7, 6, 0, tzinfo=UTC).timestamp()
    assert parse_cron("* * * * * */10").next_after(noon) == noon + 10  # the sandbox's seconds field


@pytest.mark.parametrize(("cron", "says"), [("* * *", "has 3 fields"), ("61 * * * *", "not a cron expression"),
                                            ("CRON_TZ=Mars/Base * * * * *", "unknown time zone")])
def test_a_cron_that_cannot_be_read_is_refused(cron, says):
    with pytest.raises(CronError, match=says):
        parse_cron(cron)
