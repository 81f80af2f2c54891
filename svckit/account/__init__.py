"""Client of the developer management interface (spec area C): what the account holds (key-value
databases, vector and search indexes, queue accounts) and their usage, search index rename, the queue
account's token and plan.

Every public name is imported on first use (PEP 562, :mod:`svckit._lazy`): importing ``svckit.account.models``
loads no client, transport or HTTP library.
"""

from typing import TYPE_CHECKING

from svckit._lazy import lazy_exports

if TYPE_CHECKING:  # the public names, each imported on first use (svckit/_lazy.py)
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

__getattr__, __dir__ = lazy_exports(__name__, __file__)

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
