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
