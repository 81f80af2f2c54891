"""The OpenAPI 3.0 description of every route the sandbox serves, at ``GET /openapi.json`` (no auth).

Why a hand-written document rather than one generated from the routes: area A routes by raw path in
its own gateway (no Starlette routes to introspect) and the spec's error bodies and auth schemes are
not visible in handler signatures. Drift is prevented by a test instead
(tests/reliability/test_openapi.py): every route mounted in the app must appear here and every path
here must be served. The fuzz suites (schemathesis) generate their requests from this document.

Area A's ``/{command}/{arg1}/.../{argN}`` cannot be one OpenAPI path (a parameter never spans ``/``),
so it is described by its first few shapes; longer commands work the same way.
"""

from __future__ import annotations

import copy
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from svckit.queue.models import RunState
from svckit.sandbox.headers import vendor_alias
from svckit.sandbox.health import PATH as HEALTH_PATH

OPENAPI_PATH = "/openapi.json"
#: the paths served without credentials: this document, and the areas' health (no secret in either)
PUBLIC_PATHS = (OPENAPI_PATH, HEALTH_PATH)

# -- shared pieces ----------------------------------------------------------------------------------
_STRING = {"type": "string"}
_INT = {"type": "integer"}

# vector request pieces
_DENSE = {"type": "array", "items": {"type": "number"}, "minItems": 1}
_SPARSE = {"type": "object", "required": ["indices", "values"], "properties": {
    "indices": {"type": "array", "items": {"type": "integer"}}, "values": {"type": "array", "items": {"type": "number"}}}}
_INCLUDES = {"includeMetadata": {"type": "boolean", "default": False},
             "includeVectors": {"type": "boolean", "default": False},
             "includeData": {"type": "boolean", "default": False}}
# the sandbox's default limits (svckit/localindex/limits.py; a Sandbox option may raise them)
_QUERY_OPTIONS = {
    "topK": {"type": "integer", "default": 10, "minimum": 1, "maximum": 1000},
    **_INCLUDES,
    "filter": {"type": "string", "default": "", "maxLength": 16384},
    "weightingStrategy": {"type": "string", "enum": ["IDF"]},
    "fusionAlgorithm": {"type": "string", "enum": ["RRF", "DBSF"], "default": "RRF"},
    "queryMode": {"type": "string", "enum": ["HYBRID", "DENSE", "SPARSE"], "default": "HYBRID"},
    "maxIdle": {"type": "integer", "minimum": 1, "maximum": 86400,
                "description": "resumable queries: seconds it lives unused"},
}

SCHEMAS: dict[str, Any] = {
    "KvError": {
        "type": "object", "required": ["error"],
        "properties": {"error": {"type": "string", "description": "protocol error text"}},
    },
    "KvEnvelope": {
        "description": "`{result}` on success, `{error}` on failure (exactly one field)",
        "oneOf": [
            {"type": "object", "required": ["result"], "properties": {"result": {
                "nullable": True,
                "oneOf": [{"type": "integer"}, {"type": "string"},
                          {"type": "array", "items": {}}]}}},
            {"$ref": "#/components/schemas/KvError"},
        ],
    },
    "KvCommand": {
        "type": "array", "minItems": 1,
        "description": "command name, then its arguments in protocol order (a boolean is the text true or false)",
        "items": {"oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]},
    },
    "VectorError": {
        "type": "object", "required": ["error", "status"],
        "properties": {"error": _STRING, "status": {"type": "integer", "description": "the HTTP status"}},
    },
    "ApiError": {
        "type": "object", "required": ["error"],
        "properties": {"error": _STRING},
        "description": "error body of the developer management and queue interfaces (docs/errors.md)",
    },
    "Health": {
        "type": "object", "required": ["ok", "areas"],
        "properties": {"ok": {"type": "boolean"}, "areas": {
            "type": "object", "description": "each area's checks, by its prefix (kv, vector, devapi, queue)",
            "additionalProperties": {"type": "array", "items": {
                "type": "object", "required": ["check", "ok", "detail"],
                "properties": {"check": _STRING, "ok": {"type": "boolean"}, "detail": _STRING}}}}},
    },
    "SandboxError": {
        "type": "object", "required": ["error", "status"],
        "properties": {"error": _STRING, "status": _INT},
        "description": "a path outside every area's prefix",
    },
    "QueryRequest": {
        "type": "object", "required": ["data"],
        "properties": {"data": _STRING, **_QUERY_OPTIONS},
    },
    "VectorQueryRequest": {
        "type": "object", "description": "a query by `vector` and/or `sparseVector` (at least one)",
        "properties": {"vector": _DENSE, "sparseVector": _SPARSE, **_QUERY_OPTIONS},
    },
    "ResumableNext": {
        "type": "object", "required": ["uuid"],
        "properties": {"uuid": _STRING, "additionalK": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10}},
    },
    "ResumableEnd": {"type": "object", "required": ["uuid"], "properties": {"uuid": _STRING}},
    "UpsertVector": {
        "type": "object", "required": ["id"],
        "description": "`vector` (dense, hybrid) and/or `sparseVector` (sparse, hybrid); nothing is embedded",
        "properties": {"id": _STRING, "vector": _DENSE, "sparseVector": _SPARSE, "metadata": {"type": "object"},
                       "data": _STRING},
    },
    "RangeRequest": {
        "type": "object", "required": ["limit"],
        "properties": {"cursor": {"type": "string", "default": ""}, "limit": {"type": "integer", "minimum": 1},
                       "prefix": _STRING, **_INCLUDES},
    },
    "UpdateRequest": {
        "type": "object", "required": ["id"],
        "properties": {"id": _STRING, "vector": _DENSE, "sparseVector": _SPARSE, "data": _STRING,
                       "metadata": {"type": "object"},
                       "metadataUpdateMode": {"type": "string", "enum": ["OVERWRITE", "PATCH"],
                                              "default": "OVERWRITE"}},
    },
    "QueryResult": {
        "type": "object", "required": ["id", "score"],
        "properties": {
            "id": _STRING, "score": {"type": "number"},
            "vector": {"type": "array", "items": {"type": "number"}},
            "sparseVector": {"type": "object", "properties": {
                "indices": {"type": "array", "items": {"type": "integer"}},
                "values": {"type": "array", "items": {"type": "number"}}}},
            "metadata": {"type": "object"}, "data": _STRING,
        },
    },
    "UpsertData": {
        "type": "object", "required": ["id", "data"],
        "properties": {"id": _STRING, "data": _STRING, "metadata": {"type": "object"}},
    },
    "FetchRequest": {
        "type": "object", "description": "exactly one of `ids` and `prefix`",
        "properties": {"ids": {"type": "array", "items": _STRING}, "prefix": {"type": "string", "minLength": 1},
                       **_INCLUDES},
    },
    "DeleteRequest": {
        "oneOf": [{"type": "object", "description": "exactly one of `ids`, `prefix` and `filter`",
                   "properties": {"ids": {"type": "array", "items": _STRING},
                                  "prefix": {"type": "string", "minLength": 1}, "filter": _STRING}},
                  {"type": "array", "items": _STRING}],
    },
    "QueueAccount": {
        "type": "object",
        "required": ["customer_id", "id", "password", "token", "active", "state", "type"],
        "properties": {
            "customer_id": _STRING, "id": {"type": "string", "format": "uuid"}, "password": _STRING,
            "token": _STRING, "active": {"type": "boolean"}, "state": {"type": "string", "enum": ["active", "passive"]},
            "last_plan_upgrade_time": _INT, "max_message_size": _INT, "max_requests_per_day": _INT,
            "max_requests_per_day_hard": _INT, "max_endpoints_per_topic": _INT, "max_requests_per_second": _INT,
            "max_dlq_size": _INT, "max_retries": _INT, "max_topics": _INT, "max_schedules": _INT,
            "max_events_size": _INT, "max_dlq_retention_time_milis": _INT, "max_delay": _INT,
            "max_parallelism": _INT, "max_global_parallelism": _INT, "max_queues": _INT,
            "prod_pack_enabled": {"type": "boolean"}, "timeout": _INT,
            "type": {"type": "string", "enum": ["free", "paid"]},
            "reserved_type": {"type": "string", "enum": ["", "paid", "queue_enterprise_1m", "queue_enterprise_10m"]},
            "reserved_price": {"type": "number"}, "created_by": _STRING, "creation_time": _INT,
        },
    },
    "Step": {
        "type": "object",
        "properties": {"stepId": _INT, "stepName": _STRING, "stepType": _STRING, "callType": _STRING,
                       "messageId": _STRING, "out": _STRING, "concurrent": _INT, "state": _STRING,
                       "createdAt": _INT},
    },
    "WorkflowRun": {
        "type": "object", "required": ["workflowRunId", "workflowUrl", "workflowState", "workflowRunCreatedAt"],
        "properties": {
            "workflowRunId": _STRING, "workflowUrl": _STRING,
            "workflowState": {"type": "string", "enum": [s.value for s in RunState]},
            "workflowRunCreatedAt": _INT, "workflowRunCompletedAt": _INT,
            "steps": {"type": "array", "items": {"type": "object", "properties": {
                "type": {"type": "string", "enum": ["sequential", "parallel"]},
                "steps": {"type": "array", "items": {"$ref": "#/components/schemas/Step"}}}}},
        },
    },
    "RunHandle": {
        "type": "object", "required": ["workflowRunId", "workflowCreatedAt"],
        "properties": {"workflowRunId": _STRING, "workflowCreatedAt": _INT},
    },
}

SECURITY_SCHEMES: dict[str, Any] = {
    "kvBearer": {"type": "http", "scheme": "bearer",
                 "description": "SVC_KV_TOKEN (Standard), SVC_KV_READONLY_TOKEN or an ACL REST token"},
    "kvQueryToken": {"type": "apiKey", "in": "query", "name": "_token"},
    "vectorBearer": {"type": "http", "scheme": "bearer", "description": "SVC_VECTOR_TOKEN"},
    "devapiBasic": {"type": "http", "scheme": "basic", "description": "SVC_DEVAPI_EMAIL : SVC_DEVAPI_KEY"},
    "queueBearer": {"type": "http", "scheme": "bearer",
                    "description": "the queue account's current token (SVC_QUEUE_TOKEN); rotated through the devapi"},
}

# which error schema each area answers with, and its auth
_AREA_ERROR = {"kv": "KvError", "vector": "VectorError", "devapi": "ApiError", "queue": "ApiError"}
_AREA_SECURITY: dict[str, list[dict[str, list[str]]]] = {
    "kv": [{"kvBearer": []}, {"kvQueryToken": []}],
    "vector": [{"vectorBearer": []}],
    "devapi": [{"devapiBasic": []}],
    "queue": [{"queueBearer": []}],
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"description": description or "JSON", "content": {"application/json": {"schema": schema}}}


def _path_param(name: str, description: str = "", **schema: Any) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "string", **schema}}


def _query(name: str, schema: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


def _header(name: str, schema: dict[str, Any], description: str = "") -> dict[str, Any]:
    alias = vendor_alias(name)
    if alias is not None:  # see svckit/sandbox/headers.py
        description = f"{description}; also accepted as {alias}" if description else f"also accepted as {alias}"
    return {"name": name, "in": "header", "required": False, "schema": schema, "description": description}


def _operation(area: str, operation_id: str, summary: str, ok: dict[str, Any], errors: dict[int, str], *,
               params: list[dict[str, Any]] | None = None, body: dict[str, Any] | None = None,
               body_required: bool = True) -> dict[str, Any]:
    error = _ref(_AREA_ERROR[area])
    responses: dict[str, Any] = {"200": ok, "401": _json(error, "missing, malformed or wrong credentials")}
    for status, why in errors.items():
        responses[str(status)] = _json(error, why)
    op: dict[str, Any] = {"operationId": operation_id, "summary": summary, "tags": [area],
                          "security": _AREA_SECURITY[area], "responses": responses}
    if params:
        op["parameters"] = params
    if body is not None:
        op["requestBody"] = {"required": body_required, "content": {"application/json": {"schema": body}}}
        responses.setdefault("413", _json(error, "the body is over this interface's size cap (docs/security.md)"))
    return op


# -- area A: key-value REST ---------------------------------------------------------------------------
_KV_FORMAT_HEADERS = [
    _header("Service-Encoding", {"type": "string", "enum": ["base64"]},
            "all strings in the reply base64-encoded, except OK"),
    _header("Service-Response-Format", {"type": "string", "enum": ["json", "resp2"]},
            "resp2: the raw binary reply; with base64 it is a 400"),
]
_KV_OK = {"description": "the protocol reply", "content": {
    "application/json": {"schema": _ref("KvEnvelope")},
    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}
_KV_BATCH_OK = _json({"type": "array", "items": _ref("KvEnvelope")}, "one envelope per command, in order")
_KV_ERRORS = {400: "syntax error, unsupported or refused command, or the command failed",
              503: "the backing Redis is away (a redis-server child being restarted, an external one down): "
                   "retry after the Retry-After header's seconds"}
_SSE_OK = {"description": "an event stream: one `data:` line per event",
           "content": {"text/event-stream": {"schema": {"type": "string"}}}}
_COMMAND = _path_param("command", "command name, e.g. GET, SET, HSET (case-insensitive)", minLength=1)


def _kv_command_path(nargs: int) -> dict[str, Any]:
    params = [_COMMAND] + [_path_param(f"arg{i}", f"argument {i}, percent-encoded") for i in range(1, nargs + 1)]
    params += _KV_FORMAT_HEADERS
    ops: dict[str, Any] = {}
    for method in ("get", "head", "post", "put"):
        body = None
        if method in ("post", "put"):
            body = {"description": "optional: appended as the last argument", "required": False,
                    "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                                "text/plain": {"schema": {"type": "string"}}}}
        op = _operation("kv", f"kv_{method}_command_{nargs}", f"run a command with {nargs} path argument(s)",
                        _KV_OK, _KV_ERRORS, params=params)
        if body is not None:
            op["requestBody"] = body
        ops[method] = op
    return ops


def _kv_paths() -> dict[str, Any]:
    batch_body = {"type": "array", "minItems": 1, "items": _ref("KvCommand")}
    paths: dict[str, Any] = {
        "/kv/": {"post": _operation("kv", "kv_command_json", "one command as a JSON array", _KV_OK,
                                    _KV_ERRORS, params=_KV_FORMAT_HEADERS, body=_ref("KvCommand"))},
        "/kv/pipeline": {"post": _operation("kv", "kv_pipeline", "many commands, not atomic", _KV_BATCH_OK,
                                            _KV_ERRORS, params=_KV_FORMAT_HEADERS, body=batch_body)},
        "/kv/multi-exec": {"post": _operation(
            "kv", "kv_multi_exec", "many commands in one atomic transaction", _KV_BATCH_OK,
            {400: "the whole transaction was discarded (a single {error})", 503: _KV_ERRORS[503]},
            params=_KV_FORMAT_HEADERS, body=batch_body)},
        "/kv/monitor": {"post": _operation(
            "kv", "kv_monitor", "stream every executed command (Standard token only)", _SSE_OK,
            {400: "not the Standard token"},
            params=[_header("Accept", {"type": "string", "enum": ["text/event-stream"]})])},
        "/kv/subscribe/{channel}": {"post": _operation(
            "kv", "kv_subscribe", "stream the messages published on a channel", _SSE_OK, {},
            params=[_path_param("channel"), _header("Accept", {"type": "string", "enum": ["text/event-stream"]})])},
        "/kv/publish/{channel}/{message}": {"post": _operation(
            "kv", "kv_publish", "publish a message; the reply is the number of receivers", _KV_OK, _KV_ERRORS,
            params=[_path_param("channel"), _path_param("message"), *_KV_FORMAT_HEADERS])},
    }
    for nargs in range(4):
        path = "/kv/{command}" + "".join(f"/{{arg{i}}}" for i in range(1, nargs + 1))
        paths[path] = _kv_command_path(nargs)
    return paths


# -- area B: vector ----------------------------------------------------------------------------------
_INDEX = _path_param("index", "dense, sparse, hybrid, or nomodel (an index without an embedding model)")
_NAMESPACE = _path_param("namespace", "the namespace; the default namespace has none", minLength=1)
_VECTOR_ERRORS = {400: "malformed body, wrong types, bad filter", 404: "no such index",
                  405: "wrong method for the operation"}


def _vector_paths() -> dict[str, Any]:
    def one_or_many(name: str) -> dict[str, Any]:
        return {"oneOf": [_ref(name), {"type": "array", "minItems": 1, "items": _ref(name)}]}

    def result(schema: dict[str, Any]) -> dict[str, Any]:
        return _json({"type": "object", "required": ["result"], "properties": {"result": schema}})

    no_model = {**_VECTOR_ERRORS, 422: "the index has no embedding model"}
    unknown = {**_VECTOR_ERRORS, 404: "no such index, or the resumable query was stopped or expired"}
    success, obj, arr = {"type": "string", "enum": ["Success"]}, {"type": "object"}, {"type": "array"}
    # name -> (summary, body, result schema, errors, takes a namespace)
    operations: dict[str, tuple[str, dict[str, Any] | None, dict[str, Any], dict[int, str], bool]] = {
        "query-data": ("text query: embed `data` and return the nearest vectors", one_or_many("QueryRequest"),
                       arr, no_model, True),
        "query": ("query by dense and/or sparse vector", one_or_many("VectorQueryRequest"), arr, _VECTOR_ERRORS,
                  True),
        "resumable-query-data": ("start a resumable text query -> {uuid, scores}", _ref("QueryRequest"), obj,
                                 no_model, True),
        "resumable-query": ("start a resumable vector query -> {uuid, scores}", _ref("VectorQueryRequest"), obj,
                            _VECTOR_ERRORS, True),
        "resumable-query-next": ("the next additionalK results of a resumable query", _ref("ResumableNext"), arr,
                                 unknown, False),
        "resumable-query-end": ("stop a resumable query", _ref("ResumableEnd"), success, unknown, False),
        "upsert-data": ("embed and store texts", one_or_many("UpsertData"), success, no_model, True),
        "upsert": ("store vectors as given", one_or_many("UpsertVector"), success, _VECTOR_ERRORS, True),
        "fetch": ("vectors by id or id prefix", _ref("FetchRequest"), arr, _VECTOR_ERRORS, True),
        "range": ("a page of vectors in id order -> {nextCursor, vectors}", _ref("RangeRequest"), obj,
                  _VECTOR_ERRORS, True),
        "delete": ("delete vectors by id, id prefix or metadata filter -> {deleted}", _ref("DeleteRequest"), obj,
                   _VECTOR_ERRORS, True),
        "update": ("change a vector, its data or metadata -> {updated}", _ref("UpdateRequest"), obj,
                   _VECTOR_ERRORS, True),
        "reset": ("remove every vector of the namespace (`?all`: of every namespace)", None, success,
                  _VECTOR_ERRORS, True),
        "list-namespaces": ("names of the namespaces (the default one is \"\")", None, arr, _VECTOR_ERRORS, False),
        "delete-namespace": ("delete a namespace (not the default one)", None, success,
                             {**_VECTOR_ERRORS, 404: "no such index or namespace"}, True),
    }
    paths: dict[str, Any] = {}
    for name, (summary, body, out, errors, namespaced) in operations.items():
        key = name.replace("-", "_")
        params = [_INDEX]
        if name == "reset":
            params = [_INDEX, _query("all", {"type": "string"}, "present: reset every namespace")]
        paths[f"/vector/{{index}}/{name}"] = {"post": _operation(
            "vector", f"vector_{key}", summary, result(out), errors, params=params, body=body,
            body_required=body is not None)}
        if namespaced:
            paths[f"/vector/{{index}}/{name}/{{namespace}}"] = {"post": _operation(
                "vector", f"vector_{key}_in_namespace", f"{summary}, in a namespace", result(out), errors,
                params=[*params, _NAMESPACE], body=body, body_required=body is not None)}
    info = _operation("vector", "vector_info", "index statistics with per-namespace counts", result(obj),
                      {404: "no such index"}, params=[_INDEX])
    paths["/vector/{index}/info"] = {"get": info, "post": {**info, "operationId": "vector_info_post"}}
    return paths


# -- area C: developer management --------------------------------------------------------------------
def _devapi_paths() -> dict[str, Any]:
    ok_string = _json({"type": "string", "enum": ["OK"]})
    bad_body = "the body is not a JSON object, or a field is missing or of the wrong type"
    return {
        "/devapi/v2/search/{id}/rename": {"post": _operation(
            "devapi", "devapi_rename_search_index", "rename a search index", ok_string,
            {400: bad_body, 404: "no such index"}, params=[_path_param("id", "the index identifier")],
            body={"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 1}}})},
        "/devapi/v2/queue/user": {"get": _operation(
            "devapi", "devapi_get_queue_user", "the queue account record", _json(_ref("QueueAccount")), {})},
        "/devapi/v2/queue/user/rotatetoken": {"post": _operation(
            "devapi", "devapi_rotate_queue_token", "new queue token and password; the old ones stop working",
            _json(_ref("QueueAccount")), {})},
        "/devapi/v2/queue-upgrade": {"post": _operation(
            "devapi", "devapi_queue_upgrade", "change the plan of the queue account", ok_string,
            {400: bad_body, 404: "no queue account for that customer"},
            body={"type": "object", "required": ["customer_id", "plan_name"], "properties": {
                "customer_id": _STRING,
                "plan_name": {"type": "string", "enum": ["paid", "queue_enterprise_1m", "queue_enterprise_10m"]}}})},
        "/devapi/v2/qstash/stats": {"get": _operation(
            "devapi", "devapi_queue_stats", "the queue account's usage (the vendor's QStashStats)",
            _json({"type": "object", "required": ["days", "daily_requests", "dlq_message_count"]}),
            {400: "period is not one of 1h, 3h, 12h, 1d, 3d, 7d, 30d"},
            params=[_query("period", {"type": "string", "enum": ["1h", "3h", "12h", "1d", "3d", "7d", "30d"]},
                           "the span of the time series (60 points; 240 for 30d)")])},
    }


def _build() -> dict[str, Any]:
    paths: dict[str, Any] = {
        OPENAPI_PATH: {"get": {"operationId": "openapi", "summary": "this document", "tags": ["sandbox"],
                               "security": [], "responses": {"200": _json({"type": "object"})}}},
        HEALTH_PATH: {"get": {"operationId": "health", "tags": ["sandbox"], "security": [],
                              "summary": "what each area depends on, checked now (Redis, the index, SQLite)",
                              "responses": {"200": _json(_ref("Health"), "every check passed"),
                                            "503": _json(_ref("Health"), "a check failed")}}},
    }
    # area C's vendor paths and area D's are in modules of their own; they use the helpers above (defined by now)
    from svckit.sandbox.openapi_delivery import delivery_paths
    from svckit.sandbox.openapi_devapi import devapi_vendor_paths
    from svckit.sandbox.openapi_queue import queue_paths

    for part in (_kv_paths(), _vector_paths(), _devapi_paths(), devapi_vendor_paths(), queue_paths(), delivery_paths()):
        paths.update(part)
    for item in paths.values():  # anything outside the areas is a 404 from the sandbox itself
        for op in item.values():
            op["responses"].setdefault("404", _json(_ref("SandboxError"), "not found"))
    return {
        "openapi": "3.0.3",
        "info": {"title": "svckit sandbox", "version": "1.0.0",
                 "description": "Every route of the embedded sandbox: key-value REST (/kv), vector (/vector), "
                                "developer management (/devapi/v2) and queue (/queue). The contract is "
                                "service-interface.md; this document describes what the sandbox serves. Every "
                                "Service-* request header is also accepted under its vendor name Upstash-* (the "
                                "neutral one wins when both are sent). A write the data directory's disk refuses (full, "
                                "read-only) answers 507 with the error body of its area, naming the file."},
        "tags": [{"name": n} for n in ("sandbox", "kv", "vector", "devapi", "queue")],
        "paths": paths,
        "components": {"schemas": SCHEMAS, "securitySchemes": SECURITY_SCHEMES},
    }


_DOCUMENT = _build()


def document() -> dict[str, Any]:
    """A fresh copy of the document (callers may change theirs)."""
    return copy.deepcopy(_DOCUMENT)


async def openapi_endpoint(request: Request) -> JSONResponse:
    return JSONResponse(_DOCUMENT)
