"""The one set of unit texts (svckit/_units.py) that tables, plan limits and progress lines share."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from svckit import frames
from svckit._progress import Progress
from svckit._units import duration_text, short_url, timestamp_text


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0 ms"),
    (0.049, "49 ms"),
    (0.0004, "0 ms"),
    (0.9996, "1 s"),  # rounds into the next unit rather than "1000 ms"
    (1, "1 s"),
    (2.34, "2.3 s"),
    (2.0, "2 s"),  # no ".0"
    (9.96, "10 s"),
    (12.4, "12 s"),
    (59.6, "1 min"),
    (60, "1 min"),
    (95, "1 min 35 s"),
    (65, "1 min 05 s"),
    (125.4, "2 min 05 s"),
    (3599.7, "1 h"),  # not "60 min"
    (3600, "1 h"),
    (3725, "1 h 02 min"),
    (86000, "23 h 53 min"),
    (86400, "1 d"),
    (2 * 86400 + 3 * 3600, "2 d 03 h"),
    (3 * 86400 + 7200, "3 d 02 h"),
    (7 * 86400, "7 d"),
    (1.5 * 86400, "1 d 12 h"),
    (-95, "-1 min 35 s"),
    (-0.049, "-49 ms"),
    (float("nan"), "—"),
])
def test_a_duration_reads_in_at_most_two_units(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


@pytest.mark.parametrize(("ts", "text"), [
    (pd.Timestamp("2026-11-26 02:11:04.123", tz="UTC"), "2026-11-26 02:11:04"),
    (pd.Timestamp("2026-11-26 03:11:04.999", tz="Europe/Berlin"), "2026-11-26 02:11:04"),  # to UTC
    (pd.Timestamp("2026-11-26 02:11:04.5"), "2026-11-26 02:11:04"),  # naive: taken as UTC
    (datetime(2026, 11, 26, 2, 11, 4, tzinfo=timezone(timedelta(hours=-5))), "2026-11-26 07:11:04"),
    (datetime(2026, 11, 26, 2, 11, 4), "2026-11-26 02:11:04"),
    (pd.NaT, "—"),
    (None, "—"),
])
def test_a_time_reads_in_utc_to_the_second_without_its_zone(ts: object, text: str) -> None:
    assert timestamp_text(ts) == text


LONG = "http://127.0.0.1:39135/queue/v2/demo/app/api/workflows/nightly"


@pytest.mark.parametrize(("url", "limit", "text"), [
    ("http://127.0.0.1:39135/x", 48, "127.0.0.1:39135/x"),  # fits: only the scheme goes
    (LONG, 48, "127.0.0.1:39135/…/demo/app/api/workflows/nightly"),
    (LONG, 36, "127.0.0.1:39135/…/workflows/nightly"),
    (LONG, 30, "127.0.0.1:39135/…/nightly"),
    (LONG, 70, LONG.removeprefix("http://")),
    ("https://example.com/queue/v2/app/workflows/n", 40, "example.com/queue/v2/app/workflows/n"),  # no scheme fits
    ("https://example.com/a/" + "x" * 60, 30, "example.com/…/" + "x" * 15 + "…"),  # a long last segment, cut
    ("https://" + "h" * 60 + ".example.com/a", 20, "h" * 19 + "…"),
])
def test_a_long_url_keeps_its_host_and_last_segments(url: str, limit: int, text: str) -> None:
    shown = short_url(url, limit)
    assert shown == text and len(shown) <= limit


@pytest.mark.parametrize(("value", "unit", "text"), [
    (7 * 86400, "s", "7 d"), (900, "s", "15 min"), (7200, "s", "2 h"), (259_200_000, "ms", "3 d"),
    (30, "s", "30 s"), (500, "ms", "500 ms"), (90, "s", "1 min 30 s"),
])
def test_plan_limits_read_in_the_same_units(value: int, unit: str, text: str) -> None:
    assert frames.format_limit(value, unit) == text


def test_the_time_left_of_a_progress_line_reads_in_the_same_units() -> None:
    assert Progress("scan", 1, 2, eta=4.2).text().endswith(" · 4.2 s left")
    assert Progress("scan", 1, 2, eta=125.4).text().endswith(" · 2 min 05 s left")
    assert Progress("scan", 1, 2, eta=0.3).text().endswith(" · 300 ms left")
