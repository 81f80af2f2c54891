"""The local QStash's part of the sandbox's OpenAPI document (:mod:`svckit.sandbox.openapi`): the routes
of :mod:`svckit.sandbox.delivery` (messages, queues, URL groups, schedules, signing keys)."""

from __future__ import annotations

from typing import Any

from svckit.sandbox.openapi import _INT, _STRING, _header, _json, _operation, _path_param, _query

_OK = _json({"type": "string", "enum": ["OK"]})
_BOOL = {"type": "boolean"}
_OBJECT = {"type": "object"}
_DURATION = {"type": "string", "pattern": r"^(\d+(\.\d+)?(ms|s|m|h|d))+$|^\d+$"}
_ANSWER = {"type": "object", "required": ["messageId"], "properties": {
    "messageId": _STRING, "url": _STRING, "deduplicated": _BOOL}}
_PUBLISHED = {"oneOf": [_ANSWER, {"type": "array", "items": _ANSWER}]}
_MESSAGE = {"type": "object", "required": ["messageId", "url", "method", "maxRetries", "notBefore", "createdAt"]}
_QUEUE = {"type": "object", "required": ["name", "parallelism", "createdAt", "updatedAt", "lag", "paused"]}
_GROUP = {"type": "object", "required": ["name", "createdAt", "updatedAt", "endpoints"]}
_SCHEDULE = {"type": "object", "required": ["scheduleId", "destination", "cron", "createdAt", "method", "retries"]}
_KEYS = _json({"type": "object", "required": ["current", "next"], "properties": {"current": _STRING, "next": _STRING}})
_ENDPOINTS = {"type": "object", "required": ["endpoints"], "properties": {"endpoints": {
    "type": "array", "minItems": 1, "items": {"type": "object", "properties": {"url": _STRING, "name": _STRING}}}}}

#: the options of a message, as request headers (each also accepted as Upstash-*)
MESSAGE_HEADERS = [
    _header("Service-Method", {"type": "string", "enum": ["GET", "POST", "PUT", "DELETE", "PATCH"]}),
    _header("Service-Delay", _DURATION, "deliver after this long"),
    _header("Service-Not-Before", {"type": "integer", "minimum": 0}, "deliver from this Unix time (s); wins over the delay"),
    _header("Service-Retries", {"type": "integer", "minimum": 0}),
    _header("Service-Retry-Delay", _STRING, "milliseconds as an expression of `retried`"),
    _header("Service-Timeout", _DURATION),
    _header("Service-Callback", _STRING, "a URL told of every attempt"),
    _header("Service-Failure-Callback", _STRING, "a URL told when the retries are spent"),
    _header("Service-Deduplication-Id", _STRING),
    _header("Service-Content-Based-Deduplication", {"type": "string", "enum": ["true", "false", "True", "False"]}),
    _header("Service-Flow-Control-Key", _STRING),
    _header("Service-Flow-Control-Value", _STRING, "parallelism=N, rate=N, period=DURATION"),
    _header("Service-Label", _STRING),
    _header("Service-Redact-Fields", _STRING, "body, header, header[Name]"),
]
_MESSAGE_ERRORS = {400: "a header cannot be read, or the destination is not on loopback (the sandbox's rule)",
                   404: "no such URL group", 412: "over the account's max_queues",
                   413: "the body is over the account's max_message_size",
                   429: "over the account's daily message limit (RateLimit-* headers)"}


def _published(operation_id: str, summary: str, params: list[dict[str, Any]]) -> dict[str, Any]:
    op = _operation("queue", operation_id, summary, _json(_PUBLISHED, "the message, or one per endpoint of a URL group"),
                    _MESSAGE_ERRORS, params=[*params, *MESSAGE_HEADERS], body={}, body_required=False)
    op["responses"]["202"] = _json(_PUBLISHED, "a duplicate: the first message's answer, deduplicated")
    return op


def delivery_paths() -> dict[str, Any]:
    destination = _path_param("destination", "a URL (http or https, on loopback) or a URL group's name")
    name, schedule_id = _path_param("name"), _path_param("scheduleId")
    return {
        "/queue/v2/publish/{destination}": {"post": _published(
            "queue_publish", "publish a message to a URL or a URL group", [destination])},
        "/queue/v2/enqueue/{queue}/{destination}": {"post": _published(
            "queue_enqueue", "publish a message on a queue (delivered in order)", [_path_param("queue"), destination])},
        "/queue/v2/messages/{messageId}": {
            "get": _operation("queue", "queue_get_message", "a message waiting for delivery", _json(_MESSAGE),
                              {404: "no such message waiting"}, params=[_path_param("messageId")]),
            "delete": _operation("queue", "queue_cancel_message", "cancel a message waiting for delivery",
                                 _json({"type": "object", "properties": {"cancelled": _INT}}),
                                 {404: "no such message waiting"}, params=[_path_param("messageId")])},
        "/queue/v2/messages": {"delete": _operation(
            "queue", "queue_cancel_messages", "cancel waiting messages by ids or filters (none: all)",
            _json({"type": "object", "required": ["cancelled"], "properties": {"cancelled": _INT}}),
            {400: "a parameter or the body has the wrong type"},
            params=[_query(p, _STRING) for p in ("messageIds", "topicName", "queueName", "url", "label",
                                                 "flowControlKey", "scheduleId", "callerIp")]
            + [_query(p, _INT) for p in ("fromDate", "toDate", "count")],
            body={"type": "object", "properties": {"messageIds": {"type": "array", "items": _STRING}}},
            body_required=False)},
        "/queue/v2/queues": {
            "post": _operation("queue", "queue_upsert_queue", "make or change a queue", _OK,
                               {400: "a field has the wrong type", 412: "over max_queues or max_parallelism"},
                               body={"type": "object", "required": ["queueName"], "properties": {
                                   "queueName": _STRING, "parallelism": {"type": "integer", "minimum": 1},
                                   "paused": _BOOL}}),
            "get": _operation("queue", "queue_list_queues", "every queue", _json({"type": "array", "items": _QUEUE}), {})},
        "/queue/v2/queues/{name}": {
            "get": _operation("queue", "queue_get_queue", "one queue", _json(_QUEUE), {}, params=[name]),
            "delete": _operation("queue", "queue_delete_queue", "delete a queue (its waiting messages are canceled)",
                                 _OK, {}, params=[name])},
        **{f"/queue/v2/queues/{{name}}/{verb}": {"post": _operation(
            "queue", f"queue_{verb}_queue", f"{verb} a queue", _OK, {}, params=[name])} for verb in ("pause", "resume")},
        "/queue/v2/topics": {"get": _operation("queue", "queue_list_url_groups", "every URL group",
                                               _json({"type": "array", "items": _GROUP}), {})},
        "/queue/v2/topics/{name}": {
            "get": _operation("queue", "queue_get_url_group", "one URL group", _json(_GROUP), {}, params=[name]),
            "delete": _operation("queue", "queue_delete_url_group", "delete a URL group", _OK, {}, params=[name])},
        "/queue/v2/topics/{name}/endpoints": {
            "post": _operation("queue", "queue_add_endpoints", "add endpoints (a new group is made)", _OK,
                               {400: "an endpoint has no url, or it is not on loopback",
                                412: "over max_topics or max_endpoints_per_topic"}, params=[name], body=_ENDPOINTS),
            "delete": _operation("queue", "queue_remove_endpoints", "remove endpoints by url or name", _OK,
                                 {400: "an endpoint has neither url nor name"}, params=[name], body=_ENDPOINTS)},
        "/queue/v2/schedules": {"get": _operation("queue", "queue_list_schedules", "every schedule",
                                                  _json({"type": "array", "items": _SCHEDULE}), {})},
        "/queue/v2/schedules/{scheduleId}": {
            "get": _operation("queue", "queue_get_schedule", "one schedule", _json(_SCHEDULE), {}, params=[schedule_id]),
            "delete": _operation("queue", "queue_delete_schedule", "delete a schedule", _OK, {}, params=[schedule_id]),
            "post": _published("queue_create_schedule", "make a schedule (or replace one, Service-Schedule-Id)",
                               [_path_param("scheduleId", "the destination: a URL or a URL group's name"),
                                _header("Service-Cron", _STRING, "five cron fields (a sixth, seconds, in the sandbox)"),
                                _header("Service-Schedule-Id", _STRING), _header("Service-Queue-Name", _STRING)])},
        **{f"/queue/v2/schedules/{{scheduleId}}/{verb}": {method: _operation(
            "queue", f"queue_{verb}_schedule_{method}", f"{verb} a schedule", _OK, {}, params=[schedule_id])
            for method in ("patch", "post")} for verb in ("pause", "resume")},
        "/queue/v2/dlq/retry/{dlqId}": {"post": _operation(
            "queue", "queue_retry_dlq_message", "deliver a failed message again, as a new message",
            _json(_ANSWER), {404: "no DLQ entry of a message"}, params=[_path_param("dlqId")])},
        "/queue/v2/dlq/retry": {"post": _operation(
            "queue", "queue_retry_dlq_messages", "deliver failed messages again: by dlqIds, or a page of a filter",
            _json({"type": "object", "required": ["responses"], "properties": {
                "cursor": _STRING, "responses": {"type": "array", "items": _ANSWER}}}),
            {400: "a parameter has the wrong type"},
            params=[_query("dlqIds", {"type": "array", "items": _STRING}), _query("cursor", _STRING),
                    _query("count", {"type": "integer", "minimum": 1})])},
        "/queue/v2/keys": {"get": _operation("queue", "queue_signing_keys", "the current and next signing keys", _KEYS, {})},
        "/queue/v2/keys/rotate": {"post": _operation(
            "queue", "queue_rotate_signing_keys", "the next key becomes current; a new next key", _KEYS, {})},
    }
