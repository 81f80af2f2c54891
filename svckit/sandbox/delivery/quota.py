"""The queue account's limits, as the local QStash enforces them: read from the live account record
(area C), so a plan upgrade lifts them from the next request on.

Per message (400 or 413, before anything is kept): ``max_message_size`` (the body), ``max_delay``
(Upstash-Delay, or Upstash-Not-Before that far ahead), ``max_retries`` (Upstash-Retries; a message
without it gets the default of 3, or the plan's maximum if lower), ``timeout`` (Upstash-Timeout; the
plan's is the default). Per day: messages accepted in the UTC day, refused with 429 and the
``RateLimit-*`` headers the SDKs read (``DailyMessageLimitExceededError`` / ``QstashDailyRatelimitError``)
past ``max_requests_per_day`` on a free plan, past ``max_requests_per_day_hard`` on a paid one (the soft
limit is where the hosted service starts billing). Per account (412, as the vendor's API answers them):
``max_queues``, ``max_topics``, ``max_endpoints_per_topic``, ``max_schedules``, ``max_parallelism`` (a
queue's). Kept data: ``max_dlq_size`` (the oldest entries make room: :mod:`.engine`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from svckit.account.plans import daily_limit_field
from svckit.sandbox.delivery.options import MessageOptions
from svckit.sandbox.http import ApiError

DEFAULT_RETRIES = 3
UPGRADE = "move to a plan with a higher limit (POST /devapi/v2/queue-upgrade)"


def retries_of(options: MessageOptions, account: Mapping[str, Any]) -> int:
    """The retries a message gets: its own (checked against the plan), else the default, at most the plan's."""
    return options.retries if options.retries is not None else min(DEFAULT_RETRIES, int(account["max_retries"]))


def check_message(options: MessageOptions, size: int, account: Mapping[str, Any], now: float | None = None) -> None:
    """Refuse a message over the plan's per-message limits, naming the limit."""
    now = time.time() if now is None else now
    limit = int(account["max_message_size"])
    if size > limit:
        raise ApiError(413, f"message too large: {size} bytes, over the queue account's max_message_size of "
                            f"{limit} bytes; send a smaller body, or {UPGRADE}")
    wait = options.delay if options.not_before is None else options.not_before - now
    if wait > int(account["max_delay"]):
        raise ApiError(400, f"delay too long: {wait:,.0f} s, over the queue account's max_delay of "
                            f"{int(account['max_delay']):,} s; deliver sooner, or {UPGRADE}")
    if options.retries is not None and options.retries > int(account["max_retries"]):
        raise ApiError(400, f"Upstash-Retries: {options.retries}, over the queue account's max_retries of "
                            f"{account['max_retries']}; ask for fewer, or {UPGRADE}")
    if options.timeout is not None and options.timeout > int(account["timeout"]):
        raise ApiError(400, f"Upstash-Timeout: {options.timeout:g} s, over the queue account's timeout of "
                            f"{account['timeout']} s; ask for less, or {UPGRADE}")


def daily_limit(account: Mapping[str, Any]) -> int:
    return int(account[daily_limit_field(account.get("type", ""))])


def today(now: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if now is None else now, UTC).strftime("%Y-%m-%d")


def take_daily(db: Any, account: Mapping[str, Any], count: int, now: float | None = None) -> None:
    """Count ``count`` messages against today's limit (in the caller's transaction), or refuse them all."""
    day = today(now)
    row = db.execute("SELECT messages FROM usage WHERE day = ?", (day,)).fetchone()
    used, limit = (row["messages"] if row else 0), daily_limit(account)
    if used + count > limit:
        midnight = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC) + timedelta(days=1)
        raise ApiError(429, f"daily message limit reached: {used:,} of {limit:,} messages accepted today (UTC); "
                            f"this request has {count:,}; the count starts again at midnight UTC, or {UPGRADE}",
                       headers={"RateLimit-Limit": str(limit), "RateLimit-Remaining": str(max(0, limit - used)),
                                "RateLimit-Reset": str(int(midnight.timestamp()))})
    db.execute("INSERT INTO usage (day, messages) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET "
               "messages = messages + excluded.messages", (day, count))


def check_room(db: Any, what: str, table: str, field: str, account: Mapping[str, Any], key: Mapping[str, Any],
               within: Mapping[str, Any] | None = None) -> bool:
    """Whether the row ``key`` (column -> value) is new in ``table``; a new one is refused with a 412 when
    the account already holds its ``field`` (``max_queues`` ...) of ``what``, counted over the rows
    ``within`` matches (the whole table without it)."""
    def match(columns: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
        return " AND ".join(f"{c} = ?" for c in columns) or "1", tuple(columns.values())

    where, args = match(key)
    if db.execute(f"SELECT 1 FROM {table} WHERE {where}", args).fetchone():
        return False
    where, args = match(within or {})
    have, limit = db.execute(f"SELECT COUNT(*) AS n FROM {table} WHERE {where}", args).fetchone()["n"], int(account[field])
    if have >= limit:
        raise ApiError(412, f"too many {what}: the queue account holds {have:,}, its {field} is {limit:,}; "
                            f"delete one, or {UPGRADE}")
    return True
