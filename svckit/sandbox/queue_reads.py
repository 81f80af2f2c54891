"""What the queue area (D) reads from the store: the query parameters of its lists, their filters and
cursor pages, and the wire shapes of runs, DLQ entries and events.

Filters follow the SDKs' (qstash's ``DlqFilter`` and ``LogFilter``, the workflow SDK's
``UniversalFilterFields`` and ``WorkflowFilterFields``): separate filters are combined with AND; a
filter that takes several values (``?label=a&label=b``) matches a record with any of them (OR).
The routes that use them are in :mod:`svckit.sandbox.queue`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from svckit.queue.models import EventState, RunState
from svckit.sandbox.delivery.records import header_map, message_event_wire, message_wire
from svckit.sandbox.http import ApiError
from svckit.sandbox.store import Store

MAX_LOGS_COUNT = 10
MAX_DLQ_COUNT = 100
#: qstash's ``LogApi.list``: "Default and max is 1000".
MAX_EVENTS_COUNT = 1000
#: the workflow SDK's bulk actions (resume, restart, delete, cancel by filter) act on ``count``
#: records per call, 100 unless it says otherwise; the sandbox takes at most 1000 at once.
BULK_COUNT, MAX_BULK_COUNT = 100, 1000
EVENT_STATES = tuple(s.value for s in EventState)
#: SQLite stores integers in 64 bits; a larger value must be a 400, not an OverflowError (500).
INT64_MAX = 2**63 - 1


# -- cursors ------------------------------------------------------------------------------------
def encode_cursor(created_at: int, key: int | str) -> str:
    return base64.urlsafe_b64encode(f"{created_at}:{key}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """Inverse of :func:`encode_cursor`; ValueError for anything else."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, _, key = raw.partition(":")
        if not key:
            raise ValueError
        return int(created), key
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError("cursor: not a cursor returned by this server") from None


# -- parameter parsing --------------------------------------------------------------------------
def int_param(name: str, raw: str | None, minimum: int = 0, maximum: int | None = None) -> int | None:
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name}: must be an integer, got {raw!r}") from None
    if maximum is None and value > INT64_MAX:
        maximum = INT64_MAX
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
        raise ApiError(400, f"{name}: must be {bounds}, got {value}")
    return value


def values(params: Any, name: str) -> list[str]:
    """Every value of a repeated query parameter (``?messageIds=a&messageIds=b``)."""
    getlist = getattr(params, "getlist", None)
    if getlist is not None:
        return list(getlist(name))
    value = params.get(name)
    return [] if value is None else list(value) if isinstance(value, (list, tuple)) else [value]


@dataclass(frozen=True)
class Filter:
    """One filter parameter: ``column op ?`` (a ``column`` holding its own ``?`` is the whole
    clause). With ``many``, repeated values match any of them; ``prefix`` matches the start."""

    param: str
    column: str
    op: str = "="
    numeric: bool = False
    many: bool = False


#: what every list of runs, entries or events is also filtered by (the SDKs' universal filters); ``r``
#: is the run, ``m`` the message (DLQ entries and events belong to one or the other)
_UNIVERSAL = (("callerIp", "caller_ip"), ("label", "label"), ("flowControlKey", "flow_control_key"))
_EVERYWHERE = tuple(Filter(param, f"COALESCE(m.{column}, r.{column})", many=True) for param, column in _UNIVERSAL)
_RUN_EVERYWHERE = tuple(Filter(param, f"r.{column}", many=True) for param, column in _UNIVERSAL)
_SOURCE = (Filter("topicName", "m.topic_name", many=True), Filter("queueName", "m.queue_name", many=True),
           Filter("scheduleId", "m.schedule_id", many=True))

RUN_FILTERS: tuple[Filter, ...] = (
    *_RUN_EVERYWHERE,
    Filter("workflowRunId", "r.run_id"), Filter("workflowUrl", "r.url", many=True),
    Filter("workflowCreatedAt", "r.created_at", numeric=True),
    Filter("fromDate", "r.created_at", ">=", numeric=True), Filter("toDate", "r.created_at", "<=", numeric=True),
    Filter("host", "url_host(r.url)", many=True), Filter("path", "url_path(r.url)", many=True),
    Filter("messageId", "r.seq IN (SELECT run_seq FROM steps WHERE message_id = ?)"),
)
#: a DLQ entry's createdAt as shown: its message's creation, or (a run of an earlier svckit) the entry's
ENTRY_CREATED = "COALESCE(m.created_at, d.created_at)"
DLQ_FILTERS: tuple[Filter, ...] = (
    *_EVERYWHERE, *_SOURCE,
    Filter("dlqIds", "d.dlq_id", many=True), Filter("messageId", "d.message_id"),
    Filter("url", "COALESCE(m.url, r.url)", many=True),
    Filter("responseStatus", "d.response_status", numeric=True),
    Filter("fromDate", ENTRY_CREATED, ">=", numeric=True), Filter("toDate", ENTRY_CREATED, "<=", numeric=True),
    Filter("workflowRunId", "r.run_id"), Filter("workflowUrl", "r.url", many=True),
    Filter("workflowCreatedAt", "r.created_at", numeric=True),
    Filter("failureFunctionState", "f.state", many=True),
    # the workflow SDK lists with ``source=workflow``: the entries of runs
    Filter("source", "CASE WHEN d.run_seq IS NULL THEN 'message' ELSE 'workflow' END", many=True),
)
EVENT_FILTERS: tuple[Filter, ...] = (
    *_EVERYWHERE, *_SOURCE,
    Filter("messageId", "e.message_id"), Filter("messageIds", "e.message_id", many=True),
    Filter("url", "COALESCE(m.url, r.url)", many=True), Filter("workflowUrl", "r.url", many=True),
    Filter("fromDate", "e.time", ">=", numeric=True), Filter("toDate", "e.time", "<=", numeric=True),
    Filter("workflowRunId", "r.run_id"),
)


def where(params: Any, filters: Sequence[Filter]) -> tuple[list[str], list[Any]]:
    """SQL clauses (to AND) and their arguments for the filters given in ``params``."""
    clauses: list[str] = []
    args: list[Any] = []
    for f in filters:
        given = values(params, f.param)
        if not given:
            continue
        if len(given) > 1 and not f.many:
            raise ApiError(400, f"{f.param}: give one value, got {len(given)}")
        args += [int_param(f.param, v) if f.numeric else v for v in given]
        if f.op == "prefix":
            clauses.append("(" + " OR ".join([f"instr({f.column}, ?) = 1"] * len(given)) + ")")
        elif "?" in f.column:
            clauses.append(f.column)
        elif len(given) == 1:
            clauses.append(f"{f.column} {f.op} ?")
        else:
            clauses.append(f"{f.column} IN ({','.join('?' * len(given))})")
    return clauses, args


def _cursor(raw: str | None) -> tuple[int, str] | None:
    if raw is None:
        return None
    try:
        return decode_cursor(raw)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None


def page(store: Store, select: str, clauses: list[str], args: list[Any], params: Any, *, maximum: int,
         order: tuple[str, str], keys: tuple[str, str], int_key: bool,
         default: int | None = None) -> tuple[list[Any], str | None]:
    """One page, newest first by ``order`` (a time column, then a tie-breaking key column), after the
    ``cursor`` parameter; also the cursor of the next page (None on the last one). ``keys`` name the
    two columns in the result rows; ``count`` is 1..``maximum``, ``default`` (else ``maximum``) when
    not given."""
    count = int_param("count", params.get("count"), 1, maximum) or default or maximum
    after = _cursor(params.get("cursor"))
    if after is not None:
        time_col, key_col = order
        clauses = [*clauses, f"({time_col} < ? OR ({time_col} = ? AND {key_col} < ?))"]
        key: Any = after[1]
        if int_key:
            key = int(key) if key.isdigit() else -1
        args = [*args, after[0], after[0], key]
    sql = select + (" WHERE " + " AND ".join(clauses) if clauses else "")
    rows = store.query(f"{sql} ORDER BY {order[0]} DESC, {order[1]} DESC LIMIT ?", (*args, count + 1))
    found = rows[:count]
    cursor = encode_cursor(found[-1][keys[0]], found[-1][keys[1]]) if len(rows) > count else None
    return found, cursor


def with_cursor(body: dict[str, Any], cursor: str | None) -> dict[str, Any]:
    return body if cursor is None else {"cursor": cursor, **body}


def _present(wire: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in wire.items() if v is not None}


# -- reading runs -------------------------------------------------------------------------------
def _step_wire(row: Any) -> dict[str, Any]:
    return _present({"stepId": row["step_id"], "stepName": row["step_name"], "stepType": row["step_type"],
                     "callType": row["call_type"], "messageId": row["message_id"], "out": row["out"],
                     "concurrent": row["concurrent"], "state": row["state"], "createdAt": row["created_at"]})


def _failure_function_wire(run: Any, callback: Any) -> dict[str, Any]:
    """A run's failure function call, as the workflow SDK's ``FailureFunctionLog``."""
    return _present({
        "messageId": callback["message_id"], "url": run["url"], "state": callback["state"],
        "failHeaders": {}, "failStatus": callback["fail_status"], "failResponse": callback["fail_response"],
        "dlqId": run["dlq_id"], "responseStatus": callback["response_status"],
        "responseBody": callback["response_body"],
    })


def _run_wire(run: Any, steps: Sequence[Any], callback: Any | None) -> dict[str, Any]:
    groups: list[dict[str, Any]] = []
    current = None
    for row in steps:
        if current is None or current[0] != row["group_no"]:
            current = (row["group_no"], {"type": row["group_type"], "steps": []})
            groups.append(current[1])
        current[1]["steps"].append(_step_wire(row))
    return _present({
        "workflowRunId": run["run_id"], "workflowUrl": run["url"], "workflowState": run["state"],
        "workflowRunCreatedAt": run["created_at"], "workflowRunCompletedAt": run["completed_at"],
        "steps": groups, "label": run["label"], "flowControlKey": run["flow_control_key"],
        "flowControlValue": run["flow_control_value"], "retries": run["retries"], "dlqId": run["dlq_id"],
        "failureFunction": None if callback is None else _failure_function_wire(run, callback),
        "workflowRunResponse": run["response"] if run["state"] == RunState.RUN_SUCCESS.value else None,
    })


def list_runs(store: Store, params: Any) -> dict[str, Any]:
    """``GET /v2/workflows/logs`` (and the workflow SDK's ``/v2/workflows/events?groupBy=workflowRunId``)
    against the store (params: the query parameters)."""
    clauses, args = where(params, RUN_FILTERS)
    state = params.get("state")
    if state is not None:
        states = [s.value for s in RunState]
        if state not in states:
            raise ApiError(400, f"state: must be one of {', '.join(states)}, got {state!r}")
        clauses.append("r.state = ?")
        args.append(state)
    runs, cursor = page(store, "SELECT r.* FROM runs r", clauses, args, params, maximum=MAX_LOGS_COUNT,
                        order=("r.created_at", "r.seq"), keys=("created_at", "seq"), int_key=True)
    steps: dict[int, list[Any]] = {r["seq"]: [] for r in runs}
    callbacks: dict[int, Any] = {}
    if runs:
        seqs = [r["seq"] for r in runs]
        marks = ",".join("?" * len(seqs))
        for step in store.query(f"SELECT * FROM steps WHERE run_seq IN ({marks}) "
                                "ORDER BY run_seq, group_no, step_id IS NOT NULL, step_id, seq", seqs):
            steps[step["run_seq"]].append(step)
        callbacks = {c["run_seq"]: c for c in
                     store.query(f"SELECT * FROM failure_callbacks WHERE run_seq IN ({marks})", seqs)}
    return with_cursor({"runs": [_run_wire(r, steps[r["seq"]], callbacks.get(r["seq"])) for r in runs]}, cursor)


# -- the DLQ and the events log -------------------------------------------------------------------
_PERIOD_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def flow_control_wire(key: str | None, value: str | None) -> dict[str, Any]:
    """A run's flow control as the qstash SDK reads it from a message: ``flowControlKey`` plus
    ``parallelism``, ``rate`` and ``period`` (seconds) parsed from a value such as
    ``"parallelism=1, rate=10, period=1m"`` (the form the SDKs send); parts it cannot read are left out.
    The value as sent is kept in ``flowControlValue``."""
    if key is None:
        return {}
    wire: dict[str, Any] = {"flowControlKey": key, "flowControlValue": value}
    for part in (value or "").split(","):
        name, _, raw = (x.strip() for x in part.partition("="))
        if name in ("parallelism", "rate") and raw.isdigit():
            wire[name] = int(raw)
        elif name == "period" and raw:
            number, unit = (raw[:-1], raw[-1]) if raw[-1] in _PERIOD_UNITS else (raw, "s")
            if number.isdigit():
                wire["period"] = int(number) * _PERIOD_UNITS[unit]
    return _present(wire)


def _message_headers(row: Any) -> dict[str, list[str]]:
    """The headers a run of an earlier svckit (made before runs were served, with no messages of
    their own) was delivered with."""
    headers = {"Service-Workflow-RunId": [row["run_id"]], "Service-Workflow-Url": [row["url"]]}
    if row["body"] is not None:
        headers["Content-Type"] = ["application/json"]
    return headers


#: DLQ entries with their runs or messages, and failure function calls (the ``f`` columns are NULL without one)
DLQ_SELECT = ("SELECT d.dlq_id, d.run_seq, d.message_seq, d.created_at AS dlq_created_at, "
              f"{ENTRY_CREATED} AS entry_created, "
              "d.message_id AS dlq_message_id, d.response_status AS dlq_response_status, "
              "d.response_body AS dlq_response_body, d.not_before AS not_before_ms, r.run_id, r.url AS run_url, r.created_at AS run_created_at, r.label AS run_label, "
              "r.body AS run_body, r.retries, r.flow_control_key AS run_flow_key, "
              "r.flow_control_value AS run_flow_value, r.caller_ip AS run_caller_ip, f.state AS callback_state, "
              "f.response_status AS callback_status, f.response_body AS callback_body, m.* "
              "FROM dlq d LEFT JOIN runs r ON r.seq = d.run_seq LEFT JOIN failure_callbacks f ON f.run_seq = r.seq "
              "LEFT JOIN messages m ON m.seq = d.message_seq")


def _of_run(wire: dict[str, Any], row: Any, **more: Any) -> None:
    """A message of a run as its DLQ entry or event shows it: the run's id among its headers, the run's
    fields (and ``more``) beside them."""
    wire["header"] = {**wire.get("header", {}), "Upstash-Workflow-RunId": [row["run_id"]]}
    wire.update(_present({"workflowRunId": row["run_id"], "workflowUrl": row["run_url"],
                          "workflowCreatedAt": row["run_created_at"], **more}))


def _dlq_wire(row: Any) -> dict[str, Any]:
    """One DLQ entry: every field qstash's ``parse_dlq_message_response`` reads; for a run's, the
    workflow fields of the workflow SDK's DLQ message too (``workflowRunId``, ``workflowUrl``,
    ``workflowCreatedAt``, and ``failureCallback`` / ``failureCallbackInfo`` for a run whose workflow has
    a failure function)."""
    entry = {"dlqId": row["dlq_id"], "responseStatus": row["dlq_response_status"],
             "responseBody": row["dlq_response_body"]}
    callback = None
    if row["callback_state"] is not None:
        callback = _present({"state": row["callback_state"], "responseStatus": row["callback_status"],
                             "responseBody": row["callback_body"],
                             "responseHeaders": {"Content-Type": ["application/json"]}})
    if row["message_seq"] is not None:  # a message's, or a served run's (:mod:`svckit.sandbox.workflow`)
        wire = {**message_wire(row), **_present(entry),
                "responseHeader": header_map(json.loads(row["response_headers"] or "[]"))}
        if row["run_id"] is not None:
            _of_run(wire, row, failureCallback=None if callback is None else row["run_url"],
                    failureCallbackInfo=callback)
        return wire
    run = {"run_id": row["run_id"], "url": row["run_url"], "body": row["run_body"]}
    return _present({
        **entry, "messageId": row["dlq_message_id"], "url": row["run_url"], "method": "POST",
        "header": _message_headers(run), "body": row["run_body"], "maxRetries": row["retries"],
        "notBefore": row["not_before_ms"] if row["not_before_ms"] is not None else row["dlq_created_at"],
        "createdAt": row["dlq_created_at"], "callerIP": row["run_caller_ip"],
        "responseHeader": {"Content-Type": ["text/plain"]}, "label": row["run_label"],
        **flow_control_wire(row["run_flow_key"], row["run_flow_value"]),
        "workflowRunId": row["run_id"], "workflowUrl": row["run_url"], "workflowCreatedAt": row["run_created_at"],
        "failureCallback": None if callback is None else row["run_url"], "failureCallbackInfo": callback,
    })


def dlq_page(store: Store, params: Any, *, maximum: int = MAX_DLQ_COUNT,
             default: int | None = None) -> tuple[list[Any], str | None]:
    """The DLQ entries the filters of ``params`` select, one page, newest first, and the next cursor."""
    clauses, args = where(params, DLQ_FILTERS)
    # newest first by the entry's createdAt as shown (its message's creation), as the filters take it
    return page(store, DLQ_SELECT, clauses, args, params, maximum=maximum, default=default,
                order=(ENTRY_CREATED, "d.dlq_id"), keys=("entry_created", "dlq_id"),
                int_key=False)


def list_dlq(store: Store, params: Any) -> dict[str, Any]:
    """``GET /v2/dlq`` against the store: every filter of qstash's ``DlqFilter`` and of the workflow
    SDK's DLQ list (see ``DLQ_FILTERS``)."""
    entries, cursor = dlq_page(store, params)
    return with_cursor({"messages": [_dlq_wire(r) for r in entries]}, cursor)


def get_dlq(store: Store, dlq_id: str) -> dict[str, Any]:
    rows = store.query(DLQ_SELECT + " WHERE d.dlq_id = ?", (dlq_id,))
    if not rows:
        raise ApiError(404, f"no DLQ entry {dlq_id!r}")
    return _dlq_wire(rows[0])


def _event_wire(row: Any) -> dict[str, Any]:
    """One event: every field qstash's ``parse_logs_response`` reads (``body`` is base64 there), plus
    the message, or the run and step, it belongs to."""
    if row["message_seq"] is not None:  # a message's, maybe of a workflow run
        wire = message_event_wire(row)
        if row["run_id"] is not None:
            _of_run(wire, row, stepName=row["event_step"])
        return wire
    body = None if row["body"] is None else base64.b64encode(row["body"].encode()).decode()
    return _present({
        "time": row["time"], "messageId": row["message_id"], "state": row["state"], "error": row["error"],
        "nextDeliveryTime": row["next_delivery_time"], "url": row["url"], "header": _message_headers(row),
        "body": body, "responseStatus": row["response_status"], "method": "POST", "maxRetries": row["retries"],
        "label": row["label"], **flow_control_wire(row["flow_control_key"], row["flow_control_value"]),
        "workflowRunId": row["run_id"], "workflowUrl": row["url"], "workflowCreatedAt": row["run_created_at"],
        "stepName": row["step_name"],
    })


def list_events(store: Store, params: Any) -> dict[str, Any]:
    """``GET /v2/events`` against the store: qstash's ``LogFilter`` (``messageIds`` may repeat; ``state``
    one of the event states) and ``workflowRunId``."""
    clauses, args = where(params, EVENT_FILTERS)
    state = params.get("state")
    if state is not None:
        if state not in EVENT_STATES:
            raise ApiError(400, f"state: must be one of {', '.join(EVENT_STATES)}, got {state!r}")
        clauses.append("e.state = ?")
        args.append(state)
    select = ("SELECT e.*, COALESCE(e.step_name, m.step_name) AS event_step, r.run_id, r.url AS run_url, "
              "COALESCE(m.url, r.url) AS url, r.created_at AS run_created_at, "
              "COALESCE(m.label, r.label) AS label, COALESCE(m.body, r.body) AS body, r.retries, "
              "COALESCE(m.flow_control_key, r.flow_control_key) AS flow_control_key, "
              "COALESCE(m.flow_control_value, r.flow_control_value) AS flow_control_value, m.options, m.headers, "
              "m.topic_name, m.endpoint_name, m.queue_name, m.schedule_id, m.method, m.max_retries "
              "FROM events e LEFT JOIN messages m ON m.seq = e.message_seq "
              "LEFT JOIN runs r ON r.seq = COALESCE(e.run_seq, m.run_seq)")
    events, cursor = page(store, select, clauses, args, params, maximum=MAX_EVENTS_COUNT,
                          order=("e.time", "e.seq"), keys=("time", "seq"), int_key=True)
    return with_cursor({"events": [_event_wire(r) for r in events]}, cursor)
