"""The sans-I/O core of area C (developer management interface): ``build_*`` functions validate
arguments and describe requests, ``decode_*`` functions read reply bodies (already through
:func:`svckit._http.decode_json_reply`). :class:`~svckit.account.Account` and
:class:`~svckit.account.AsyncAccount` only send."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import quote

from svckit._http import ApiRequest
from svckit.account.models import QueueAccount, QueueStats, UpgradePlan
from svckit.account.plans import UPGRADE_PLAN_NAMES
from svckit.errors import InvalidArgument, ProtocolError

M = TypeVar("M", QueueAccount, QueueStats)


def _non_empty(argument: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgument(argument, f"must be a non-empty string, got {value!r}")
    return value


def build_rename(index_id: str, name: str) -> ApiRequest:
    _non_empty("id", index_id)
    _non_empty("name", name)
    # Renaming to the same name twice has the same effect as once: safe to retry.
    return ApiRequest("POST", f"/search/{quote(index_id, safe='')}/rename", json={"name": name}, idempotent=True)


def build_queue_account() -> ApiRequest:
    return ApiRequest("GET", "/queue/user", idempotent=True)


def build_rotate_token() -> ApiRequest:
    # Never repeated automatically: a second rotation would invalidate the token the first returned.
    return ApiRequest("POST", "/queue/user/rotatetoken")


def build_upgrade(customer_id: str, plan_name: str | UpgradePlan) -> ApiRequest:
    _non_empty("customer_id", customer_id)
    plan = plan_name.value if isinstance(plan_name, UpgradePlan) else plan_name
    if plan not in UPGRADE_PLAN_NAMES:
        raise InvalidArgument("plan_name", f"must be one of {', '.join(UPGRADE_PLAN_NAMES)}, got {plan!r}")
    return ApiRequest("POST", "/queue-upgrade", json={"customer_id": customer_id, "plan_name": plan},
                      idempotent=True)


#: the spans ``GET /qstash/stats`` reports over (60 points each; 240 for 30d)
STATS_PERIODS = ("1h", "3h", "12h", "1d", "3d", "7d", "30d")


def build_queue_stats(period: str) -> ApiRequest:
    if period not in STATS_PERIODS:
        raise InvalidArgument("period", f"must be one of {', '.join(STATS_PERIODS)}, got {period!r}")
    return ApiRequest("GET", "/qstash/stats", params={"period": period}, idempotent=True)


def decode_stats(body: Any) -> QueueStats:
    """The queue account's usage (``GET /qstash/stats``)."""
    return _decode(QueueStats, body, "queue stats", "the vendor's QStashStats")


def decode_ok(body: Any, what: str) -> str:
    """The JSON string ``"OK"`` of rename and upgrade."""
    if not isinstance(body, str):
        raise ProtocolError(f"{what}: expected the JSON string \"OK\", got {json.dumps(body)[:100]}")
    return body


def decode_account(body: Any, what: str) -> QueueAccount:
    """A queue account record (``GET /queue/user``, rotate token)."""
    return _decode(QueueAccount, body, what, "the spec's queue account record")


def _decode(model: type[M], body: Any, what: str, shape: str) -> M:
    if not isinstance(body, Mapping):
        raise ProtocolError(f"{what}: expected an object ({shape}), got {type(body).__name__}")
    try:
        return model.model_validate(body)
    except ValueError as exc:  # pydantic.ValidationError; never echo the input (it holds secrets)
        raise ProtocolError(f"{what}: the reply does not match {shape}: {_field_errors(exc)}") from None


def _field_errors(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if errors is None:
        return type(exc).__name__
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors(include_input=False))
