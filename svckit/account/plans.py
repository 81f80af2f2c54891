"""What the account client and widgets need to know about queue plans, from the contract.

``LIMIT_FIELDS`` are the fields of the queue account record (spec D1) that a plan sets;
``UPGRADE_PLAN_NAMES`` the ``reserved_type`` values a plan change may name; ``PLAN_TITLES`` the
names a person reads for them, as the vendor's console and pricing page write them (the ids are
the API's, not a reader's: ``queue_enterprise_1m`` is the plan sold as "Fixed 1M"). The limit
VALUES of each plan are not part of the contract ("not shown"): the sandbox's presets are in
:mod:`svckit.sandbox.plans`.
"""

from __future__ import annotations

#: fields of the queue account record that a plan sets.
LIMIT_FIELDS: tuple[str, ...] = (
    "max_message_size",
    "max_requests_per_day",
    "max_requests_per_day_hard",
    "max_endpoints_per_topic",
    "max_requests_per_second",
    "max_dlq_size",
    "max_retries",
    "max_topics",
    "max_schedules",
    "max_events_size",
    "max_dlq_retention_time_milis",
    "max_delay",
    "max_parallelism",
    "max_global_parallelism",
    "max_queues",
    "prod_pack_enabled",
    "timeout",
)

#: plan names ``upgrade_queue_plan`` accepts (``free`` is where an account starts, not a target).
UPGRADE_PLAN_NAMES: tuple[str, ...] = ("paid", "queue_enterprise_1m", "queue_enterprise_10m")


def daily_limit_field(plan_type: str) -> str:
    """The record field that caps messages per UTC day: ``max_requests_per_day`` on the free plan,
    ``max_requests_per_day_hard`` on a paid one (its soft limit is where billing starts)."""
    return "max_requests_per_day" if plan_type == "free" else "max_requests_per_day_hard"


#: every plan name, from the lowest tier to the highest (the account starts on ``free``)
PLAN_NAMES: tuple[str, ...] = ("free", *UPGRADE_PLAN_NAMES)

#: plan name -> the name a person reads (the vendor's console and pricing page)
PLAN_TITLES: dict[str, str] = {
    "free": "Free", "paid": "Pay as you go", "queue_enterprise_1m": "Fixed 1M", "queue_enterprise_10m": "Fixed 10M",
    "queue_enterprise_100m": "Fixed 100M",
}

#: plan names the vendor's ``POST /v2/qstash/set-plan/{id}`` accepts -> the plan the record then
#: names (its ``reserved_type``): the vendor's own names and the spec's. ``qstash_fixed_1m`` is the
#: plan the spec calls ``queue_enterprise_1m`` ("Fixed 1M"); "Fixed 100M" is only reachable here, the
#: spec's ``/queue-upgrade`` names no such plan.
SET_PLAN_NAMES: dict[str, str] = {
    "paid": "paid",
    "qstash_fixed_1m": "queue_enterprise_1m",
    "qstash_fixed_10m": "queue_enterprise_10m",
    "qstash_fixed_100m": "queue_enterprise_100m",
    "queue_enterprise_1m": "queue_enterprise_1m",
    "queue_enterprise_10m": "queue_enterprise_10m",
}


def plan_title(name: str) -> str:
    """The display name of plan ``name`` (``"Fixed 1M"`` for ``queue_enterprise_1m``); a plan this
    version does not know is shown by its id, and no plan as ``"—"``."""
    return PLAN_TITLES.get(name, name) or "—"
