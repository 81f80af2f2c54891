"""The sandbox's queue plans: the limit values each plan sets (``PLAN_PRESETS``).

The spec does not give the limits as contract constants ("values of the account limits per plan: not
shown"), so these are the sandbox's own, chosen to look like a real service's published quotas. The
sandbox applies them on ``POST /queue-upgrade`` and the vendor's ``POST /qstash/set-plan/{id}``
(svckit/sandbox/store.py; ``queue_enterprise_100m`` only through the latter); notebooks pass them to
``AccountDashboard(presets=...)`` to compare an account with the other plans. The field list and the
plan names are the contract's, in :mod:`svckit.account.plans`. Sizes are bytes, delays and timeout
seconds, DLQ retention milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from svckit.account.plans import LIMIT_FIELDS

_DAY_MS = 24 * 60 * 60 * 1000
_MB = 1024 * 1024


def _plan(**values: Any) -> Mapping[str, Any]:
    missing = set(LIMIT_FIELDS) - set(values)
    if missing:  # checked when the module is imported: a preset must set every limit
        raise ValueError(f"a plan preset lacks {', '.join(sorted(missing))}")
    return MappingProxyType(values)


#: the plans from the lowest tier to the highest: a higher tier never sets a lower limit
#: (tests/sandbox/test_plans.py), so comparing two plans tells a true story
PLAN_ORDER: tuple[str, ...] = ("free", "paid", "queue_enterprise_1m", "queue_enterprise_10m", "queue_enterprise_100m")

#: plan name -> record fields it sets (limits plus ``type``, ``reserved_type``, ``reserved_price``).
PLAN_PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "free": _plan(
            type="free", reserved_type="", reserved_price=0.0,
            max_message_size=1 * _MB, max_requests_per_day=1_000, max_requests_per_day_hard=1_500,
            max_endpoints_per_topic=100, max_requests_per_second=100, max_dlq_size=1_000, max_retries=3,
            max_topics=10, max_schedules=10, max_events_size=1_000, max_dlq_retention_time_milis=3 * _DAY_MS,
            max_delay=7 * 24 * 3600, max_parallelism=10, max_global_parallelism=10, max_queues=10,
            prod_pack_enabled=False, timeout=15 * 60,
        ),
        "paid": _plan(
            type="paid", reserved_type="paid", reserved_price=0.0,
            max_message_size=1 * _MB, max_requests_per_day=500_000, max_requests_per_day_hard=600_000,
            max_endpoints_per_topic=1_000, max_requests_per_second=500, max_dlq_size=100_000, max_retries=5,
            max_topics=1_000, max_schedules=1_000, max_events_size=100_000,
            max_dlq_retention_time_milis=7 * _DAY_MS, max_delay=365 * 24 * 3600, max_parallelism=100,
            max_global_parallelism=200, max_queues=1_000, prod_pack_enabled=False, timeout=2 * 3600,
        ),
        "queue_enterprise_1m": _plan(
            type="paid", reserved_type="queue_enterprise_1m", reserved_price=180.0,
            max_message_size=50 * _MB, max_requests_per_day=1_000_000, max_requests_per_day_hard=1_200_000,
            max_endpoints_per_topic=1_000, max_requests_per_second=1_000, max_dlq_size=1_000_000, max_retries=20,
            max_topics=1_000, max_schedules=1_000, max_events_size=1_000_000,
            max_dlq_retention_time_milis=14 * _DAY_MS, max_delay=365 * 24 * 3600, max_parallelism=500,
            max_global_parallelism=1_000, max_queues=1_000, prod_pack_enabled=True, timeout=2 * 3600,
        ),
        "queue_enterprise_10m": _plan(
            type="paid", reserved_type="queue_enterprise_10m", reserved_price=420.0,
            max_message_size=50 * _MB, max_requests_per_day=10_000_000, max_requests_per_day_hard=12_000_000,
            max_endpoints_per_topic=10_000, max_requests_per_second=2_000, max_dlq_size=10_000_000,
            max_retries=20, max_topics=10_000, max_schedules=10_000, max_events_size=10_000_000,
            max_dlq_retention_time_milis=30 * _DAY_MS, max_delay=365 * 24 * 3600, max_parallelism=1_000,
            max_global_parallelism=5_000, max_queues=10_000, prod_pack_enabled=True, timeout=2 * 3600,
        ),
        # the vendor's "Fixed 100M", reached through set-plan (qstash_fixed_100m) only; its messages stay
        # at 50 MB like 10M's: the queue area's request body cap follows this limit
        "queue_enterprise_100m": _plan(
            type="paid", reserved_type="queue_enterprise_100m", reserved_price=1_800.0,
            max_message_size=50 * _MB, max_requests_per_day=100_000_000, max_requests_per_day_hard=120_000_000,
            max_endpoints_per_topic=100_000, max_requests_per_second=10_000, max_dlq_size=100_000_000,
            max_retries=50, max_topics=100_000, max_schedules=100_000, max_events_size=100_000_000,
            max_dlq_retention_time_milis=90 * _DAY_MS, max_delay=2 * 365 * 24 * 3600, max_parallelism=5_000,
            max_global_parallelism=20_000, max_queues=100_000, prod_pack_enabled=True, timeout=6 * 3600,
        ),
    }
)
