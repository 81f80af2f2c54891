"""Models of the developer management interface (spec area C and table D1).

The wire names of the queue account record are snake_case already, so attributes equal wire names.
Enums are ``str`` enums, and every enum-typed field also accepts an unknown value as a plain ``str``:
the service adds values over time and a notebook must not break on a new one.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class QueueAccountState(str, Enum):
    ACTIVE = "active"
    PASSIVE = "passive"


class PlanType(str, Enum):
    """``type`` of the queue account: the plan the account is billed on."""

    FREE = "free"
    PAID = "paid"


class ReservedType(str, Enum):
    """``reserved_type``: the reserved plan; ``NONE`` (the empty string) when no credit card is attached
    and the account is not on pay-as-you-go."""

    NONE = ""
    PAID = "paid"
    QUEUE_ENTERPRISE_1M = "queue_enterprise_1m"
    QUEUE_ENTERPRISE_10M = "queue_enterprise_10m"
    QUEUE_ENTERPRISE_100M = "queue_enterprise_100m"  # the vendor's "Fixed 100M": set-plan only


class UpgradePlan(str, Enum):
    """Values of ``plan_name`` accepted by ``POST /queue-upgrade``."""

    PAID = "paid"
    QUEUE_ENTERPRISE_1M = "queue_enterprise_1m"
    QUEUE_ENTERPRISE_10M = "queue_enterprise_10m"


def _open_enum(default: Any = ...) -> Any:
    # left_to_right: try the enum first, fall back to plain str. Smart mode would pick ``str`` for
    # every string input, because a str is an exact match for ``str``.
    return Field(default, union_mode="left_to_right")


class QueueAccount(BaseModel):
    """The queue account record (spec table D1), as returned by get and by token reset.

    ``token`` and ``password`` are :class:`pydantic.SecretStr`: ``repr``/``str`` show ``**********``;
    call ``.get_secret_value()`` to use them. Fields the server adds beyond D1 are kept as extras.
    Timestamps (``creation_time``, ``last_plan_upgrade_time``) are Unix seconds.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    customer_id: str
    id: str
    password: SecretStr
    token: SecretStr
    active: bool
    state: QueueAccountState | str = _open_enum()
    last_plan_upgrade_time: int
    max_message_size: int
    max_requests_per_day: int
    max_requests_per_day_hard: int
    max_endpoints_per_topic: int
    max_requests_per_second: int
    max_dlq_size: int
    max_retries: int
    max_topics: int
    max_schedules: int
    max_events_size: int
    max_dlq_retention_time_milis: int
    max_delay: int
    max_parallelism: int
    max_global_parallelism: int
    max_queues: int
    prod_pack_enabled: bool
    timeout: int
    type: PlanType | str = _open_enum()
    reserved_type: ReservedType | str = _open_enum()
    reserved_price: float
    created_by: str
    creation_time: int

    @property
    def plan(self) -> str:
        """The effective plan name: the reserved plan when there is one, else ``type``."""
        reserved = _value(self.reserved_type)
        return reserved or _value(self.type)

    @property
    def limits(self) -> dict[str, Any]:
        """The limit fields (``max_*``, ``timeout``, ``prod_pack_enabled``) as a plain dict."""
        from svckit.account.plans import LIMIT_FIELDS

        return {name: getattr(self, name) for name in LIMIT_FIELDS}


def _value(member: Any) -> str:
    return member.value if isinstance(member, Enum) else str(member)


class TimePoint(BaseModel):
    """A point of a usage series: ``x`` the time as the vendor's API writes it
    ("2026-12-06 04:00:00.000 +0000 UTC"), ``y`` the value."""

    model_config = ConfigDict(extra="allow", frozen=True)

    x: str
    y: float

    @property
    def day(self) -> str:
        """The point's UTC date, ``YYYY-MM-DD``."""
        return self.x[:10]


class DailyRequests(TimePoint):
    """A day of ``daily_requests``: ``y`` the messages accepted (what the daily limit counts), with the
    workflow steps and runs of that day."""

    workflow_message: int = 0
    workflow_run: int = 0


class StateSeries(BaseModel):
    """Log events of one state (``delivered``, ``failed``, ``retry`` ...) over the stats' period."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    data_points: list[TimePoint] = []

    @property
    def total(self) -> float:
        return sum(p.y for p in self.data_points)


class QueueStats(BaseModel):
    """The queue account's usage (the vendor's ``QStashStats``): per day of the current month
    (``days``, ``daily_requests``, ``daily_bandwidths``, ``daily_billings``) and over the period asked
    for (``daily_used``, ``daily_qstash_messages`` by state, ...), and the DLQ's size now."""

    model_config = ConfigDict(extra="allow", frozen=True)

    days: list[str] = []
    daily_requests: list[DailyRequests] = []
    daily_billings: list[TimePoint] = []
    daily_bandwidths: list[TimePoint] = []
    daily_used: list[TimePoint] = []
    daily_used_workflow: list[TimePoint] = []
    daily_qstash_messages: list[StateSeries] = []
    daily_workflow_messages: list[StateSeries] = []
    dlq_message_count: int = 0
    daily_bandwidth_used: list[TimePoint] = []
    total_monthly_billing: float = 0.0

    def requests_on(self, day: str) -> int:
        """Messages accepted on ``day`` (``YYYY-MM-DD``, UTC); 0 for a day not in this month."""
        return int(next((p.y for p in self.daily_requests if p.day == day), 0))

    def messages_by_state(self) -> dict[str, int]:
        """Message log events over the period, per state (``delivered``: 12, ``failed``: 1 ...)."""
        return {series.id: int(series.total) for series in self.daily_qstash_messages}
