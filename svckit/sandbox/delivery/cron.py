"""When a schedule fires: its ``Upstash-Cron`` expression, read by croniter.

Five fields (minute hour day-of-month month day-of-week), as the hosted service takes them, with an
optional ``CRON_TZ=Area/City`` prefix (else UTC). The sandbox also takes a sixth field at the end,
seconds (croniter's form), so that a test or a demo need not wait a minute for a schedule; the hosted
service does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from croniter.croniter import CroniterError


class CronError(ValueError):
    """A cron expression the sandbox cannot read; the schedule is refused (400) with this text."""


@dataclass(frozen=True)
class Cron:
    expression: str
    fields: str
    zone: ZoneInfo | timezone

    def next_after(self, when: float) -> float:
        """The first firing time (Unix seconds) strictly after ``when``."""
        start = datetime.fromtimestamp(when, self.zone)
        return float(croniter(self.fields, start).get_next(float))


def parse_cron(expression: str) -> Cron:
    text = expression.strip()
    zone: ZoneInfo | timezone = UTC
    if text.startswith("CRON_TZ="):
        name, _, text = text[len("CRON_TZ="):].partition(" ")
        try:
            zone = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise CronError(f"Upstash-Cron: unknown time zone {name!r} in CRON_TZ (an IANA name such as "
                            "Europe/Istanbul)") from None
        text = text.strip()
    fields = text.split()
    if len(fields) not in (5, 6):
        raise CronError(f"Upstash-Cron: {expression!r} has {len(fields)} fields; write five (minute hour "
                        "day-of-month month day-of-week, e.g. '*/5 * * * *'), or six with seconds last (sandbox only)")
    try:
        croniter(" ".join(fields), datetime.now(UTC))
    except (CroniterError, ValueError, KeyError) as exc:
        raise CronError(f"Upstash-Cron: {expression!r} is not a cron expression ({exc})") from None
    return Cron(expression, " ".join(fields), zone)
