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
from svckit.account.plans import SET_PLAN_NAMES, UPGRADE_PLAN_NAMES
from svckit.account.resources import Database, DatabaseStats, SearchIndex, VectorIndex, VectorStats
from svckit.errors import InvalidArgument, ProtocolError

M = TypeVar("M", QueueAccount, QueueStats, Database, DatabaseStats, VectorIndex, VectorStats, SearchIndex)


def _non_empty(argument: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgument(argument, f"must be a non-empty string, got {value!r}")
    return value


def build_rename(index_id: str, name: str) -> ApiRequest:
    _non_empty("id", index_id)
    _non_empty("name", name)
    # Renaming to the same name twice has the same effect as once: safe to retry.
    return ApiRequest("POST", f"/search/{quote(index_id, safe='')}/rename", json={"name": name}, idempotent=True)


def _path(template: str, resource_id: str) -> str:
    return template.format(quote(_non_empty("id", resource_id), safe=""))


def _get(path: str, params: dict[str, str] | None = None) -> ApiRequest:
    return ApiRequest("GET", path, params=params, idempotent=True)


# -- the vendor's current paths: what the account holds ---------------------------------------------
def build_databases() -> ApiRequest:
    return _get("/redis/databases")


def build_database(database_id: str, hide_credentials: bool = False) -> ApiRequest:
    return _get(_path("/redis/database/{}", database_id), {"credentials": "hide"} if hide_credentials else None)


def build_database_stats(database_id: str) -> ApiRequest:
    return _get(_path("/redis/stats/{}", database_id))


def build_vector_indexes() -> ApiRequest:
    return _get("/vector/index")


def build_vector_index(index_id: str) -> ApiRequest:
    return _get(_path("/vector/index/{}", index_id))


def build_vector_stats(index_id: str, period: str = "1h") -> ApiRequest:
    return _get(_path("/vector/index/{}/stats", index_id), {"period": check_period(period)})


def build_search_indexes() -> ApiRequest:
    return _get("/search")


def build_search_index(index_id: str) -> ApiRequest:
    return _get(_path("/search/{}", index_id))


def build_queue_accounts() -> ApiRequest:
    return _get("/qstash/users")


def build_queue_account(account_id: str | None = None) -> ApiRequest:
    """The spec's ``GET /queue/user`` without an id; the vendor's ``/qstash/user/{id}`` with one."""
    return _get("/queue/user" if account_id is None else _path("/qstash/user/{}", account_id))


def build_rotate_token(account_id: str | None = None) -> ApiRequest:
    path = "/queue/user/rotatetoken" if account_id is None else _path("/qstash/rotate-token/{}", account_id)
    # Never repeated automatically: a second rotation would invalidate the token the first returned.
    return ApiRequest("POST", path)


def build_set_plan(account_id: str, plan_name: str | UpgradePlan) -> ApiRequest:
    """``POST /qstash/set-plan/{id}``: the vendor's plan names (``qstash_fixed_1m`` ...) and the spec's."""
    path = _path("/qstash/set-plan/{}", account_id)
    plan = plan_name.value if isinstance(plan_name, UpgradePlan) else plan_name
    if plan not in SET_PLAN_NAMES:
        raise InvalidArgument("plan_name", f"must be one of {', '.join(SET_PLAN_NAMES)}, got {plan!r}")
    # setting the same plan twice has the effect of once: safe to retry
    return ApiRequest("POST", path, json={"plan_name": plan}, idempotent=True)


def build_upgrade(customer_id: str, plan_name: str | UpgradePlan) -> ApiRequest:
    _non_empty("customer_id", customer_id)
    plan = plan_name.value if isinstance(plan_name, UpgradePlan) else plan_name
    if plan not in UPGRADE_PLAN_NAMES:
        raise InvalidArgument("plan_name", f"must be one of {', '.join(UPGRADE_PLAN_NAMES)}, got {plan!r}")
    return ApiRequest("POST", "/queue-upgrade", json={"customer_id": customer_id, "plan_name": plan},
                      idempotent=True)


#: the spans ``GET /qstash/stats`` reports over (60 points each; 240 for 30d)
STATS_PERIODS = ("1h", "3h", "12h", "1d", "3d", "7d", "30d")


def check_period(period: str) -> str:
    """``period`` if the stats paths take it (:data:`STATS_PERIODS`), else InvalidArgument."""
    if period not in STATS_PERIODS:
        raise InvalidArgument("period", f"must be one of {', '.join(STATS_PERIODS)}, got {period!r}")
    return period


def build_queue_stats(period: str, account_id: str | None = None) -> ApiRequest:
    """svckit's id-less ``GET /qstash/stats`` without an id; the vendor's ``/qstash/stats/{id}`` with one."""
    path = "/qstash/stats" if account_id is None else _path("/qstash/stats/{}", account_id)
    return _get(path, {"period": check_period(period)})


def decode_stats(body: Any) -> QueueStats:
    """The queue account's usage (``GET /qstash/stats``)."""
    return _decode(QueueStats, body, "queue stats", "the vendor's QStashStats")


def decode_database(body: Any, hide_credentials: bool = False) -> Database:
    """A database; with ``hide_credentials`` its tokens are None even if a service sent them."""
    if hide_credentials and isinstance(body, Mapping):
        body = {k: v for k, v in body.items() if k not in ("rest_token", "read_only_rest_token", "password")}
    return _decode(Database, body, "database", "the vendor's Database")


def decode_database_stats(body: Any) -> DatabaseStats:
    return _decode(DatabaseStats, body, "database stats", "the vendor's DatabaseStats")


def decode_vector_index(body: Any) -> VectorIndex:
    return _decode(VectorIndex, body, "vector index", "the vendor's VectorIndex")


def decode_vector_stats(body: Any) -> VectorStats:
    return _decode(VectorStats, body, "vector index stats", "the vendor's VectorStats")


def decode_search_index(body: Any) -> SearchIndex:
    return _decode(SearchIndex, body, "search index", "the vendor's SearchIndex")


def decode_databases(body: Any) -> list[Database]:
    return _decode_list(Database, body, "databases", "the vendor's Database")


def decode_vector_indexes(body: Any) -> list[VectorIndex]:
    return _decode_list(VectorIndex, body, "vector indexes", "the vendor's VectorIndex")


def decode_search_indexes(body: Any) -> list[SearchIndex]:
    return _decode_list(SearchIndex, body, "search indexes", "the vendor's SearchIndex")


def decode_queue_accounts(body: Any) -> list[QueueAccount]:
    return _decode_list(QueueAccount, body, "queue accounts", "the spec's queue account record")


def decode_ok(body: Any, what: str) -> str:
    """The JSON string ``"OK"`` of rename and upgrade."""
    if not isinstance(body, str):
        raise ProtocolError(f"{what}: expected the JSON string \"OK\", got {json.dumps(body)[:100]}")
    return body


def decode_account(body: Any, what: str) -> QueueAccount:
    """A queue account record (``GET /queue/user``, rotate token)."""
    return _decode(QueueAccount, body, what, "the spec's queue account record")


def _decode_list(model: type[M], body: Any, what: str, shape: str) -> list[M]:
    if body is None:  # the vendor answers null for an account without any
        return []
    if not isinstance(body, list):
        raise ProtocolError(f"{what}: expected a list (of {shape}), got {type(body).__name__}")
    return [_decode(model, item, what, shape) for item in body]


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
