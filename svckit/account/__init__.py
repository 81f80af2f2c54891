"""Client of the developer management interface (spec area C): search index rename, the queue account
and its usage."""

from svckit.account.client import Account, AsyncAccount, QueueAccountAdmin
from svckit.account.models import (
    DailyRequests,
    PlanType,
    QueueAccount,
    QueueAccountState,
    QueueStats,
    ReservedType,
    StateSeries,
    TimePoint,
    UpgradePlan,
)
from svckit.account.plans import LIMIT_FIELDS, PLAN_NAMES, PLAN_TITLES, UPGRADE_PLAN_NAMES, plan_title

__all__ = [
    "LIMIT_FIELDS",
    "PLAN_NAMES",
    "PLAN_TITLES",
    "UPGRADE_PLAN_NAMES",
    "Account",
    "AsyncAccount",
    "DailyRequests",
    "PlanType",
    "QueueAccount",
    "QueueAccountAdmin",
    "QueueAccountState",
    "QueueStats",
    "ReservedType",
    "StateSeries",
    "TimePoint",
    "UpgradePlan",
    "plan_title",
]
