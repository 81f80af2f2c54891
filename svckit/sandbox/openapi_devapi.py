"""Area C's vendor paths in the sandbox's OpenAPI document (:mod:`svckit.sandbox.openapi`): the
developer API paths the vendor's CLI and tools call, served beside the spec's
(:mod:`svckit.sandbox.devapi`). The plan names and periods are the ones the routes check.
"""

from __future__ import annotations

from typing import Any

from svckit.account.plans import SET_PLAN_NAMES
from svckit.sandbox.delivery.stats import PERIODS
from svckit.sandbox.openapi import _INT, _STRING, _json, _operation, _path_param, _query, _ref

_BOOL = {"type": "boolean"}
_POINTS = {"type": "array", "items": {"type": "object", "required": ["x", "y"], "properties": {
    "x": {"type": "string", "description": "a UTC time, the vendor's way: 2026-12-06 04:00:00.000 +0000 UTC"},
    "y": {"type": "number"}}}}
_DAYS = {"type": "array", "items": _STRING, "description": "day names (Sunday ...)"}
_LIMIT = {"type": "integer", "description": "the bound the sandbox enforces; -1 where it has none"}
_COMMON = {"region": {"type": "string", "enum": ["local"]}, "type": {"type": "string", "enum": ["free"]},
           "creation_time": {**_INT, "description": "Unix seconds"},
           "customer_id": {**_STRING, "description": "the devapi e-mail"},
           "endpoint": {**_STRING, "description": "the whole REST URL, on the origin the request came to"}}

DATABASE = {"type": "object", "required": ["database_id", "database_name", "endpoint", "region"], "properties": {
    "database_id": {"type": "string", "format": "uuid"}, "database_name": _STRING, **_COMMON,
    "primary_region": _STRING, "port": _INT, "tls": _BOOL, "state": _STRING, "eviction": _BOOL,
    "rest_token": _STRING, "read_only_rest_token": _STRING, "db_max_request_size": _LIMIT, "db_request_limit": _LIMIT,
    **dict.fromkeys(("db_max_entry_size", "db_memory_threshold", "db_disk_threshold", "db_max_clients",
                     "db_max_commands_per_second"), _LIMIT)}}
DATABASE_STATS = {"type": "object", "required": ["daily_net_commands", "current_storage"], "properties": {
    "daily_net_commands": _INT, "current_storage": _INT, "keyspace": _POINTS, "dailyrequests": _POINTS, "days": _DAYS}}
_INDEX_LIMITS = ("max_vector_count", "max_daily_queries", "max_daily_updates", "max_writes_per_second",
                 "max_query_per_second", "max_reads_per_request", "max_writes_per_request", "max_total_metadata_size")
VECTOR_INDEX = {"type": "object", "required": ["id", "name", "endpoint", "index_type"], "properties": {
    "id": {"type": "string", "format": "uuid"}, "name": _STRING, **_COMMON,
    "similarity_function": _STRING, "dimension_count": _INT, "embedding_model": _STRING,
    "sparse_embedding_model": _STRING, "index_type": {"type": "string", "enum": ["DENSE", "SPARSE", "HYBRID"]},
    "token": _STRING, "read_only_token": {**_STRING, "description": "empty: the sandbox has no read-only vector token"},
    **dict.fromkeys(_INDEX_LIMITS, _LIMIT)}}
VECTOR_STATS = {"type": "object", "required": ["current_vector_count", "daily_query_count"], "properties": {
    **dict.fromkeys(("current_vector_count", "pending_index_count", "daily_query_count", "daily_update_count",
                     "storage_usage"), _INT), "vector_count": _POINTS, "days": _DAYS}}
GLOBAL_STATS = {"type": "object", "required": ["record_count", "request", "storage"], "properties": {
    **dict.fromkeys(("record_count", "request", "storage", "bandwidth", "rerank_count"), _INT),
    "billing": {"type": "number"}}}
SEARCH_INDEX = {"type": "object", "required": ["id", "name"], "properties": {
    "id": _STRING, "name": _STRING, **_COMMON, "token": _STRING, "read_only_token": _STRING,
    **dict.fromkeys(_INDEX_LIMITS, _LIMIT)}}


def devapi_vendor_paths() -> dict[str, Any]:
    ok_string = _json({"type": "string", "enum": ["OK"]})
    bad_period = f"period is not one of {', '.join(PERIODS)}"
    period = [_query("period", {"type": "string", "enum": list(PERIODS)}, "the span of the time series")]
    qstash_id = _path_param("id", "the queue account's id (GET /qstash/users)")

    def get(operation_id: str, summary: str, schema: dict[str, Any], errors: dict[int, str] | None = None,
            params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return {"get": _operation("devapi", operation_id, summary, _json(schema), errors or {}, params=params)}

    def by_id(what: str, extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        return [_path_param("id", f"the {what}'s id (its list's)"), *(extra or [])]

    def listing(schema: dict[str, Any]) -> dict[str, Any]:
        return {"type": "array", "items": schema}

    return {
        "/devapi/v2/redis/databases": get("devapi_list_databases", "the key-value database ([] without the kv area)",
                                          listing(DATABASE)),
        "/devapi/v2/redis/database/{id}": get(
            "devapi_get_database", "one database", DATABASE, {404: "no such database"},
            by_id("database", [_query("credentials", {"type": "string", "enum": ["hide"]},
                                      "hide: no rest_token / read_only_rest_token")])),
        "/devapi/v2/redis/stats/{id}": get("devapi_database_stats", "the database's usage today (UTC)",
                                           DATABASE_STATS, {404: "no such database"}, by_id("database")),
        "/devapi/v2/vector/index": get("devapi_list_vector_indexes", "the vector indexes ([] without the vector area)",
                                       listing(VECTOR_INDEX)),
        "/devapi/v2/vector/index/stats": get("devapi_vector_stats_all", "today's usage over every vector index",
                                             GLOBAL_STATS, {400: bad_period}, period),
        "/devapi/v2/vector/index/{id}": get("devapi_get_vector_index", "one vector index", VECTOR_INDEX,
                                            {404: "no such index"}, by_id("index")),
        "/devapi/v2/vector/index/{id}/stats": get(
            "devapi_vector_index_stats", "the index's usage today (UTC)", VECTOR_STATS,
            {400: bad_period, 404: "no such index"}, by_id("index", period)),
        "/devapi/v2/search": get("devapi_list_search_indexes", "the search indexes", listing(SEARCH_INDEX)),
        "/devapi/v2/search/stats": get("devapi_search_stats_all", "the search indexes' usage (zeros: the sandbox "
                                       "serves no search data API)", GLOBAL_STATS, {400: bad_period}, period),
        "/devapi/v2/search/{id}": get("devapi_get_search_index", "one search index", SEARCH_INDEX,
                                      {404: "no such index"}, by_id("search index")),
        "/devapi/v2/search/{id}/stats": get(
            "devapi_search_index_stats", "the index's usage (zeros)", VECTOR_STATS,
            {400: bad_period, 404: "no such index"}, by_id("search index", period)),
        "/devapi/v2/qstash/users": get("devapi_list_queue_accounts", "the queue account (one per data directory)",
                                       listing(_ref("QueueAccount"))),
        "/devapi/v2/qstash/user/{id}": get("devapi_get_queue_account", "the queue account record",
                                           _ref("QueueAccount"), {404: "no such queue account"}, [qstash_id]),
        "/devapi/v2/qstash/rotate-token/{id}": {"post": _operation(
            "devapi", "devapi_rotate_queue_account_token", "new queue token and password; the old ones stop working",
            _json(_ref("QueueAccount")), {404: "no such queue account"}, params=[qstash_id])},
        "/devapi/v2/qstash/set-plan/{id}": {"post": _operation(
            "devapi", "devapi_set_queue_plan", "change the plan of the queue account (the vendor's or the spec's "
            "plan names; qstash_fixed_1m is queue_enterprise_1m)", ok_string,
            {400: "the body has no plan_name, or one not accepted", 404: "no such queue account"}, params=[qstash_id],
            body={"type": "object", "required": ["plan_name"], "properties": {
                "plan_name": {"type": "string", "enum": list(SET_PLAN_NAMES)}}})},
        "/devapi/v2/qstash/stats/{id}": get(
            "devapi_queue_account_stats", "the queue account's usage (the vendor's QStashStats)",
            {"type": "object", "required": ["days", "daily_requests", "dlq_message_count"]},
            {400: bad_period, 404: "no such queue account"}, [qstash_id, *period]),
    }
