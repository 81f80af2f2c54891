"""The sans-I/O core of area D (queue service interface): ``build_*`` functions validate arguments
and describe requests, ``decode_*`` functions read reply bodies (already through
:func:`svckit._http.decode_json_reply`). :class:`~svckit.queue.Queue` and
:class:`~svckit.queue.AsyncQueue` only send. Dates in filters are ``datetime`` (a naive one is
taken as UTC) or Unix milliseconds (int).

Beyond the spec's logs and resume, the wire shapes follow the hosted service's SDKs: qstash 3.4.0
(``dlq.py``, ``log.py``: the DLQ and the events log) and upstash/workflow-js ``src/client/dlq.ts``
and ``src/client/index.ts`` (resume / restart many by ``dlqIds``; bulk cancel by
``workflowRunIds``, by ``workflowUrl`` prefix, or all). Resume and restart keep the spec's
``/v2/dlq/`` prefix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from svckit._http import ApiRequest
from svckit.errors import InvalidArgument, ProtocolError
from svckit.queue.models import EventState, ResumeResult, RunsStarted, RunState

#: the spec's default and maximum of ``count`` on the logs operation.
MAX_LOGS_COUNT = 10
#: the page size maximum of ``GET /v2/dlq`` (qstash's ``DlqApi.list``: "Default and max is 100").
MAX_DLQ_COUNT = 100
#: the page size maximum of ``GET /v2/events`` (qstash's ``LogApi.list``: "Default and max is 1000").
MAX_EVENTS_COUNT = 1000
_STATES = tuple(s.value for s in RunState)
_EVENT_STATES = tuple(s.value for s in EventState)


def to_unix_ms(argument: str, value: datetime | int) -> int:
    """``datetime`` (naive = UTC) or Unix milliseconds -> Unix milliseconds."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(value.timestamp() * 1000)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(argument, f"must be a datetime or Unix milliseconds (int), got {value!r}")
    if value < 0:
        raise InvalidArgument(argument, f"must not be negative, got {value}")
    return value


def _text(argument: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgument(argument, f"must be a non-empty string, got {value!r}")
    return value


def _count(argument: str, value: Any, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidArgument(argument, f"must be an integer from 1 to {maximum}, got {value!r}")
    return value


def _logs_params(
    *, cursor: str | None = None, workflow_run_id: str | None = None, workflow_url: str | None = None,
    workflow_created_at: datetime | int | None = None, state: RunState | str | None = None,
    from_date: datetime | int | None = None, to_date: datetime | int | None = None,
    count: int | None = None, label: str | None = None,
) -> dict[str, str]:
    params: dict[str, Any] = {}
    if cursor is not None:
        params["cursor"] = _text("cursor", cursor)
    if workflow_run_id is not None:
        params["workflowRunId"] = _text("workflow_run_id", workflow_run_id)
    if workflow_url is not None:
        params["workflowUrl"] = _text("workflow_url", workflow_url)
    if workflow_created_at is not None:
        params["workflowCreatedAt"] = to_unix_ms("workflow_created_at", workflow_created_at)
    if state is not None:
        value = state.value if isinstance(state, RunState) else state
        if value not in _STATES:
            raise InvalidArgument("state", f"must be one of {', '.join(_STATES)}, got {state!r}")
        params["state"] = value
    if from_date is not None:
        params["fromDate"] = to_unix_ms("from_date", from_date)
    if to_date is not None:
        params["toDate"] = to_unix_ms("to_date", to_date)
    if "fromDate" in params and "toDate" in params and params["fromDate"] > params["toDate"]:
        raise InvalidArgument("from_date", "must not be after to_date")
    if count is not None:
        params["count"] = _count("count", count, MAX_LOGS_COUNT)
    if label is not None:
        params["label"] = _text("label", label)
    return {k: str(v) for k, v in params.items()}


def build_logs_request(**filters: Any) -> ApiRequest:
    """``GET /v2/workflows/logs``: one page of runs, newest first; filters as :meth:`Queue.workflow_logs`."""
    return ApiRequest("GET", "/v2/workflows/logs", params=_logs_params(**filters), idempotent=True)


def build_cancel_request(run_id: str) -> ApiRequest:
    return ApiRequest("DELETE", f"/v2/workflows/runs/{_path_id('run_id', run_id)}", idempotent=True)


def build_trigger_request(url: str, body: Any = None, *, run_id: str | None = None, label: str | None = None,
                          retries: int | None = None, flow_control_key: str | None = None,
                          flow_control_value: str | None = None) -> ApiRequest:
    headers = run_headers(flow_control_key=flow_control_key, flow_control_value=flow_control_value,
                          retries=retries, run_id=run_id)
    if label is not None:
        headers["Service-Label"] = _text("label", label)
    content = None if body is None else json.dumps(body).encode()
    if content is not None:
        headers["Content-Type"] = "application/json"
    return ApiRequest("POST", f"/v2/trigger/{_text('url', url)}", headers=headers, content=content)


def _path_id(argument: str, value: Any) -> str:
    return quote(_text(argument, value), safe="")


def run_headers(*, flow_control_key: str | None = None, flow_control_value: str | None = None,
                retries: int | None = None, run_id: str | None = None) -> dict[str, str]:
    """The optional Service-* headers of resume, restart and trigger (spec, Endpoints D): each one is
    sent only when given; without it the service keeps the original configuration."""
    headers: dict[str, str] = {}
    if flow_control_key is not None:
        headers["Service-Flow-Control-Key"] = _text("flow_control_key", flow_control_key)
    if flow_control_value is not None:
        headers["Service-Flow-Control-Value"] = _text("flow_control_value", flow_control_value)
    if retries is not None:
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise InvalidArgument("retries", f"must be a non-negative integer, got {retries!r}")
        headers["Service-Retries"] = str(retries)
    if run_id is not None:
        headers["Service-Workflow-RunId"] = _text("run_id", run_id)
    return headers


def _ids(argument: str, values: Any, *, allow_empty: bool = False) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidArgument(argument, f"must be a list of ids, got {values!r}")
    ids = [_text(argument, v) for v in values]
    if not ids and not allow_empty:
        raise InvalidArgument(argument, "must name at least one id")
    return ids


# filter keyword -> (query parameter, kind); kinds: text, ms (datetime or Unix ms), int, list
_Filters = Mapping[str, tuple[str, str]]
_DLQ_FILTERS: _Filters = {
    "message_id": ("messageId", "text"), "url": ("url", "text"), "label": ("label", "text"),
    "caller_ip": ("callerIp", "text"), "response_status": ("responseStatus", "int"),
    "from_date": ("fromDate", "ms"), "to_date": ("toDate", "ms"),
    "workflow_run_id": ("workflowRunId", "text"), "workflow_url": ("workflowUrl", "text"),
    "workflow_created_at": ("workflowCreatedAt", "ms"),
    "url_group": ("topicName", "text"), "queue": ("queueName", "text"), "schedule_id": ("scheduleId", "text"),
}
_EVENT_FILTERS: _Filters = {
    "message_id": ("messageId", "text"), "message_ids": ("messageIds", "list"), "url": ("url", "text"),
    "label": ("label", "text"), "from_date": ("fromDate", "ms"), "to_date": ("toDate", "ms"),
    "workflow_run_id": ("workflowRunId", "text"),
    "url_group": ("topicName", "text"), "queue": ("queueName", "text"), "schedule_id": ("scheduleId", "text"),
}


def _filter_params(table: _Filters, filters: Mapping[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, value in filters.items():
        if name not in table:
            raise InvalidArgument(name, f"unknown filter; use one of {', '.join(table)}")
        if value is None:
            continue
        wire, kind = table[name]
        if kind == "ms":
            params[wire] = str(to_unix_ms(name, value))
        elif kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidArgument(name, f"must be an integer, got {value!r}")
            params[wire] = str(value)
        elif kind == "list":
            params[wire] = _ids(name, value)
        else:
            params[wire] = _text(name, value)
    if "fromDate" in params and "toDate" in params and int(params["fromDate"]) > int(params["toDate"]):
        raise InvalidArgument("from_date", "must not be after to_date")
    return params


def _page_params(cursor: str | None, count: int | None, maximum: int) -> dict[str, str]:
    params: dict[str, str] = {}
    if cursor is not None:
        params["cursor"] = _text("cursor", cursor)
    if count is not None:
        params["count"] = str(_count("count", count, maximum))
    return params


def build_dlq_request(cursor: str | None = None, count: int | None = None, **filters: Any) -> ApiRequest:
    """``GET /v2/dlq``: one page (``count`` 1..100) of DLQ entries, with qstash's filters:
    ``message_id``, ``url``, ``label``, ``caller_ip``, ``response_status``, ``from_date``/``to_date``
    (when the entry entered the DLQ, inclusive), ``workflow_run_id``, ``workflow_url``,
    ``workflow_created_at``, ``url_group``, ``queue``, ``schedule_id``."""
    params = {**_page_params(cursor, count, MAX_DLQ_COUNT), **_filter_params(_DLQ_FILTERS, filters)}
    return ApiRequest("GET", "/v2/dlq", params=params, idempotent=True)


def build_dlq_message_request(dlq_id: str) -> ApiRequest:
    return ApiRequest("GET", f"/v2/dlq/{_path_id('dlq_id', dlq_id)}", idempotent=True)


def build_delete_dlq_request(dlq_id: str) -> ApiRequest:
    return ApiRequest("DELETE", f"/v2/dlq/{_path_id('dlq_id', dlq_id)}", idempotent=True)


def build_delete_dlq_many_request(dlq_ids: Sequence[str]) -> ApiRequest:
    return ApiRequest("DELETE", "/v2/dlq", json={"dlqIds": _ids("dlq_ids", dlq_ids, allow_empty=True)},
                      idempotent=True)


def build_from_dlq_request(action: str, dlq_id: str | Sequence[str], **overrides: Any) -> ApiRequest:
    """Resume (``action="resume"``: succeeded steps are kept) or restart (``"restart"``: from the first
    step) the failed run of one DLQ entry (a str: ``POST /v2/dlq/{action}/{dlqId}``) or of several
    (a list: ``POST /v2/dlq/{action}`` with ``{"dlqIds": [...]}``). Overrides: ``flow_control_key``,
    ``flow_control_value``, ``retries``, ``run_id``. Not idempotent: each call starts fresh runs."""
    if action not in ("resume", "restart"):
        raise InvalidArgument("action", f"must be resume or restart, got {action!r}")
    headers = run_headers(**overrides)
    if isinstance(dlq_id, str):
        return ApiRequest("POST", f"/v2/dlq/{action}/{_path_id('dlq_id', dlq_id)}", headers=headers)
    return ApiRequest("POST", f"/v2/dlq/{action}", headers=headers, json={"dlqIds": _ids("dlq_ids", dlq_id)})


def build_cancel_many_request(*, run_ids: Sequence[str] | None = None, url_prefix: str | None = None,
                              all_runs: bool = False) -> ApiRequest:
    """``DELETE /v2/workflows/runs``: cancel the runs in progress with one of ``run_ids``, or whose
    URL starts with ``url_prefix``, or (``all_runs=True``) every run in progress. Exactly one."""
    if (run_ids is not None) + (url_prefix is not None) + bool(all_runs) != 1:
        raise InvalidArgument("run_ids", "give exactly one of run_ids, url_prefix or all_runs=True")
    body: dict[str, Any] = {}
    if run_ids is not None:
        body["workflowRunIds"] = _ids("run_ids", run_ids)
    if url_prefix is not None:
        body["workflowUrl"] = _text("url_prefix", url_prefix)
    return ApiRequest("DELETE", "/v2/workflows/runs", json=body, idempotent=True)


def build_events_request(cursor: str | None = None, count: int | None = None, *,
                         state: EventState | str | None = None, **filters: Any) -> ApiRequest:
    """``GET /v2/events``: one page (``count`` 1..1000) of the events log, newest first, with qstash's
    filters: ``message_id``, ``message_ids``, ``state`` (an :class:`EventState`), ``url``, ``label``,
    ``from_date``/``to_date`` (inclusive), ``url_group``, ``queue``, ``schedule_id``, and
    ``workflow_run_id``."""
    params = {**_page_params(cursor, count, MAX_EVENTS_COUNT), **_filter_params(_EVENT_FILTERS, filters)}
    if state is not None:
        value = state.value if isinstance(state, EventState) else state
        if value not in _EVENT_STATES:
            raise InvalidArgument("state", f"must be one of {', '.join(_EVENT_STATES)}, got {state!r}")
        params["state"] = value
    return ApiRequest("GET", "/v2/events", params=params, idempotent=True)


def decode_model(model: Any, body: Any, what: str) -> Any:
    """A reply object -> ``model``; ProtocolError when it is not an object or does not fit."""
    if not isinstance(body, Mapping):
        raise ProtocolError(f"{what}: expected a JSON object, got {type(body).__name__}")
    try:
        return model.model_validate(body)
    except ValueError as exc:
        raise ProtocolError(f"{what}: reply does not match the spec: {exc}") from None


def decode_count(body: Any, field: str, what: str) -> int:
    """``{"<field>": n}`` -> n (the bulk delete and cancel replies)."""
    value = body.get(field) if isinstance(body, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(f"{what}: expected {{{field!r}: <integer>}}, got {body!r}")
    return value


def decode_runs_started(body: Any, what: str) -> list[ResumeResult]:
    return decode_model(RunsStarted, body, what).workflow_runs
