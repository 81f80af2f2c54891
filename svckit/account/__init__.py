"""Client of the developer management interface (spec area C): search index rename, queue account."""

from svckit.account.client import Account, AsyncAccount, QueueAccountAdmin
from svckit.account.models import PlanType, QueueAccount, QueueAccountState, ReservedType, UpgradePlan
from svckit.account.plans import LIMIT_FIELDS, UPGRADE_PLAN_NAMES

__all__ = [
    "LIMIT_FIELDS",
    "UPGRADE_PLAN_NAMES",
    "Account",
    "AsyncAccount",
    "PlanType",
    "QueueAccount",
    "QueueAccountAdmin",
    "QueueAccountState",
    "ReservedType",
    "UpgradePlan",
]
