"""The queue account's usage, in the shape of the vendor's developer API ``QStashStats``
(``GET /v2/qstash/stats?period=``), computed from what the sandbox keeps: the messages accepted per
UTC day (the count the daily limit uses), the messages and workflow runs and their log events, the
dead-letter queue. The sandbox bills nothing, so the billing series are zeros.

Two time axes, as the vendor's: ``days``, ``daily_requests``, ``daily_billings`` and
``daily_bandwidths`` have one point per day of the current UTC month (days still to come are 0);
the ``daily_used*``, ``daily_*_messages`` and ``daily_bandwidth_used`` series cover ``period``
(``1h`` ... ``30d``) in 60 points (240 for ``30d``, 3 h apart). A point is ``{"x": time, "y": value}``
with the time written the vendor's way ("2026-12-06 04:00:00.000 +0000 UTC").
"""

from __future__ import annotations

import calendar
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

Query = Callable[[str, Sequence[Any]], list[Any]]

HOUR_MS = 3_600_000
#: period name -> (its length in ms, its points)
PERIODS: dict[str, tuple[int, int]] = {
    "1h": (HOUR_MS, 60), "3h": (3 * HOUR_MS, 60), "12h": (12 * HOUR_MS, 60), "1d": (24 * HOUR_MS, 60),
    "3d": (72 * HOUR_MS, 60), "7d": (168 * HOUR_MS, 60), "30d": (720 * HOUR_MS, 240),
}
DEFAULT_PERIOD = "1h"


def vendor_time(ms: int) -> str:
    """A Unix time in ms written as the vendor's API writes times."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return f"{moment:%Y-%m-%d %H:%M:%S}.{moment.microsecond // 1000:03d} +0000 UTC"


def _month_days(now_ms: int) -> list[datetime]:
    today = datetime.fromtimestamp(now_ms / 1000, UTC)
    first = today.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return [first + timedelta(days=n) for n in range(calendar.monthrange(first.year, first.month)[1])]


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _per_day(query: Query, sql: str, start: int) -> dict[str, float]:
    """``sql`` yields (day 'YYYY-MM-DD', value) rows for times from ``start`` (ms)."""
    return {row[0]: row[1] for row in query(sql, (start,))}


def _buckets(query: Query, table: str, where: str, start: int, step: int, value: str = "COUNT(*)",
             by: str | None = None) -> dict[tuple[str, int], float]:
    """(group, bucket number) -> ``value`` over the rows of ``table`` (matching ``where``) from ``start``:
    ``by`` groups them (a state), buckets are ``step`` ms wide."""
    time_col = "time" if table == "events" else "created_at"
    group = by or "''"
    sql = (f"SELECT {group}, ({time_col} - ?) / ?, {value} FROM {table} WHERE {time_col} >= ? AND {where} "
           f"GROUP BY 1, 2")
    return {(row[0], int(row[1])): row[2] for row in query(sql, (start, step, start))}


def _series(points: dict[tuple[str, int], float], key: str, start: int, step: int, count: int) -> list[dict[str, Any]]:
    return [{"x": vendor_time(start + n * step), "y": points.get((key, n), 0)} for n in range(count)]


def _by_state(points: dict[tuple[str, int], float], start: int, step: int, count: int) -> list[dict[str, Any]]:
    states = sorted({key for key, _ in points})
    return [{"id": state, "data_points": _series(points, state, start, step, count)} for state in states]


def queue_stats(query: Query, period: str, now_ms: int) -> dict[str, Any]:
    """The ``QStashStats`` object for ``period`` at ``now_ms``; ``ValueError`` names the periods."""
    if period not in PERIODS:
        raise ValueError(f"period: must be one of {', '.join(PERIODS)}, got {period!r}")
    length, count = PERIODS[period]
    step = length // count
    start = now_ms - now_ms % step - (count - 1) * step  # the last point is the one now falls in

    days = _month_days(now_ms)
    month_start = _ms(days[0])
    day = "strftime('%Y-%m-%d', {} / 1000, 'unixepoch')"
    accepted = {row[0]: row[1] for row in query("SELECT day, messages FROM usage WHERE day >= ?",
                                                (f"{days[0]:%Y-%m-%d}",))}
    runs = _per_day(query, f"SELECT {day.format('created_at')}, COUNT(*) FROM runs WHERE created_at >= ? GROUP BY 1",
                    month_start)
    steps = _per_day(query, f"SELECT {day.format('created_at')}, COUNT(*) FROM steps WHERE created_at >= ? GROUP BY 1",
                     month_start)
    sizes = _per_day(query, f"SELECT {day.format('created_at')}, SUM(LENGTH(body)) FROM messages "
                            "WHERE created_at >= ? GROUP BY 1", month_start)

    def monthly(values: dict[str, float]) -> list[dict[str, Any]]:
        return [{"x": vendor_time(_ms(d)), "y": values.get(f"{d:%Y-%m-%d}", 0)} for d in days]

    requests = [dict(point, workflow_message=steps.get(f"{d:%Y-%m-%d}", 0), workflow_run=runs.get(f"{d:%Y-%m-%d}", 0))
                for d, point in zip(days, monthly(accepted), strict=True)]
    published = _buckets(query, "messages", "1", start, step)
    started = _buckets(query, "runs", "1", start, step)
    message_events = _buckets(query, "events", "message_seq IS NOT NULL", start, step, by="LOWER(state)")
    run_events = _buckets(query, "events", "run_seq IS NOT NULL", start, step, by="LOWER(state)")
    bandwidth = _buckets(query, "messages", "1", start, step, value="SUM(LENGTH(body))")
    dlq = query("SELECT COUNT(*) FROM dlq", ())[0][0]
    return {
        "days": [calendar.day_name[d.weekday()] for d in days],
        "daily_requests": requests,
        "daily_billings": monthly({}),
        "daily_bandwidths": monthly(sizes),
        "daily_used": _series(published, "", start, step, count),
        "daily_used_workflow": _series(started, "", start, step, count),
        "daily_qstash_messages": _by_state(message_events, start, step, count),
        "daily_workflow_messages": _by_state(run_events, start, step, count),
        "dlq_message_count": dlq,
        "daily_bandwidth_used": _series(bandwidth, "", start, step, count),
        "total_monthly_billing": 0.0,
    }
