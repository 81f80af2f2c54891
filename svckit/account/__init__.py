"""Client of the developer management interface (spec area C): what the account holds (key-value
databases, vector and search indexes, queue accounts) and their usage, search index rename, the queue
account's token and plan."""

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
from svckit.account.plans import (
    LIMIT_FIELDS,
    PLAN_NAMES,
    PLAN_TITLES,
    SET_PLAN_NAMES,
    UPGRADE_PLAN_NAMES,
    plan_title,
)
from svckit.account.resources import (
    AccountResources,
    Database,
    DatabaseStats,
    IndexType,
    SearchIndex,
    VectorIndex,
    VectorStats,
)

__all__ = [
    "LIMIT_FIELDS",
    "PLAN_NAMES",
    "PLAN_TITLES",
    "SET_PLAN_NAMES",
    "UPGRADE_PLAN_NAMES",
    "Account",
    "AccountResources",
    "AsyncAccount",
    "DailyRequests",
    "Database",
    "DatabaseStats",
    "IndexType",
    "PlanType",
    "QueueAccount",
    "QueueAccountAdmin",
    "QueueAccountState",
    "QueueStats",
    "ReservedType",
    "SearchIndex",
    "StateSeries",
    "TimePoint",
    "UpgradePlan",
    "VectorIndex",
    "VectorStats",
    "plan_title",
]
