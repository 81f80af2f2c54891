"""Area D's part of the sandbox's OpenAPI document (:mod:`svckit.sandbox.openapi`): the queue routes of
:mod:`svckit.sandbox.queue`. The filter parameters are made from the filter tables the routes use
(:mod:`svckit.sandbox.queue_reads`), so the document and the routes cannot disagree on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svckit.queue.models import RunState
from svckit.sandbox.openapi import _INT, _STRING, _header, _json, _operation, _path_param, _query, _ref
from svckit.sandbox.queue_reads import (
    DLQ_FILTERS,
    EVENT_FILTERS,
    EVENT_STATES,
    MAX_BULK_COUNT,
    MAX_DLQ_COUNT,
    MAX_EVENTS_COUNT,
    MAX_LOGS_COUNT,
    RUN_FILTERS,
    Filter,
)

_IDS = {"type": "array", "items": {"type": "string", "minLength": 1}}


def _filter_params(filters: Sequence[Filter]) -> list[dict[str, Any]]:
    params = []
    for f in filters:
        schema: dict[str, Any] = _INT if f.numeric else _STRING
        description = ""
        if f.many:
            schema = {"type": "array", "items": schema}
            description = "repeat it to match any of several values"
        params.append({**_query(f.param, schema, description), **({"style": "form", "explode": True} if f.many else {})})
    return params


def _repeated(name: str) -> dict[str, Any]:
    return {**_query(name, {"type": "array", "items": _STRING}), "style": "form", "explode": True}


def _page_params(maximum: int, default: int | None = None) -> list[dict[str, Any]]:
    return [_query("cursor", _STRING, "the cursor of the previous page"),
            _query("count", {"type": "integer", "minimum": 1, "maximum": maximum, "default": default or maximum})]


def queue_paths() -> dict[str, Any]:
    states = {"type": "string", "enum": [s.value for s in RunState]}
    logs_params = [*_page_params(MAX_LOGS_COUNT), *_filter_params(RUN_FILTERS), _query("state", states)]
    runs_page = _json({"type": "object", "required": ["runs"], "properties": {
        "cursor": _STRING, "runs": {"type": "array", "items": _ref("WorkflowRun")}}})
    run_headers = [
        _header("Service-Flow-Control-Key", _STRING), _header("Service-Flow-Control-Value", _STRING),
        _header("Service-Retries", {"type": "integer", "minimum": 0}),
        _header("Service-Workflow-RunId", _STRING),
    ]
    dlq_ids_body = {"type": "object", "properties": {"dlqIds": _IDS}}
    workflow_runs = {"workflowRuns": {"type": "array", "items": _ref("RunHandle")}}
    many_runs = _json({"type": "object", "required": ["workflowRuns"], "properties": workflow_runs},
                      "the fresh runs, in the order given")
    from_dlq_errors = {400: "no dlqIds, or a header has the wrong type",
                       404: "one of the DLQ entries does not exist (nothing started)",
                       422: "a workflow is not registered"}
    dlq_message = {"type": "object", "required": ["dlqId", "messageId", "url", "method", "maxRetries",
                                                  "notBefore", "createdAt", "responseStatus"]}
    selection = [*_page_params(MAX_BULK_COUNT, 100), *_filter_params(DLQ_FILTERS)]  # dlqIds among the filters
    selected_runs = _json({"type": "object", "required": ["workflowRuns"], "properties": {
        "cursor": _STRING, **workflow_runs}}, "the fresh runs; cursor while more entries match")
    selected_errors = {400: "a parameter or header has the wrong type", 404: "a DLQ id does not exist",
                       422: "a workflow is not registered"}
    handle = _json(_ref("RunHandle"))
    from_dlq: dict[str, Any] = {}
    for verb, how in (("resume", "from where it failed (succeeded steps are kept)"),
                      ("restart", "from its first step (nothing is kept)")):
        from_dlq |= {
            f"/queue/v2/workflows/dlq/{verb}": {"post": _operation(
                "queue", f"queue_{verb}_dlq_selected", f"{verb} failed runs by ids, or a page of those a filter "
                "selects", selected_runs, selected_errors, params=[*selection, *run_headers])},
            f"/queue/v2/dlq/{verb}/{{dlqId}}": {"post": _operation(
                "queue", f"queue_{verb}_dlq", f"{verb} a failed run {how}", handle,
                {400: "a header has the wrong type", 404: "no such DLQ entry", 422: "the workflow is not registered"},
                params=[_path_param("dlqId"), *run_headers])},
            f"/queue/v2/dlq/{verb}": {"post": _operation(
                "queue", f"queue_{verb}_dlq_many", f"{verb} several failed runs (dlqIds in the body or the query)",
                many_runs, from_dlq_errors, params=[_repeated("dlqIds"), *run_headers],
                body=dlq_ids_body, body_required=False)},
        }
    return {
        **from_dlq,
        "/queue/v2/workflows/logs": {"get": _operation(
            "queue", "queue_workflow_logs", "workflow runs with their steps, newest first, paginated", runs_page,
            {400: "a parameter has the wrong type or is out of range"}, params=logs_params)},
        "/queue/v2/workflows/events": {"get": _operation(
            "queue", "queue_workflow_events", "the workflow SDK's logs(): runs grouped from their events",
            runs_page, {400: "groupBy is not workflowRunId, or a parameter is wrong"},
            params=[_query("groupBy", {"type": "string", "enum": ["workflowRunId"]}), *logs_params])},
        "/queue/v2/workflows/runs/{workflowRunId}": {
            "delete": _operation(
                "queue", "queue_cancel_run", "cancel a run in progress; with cancel=false, the workflow's app "
                "ends its run (the body is the run's response)", _json({"type": "string", "enum": ["OK"]}),
                {404: "no such run", 422: "the run is not in progress"},
                params=[_path_param("workflowRunId"), _query("cancel", {"type": "string", "enum": ["true", "false"]})]),
            "get": _operation(
                "queue", "queue_run_history", "a served run's history, as its deliveries carry it (the JS "
                "workflow SDK reads it when a delivery comes without a body)",
                _json({"type": "array", "items": {"type": "object"}}), {404: "no such run in progress"},
                params=[_path_param("workflowRunId")])},
        "/queue/v2/wait/{eventId}": {"post": _operation(
            "queue", "queue_wait_for_event", "a run's waitForEvent step: wait for the event until notified or "
            "its timeout", _json({"type": "object"}), {400: "the body is not a JSON object of a wait"},
            params=[_path_param("eventId")], body={"type": "object"})},
        "/queue/v2/notify/{eventId}": {"post": _operation(
            "queue", "queue_notify", "notify every run waiting for the event (the body is the event's data)",
            _json({"type": "array", "items": {"type": "object"}}), {}, params=[_path_param("eventId")])},
        "/queue/v2/notify/{workflowRunId}/{eventId}": {"post": _operation(
            "queue", "queue_notify_run", "notify one run waiting for the event (the body is the event's data)",
            _json({"type": "object"}), {404: "the run does not wait for that event"},
            params=[_path_param("workflowRunId"), _path_param("eventId")])},
        "/queue/v2/waiters/{eventId}": {"get": _operation(
            "queue", "queue_waiters", "the runs waiting for the event", _json({"type": "array", "items": {
                "type": "object"}}), {}, params=[_path_param("eventId")])},
        "/queue/v2/workflows/runs": {"delete": _operation(
            "queue", "queue_cancel_runs",
            "cancel runs in progress: by ids, by filter (workflowUrl a prefix unless workflowUrlExactMatch), "
            "count at a time, or all (no parameter and an empty body)",
            _json({"type": "object", "required": ["cancelled"], "properties": {"cancelled": _INT}}),
            {400: "a parameter, or the body, has the wrong type"},
            params=[_repeated("workflowRunIds"), _query("count", {"type": "integer", "minimum": 1,
                                                                  "maximum": MAX_BULK_COUNT, "default": 100}),
                    _query("workflowUrlExactMatch", {"type": "string", "enum": ["true", "false"]}),
                    *_filter_params(RUN_FILTERS)],
            body={"type": "object", "properties": {"workflowRunIds": _IDS, "workflowUrl": _STRING}},
            body_required=False)},
        "/queue/v2/workflows/dlq": {"delete": _operation(
            "queue", "queue_delete_dlq_selected", "delete DLQ entries by ids, or a page of those a filter selects",
            _json({"type": "object", "required": ["deleted"], "properties": {"cursor": _STRING, "deleted": _INT}}),
            {400: "a parameter has the wrong type"}, params=selection)},
        "/queue/v2/workflows/dlq/callback/{dlqId}": {"post": _operation(
            "queue", "queue_retry_failure_callback", "call a failed run's failure function again", handle,
            {404: "no such DLQ entry", 422: "the run has no failure callback, or it has not failed"},
            params=[_path_param("dlqId")])},
        "/queue/v2/batch": {"post": _operation(
            "queue", "queue_batch", "the workflow SDK's trigger(): start runs of registered workflows",
            _json({"type": "array", "items": {"type": "object", "required": ["messageId"], "properties": {
                "messageId": _STRING, "deduplicated": {"type": "boolean"}}}}),
            {400: "the body is not an array of messages with a destination", 404: "no workflow at a destination"},
            body={"type": "array", "minItems": 1, "items": {"type": "object", "required": ["destination"],
                                                            "properties": {"destination": _STRING,
                                                                           "headers": {"type": "object"},
                                                                           "body": _STRING}}})},
        "/queue/v2/dlq": {
            "get": _operation(
                "queue", "queue_list_dlq", "dead-letter-queue messages, newest first",
                _json({"type": "object", "required": ["messages"], "properties": {
                    "cursor": _STRING, "messages": {"type": "array", "items": dlq_message}}}),
                {400: "a parameter has the wrong type or is out of range"},
                params=[*_page_params(MAX_DLQ_COUNT), *_filter_params(DLQ_FILTERS)]),
            "delete": _operation(
                "queue", "queue_delete_dlq_many", "delete DLQ entries (unknown ids are skipped)",
                _json({"type": "object", "required": ["deleted"], "properties": {"deleted": _INT}}),
                {400: "dlqIds is not an array of strings"}, body=dlq_ids_body, body_required=False),
        },
        "/queue/v2/dlq/{dlqId}": {
            "get": _operation("queue", "queue_get_dlq", "one DLQ entry", _json(dlq_message),
                              {404: "no such DLQ entry"}, params=[_path_param("dlqId")]),
            "delete": _operation("queue", "queue_delete_dlq", "delete one DLQ entry",
                                 _json({"type": "string", "enum": ["OK"]}), {404: "no such DLQ entry"},
                                 params=[_path_param("dlqId")]),
        },
        "/queue/v2/events": {"get": _operation(
            "queue", "queue_events", "the events log: one event per state of each message, newest first",
            _json({"type": "object", "required": ["events"], "properties": {
                "cursor": _STRING, "events": {"type": "array", "items": {
                    "type": "object", "required": ["time", "messageId", "state", "url"]}}}}),
            {400: "a parameter has the wrong type or is out of range"},
            params=[*_page_params(MAX_EVENTS_COUNT), *_filter_params(EVENT_FILTERS),
                    _query("state", {"type": "string", "enum": list(EVENT_STATES)})])},
        "/queue/v2/trigger/{url}": {"post": _operation(
            "queue", "queue_trigger", "start a run of a registered workflow (body = payload)",
            handle, {400: "a header has the wrong type", 404: "no workflow at that URL"},
            params=[_path_param("url", "the workflow URL (may contain '/')"), *run_headers,
                    _header("Service-Label", _STRING)],
            body={}, body_required=False)},
    }
