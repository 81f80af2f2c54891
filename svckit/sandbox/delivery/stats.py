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


def _buckets(query: Query, table: str, start: int, step: int, values: str = "COUNT(*)",
             by: tuple[str, ...] = ()) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """(the ``by`` columns ..., bucket number) -> the ``values`` of the rows of ``table`` from ``start``, in
    buckets ``step`` ms wide: one query, however many values and groups."""
    time_col = "time" if table == "events" else "created_at"
    keys = [*by, f"({time_col} - ?) / ?"]
    sql = (f"SELECT {', '.join(keys)}, {values} FROM {table} WHERE {time_col} >= ? "
           f"GROUP BY {', '.join(str(i) for i in range(1, len(keys) + 1))}")
    return {(*row[:len(by)], int(row[len(by)])): tuple(row[len(keys):]) for row in query(sql, (start, step, start))}


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

    def series(points: dict[tuple[Any, ...], tuple[Any, ...]], group: tuple[Any, ...] = (),
               column: int = 0) -> list[dict[str, Any]]:
        return [{"x": vendor_time(start + n * step), "y": points[(*group, n)][column] if (*group, n) in points else 0}
                for n in range(count)]

    def by_state(of_messages: int) -> list[dict[str, Any]]:
        states = sorted({state for kind, state, _ in events if kind == of_messages})
        return [{"id": state, "data_points": series(events, (of_messages, state))} for state in states]

    published = _buckets(query, "messages", start, step, "COUNT(*), SUM(LENGTH(body))")
    started = _buckets(query, "runs", start, step)
    # an event is a message's (1) or a run's step's (0)
    events = _buckets(query, "events", start, step, by=("message_seq IS NOT NULL", "LOWER(state)"))
    dlq = query("SELECT COUNT(*) FROM dlq", ())[0][0]
    return {
        "days": [calendar.day_name[d.weekday()] for d in days],
        "daily_requests": requests,
        "daily_billings": monthly({}),
        "daily_bandwidths": monthly(sizes),
        "daily_used": series(published),
        "daily_used_workflow": series(started),
        "daily_qstash_messages": by_state(1),
        "daily_workflow_messages": by_state(0),
        "dlq_message_count": dlq,
        "daily_bandwidth_used": series(published, column=1),
        "total_monthly_billing": 0.0,
    }
