"""Area D of the sandbox: the queue service interface under ``/queue`` (paths carry /v2), Bearer auth.

The bearer token is the CURRENT ``token`` of the queue account record in the store, read on every
request, so a token rotated through /devapi/v2 is refused from the very next request on.

Routes (the spec's two, then what the hosted service's SDKs call; state rules in docs/errors.md):
- ``GET  /v2/workflows/logs``           every filter of the spec; newest first; ``count`` 1..10
  (default 10; a larger value is rejected with 400, see docs/errors.md); cursor pagination that returns
  every run exactly once and leaves ``cursor`` out on the last page.
- ``POST /v2/dlq/resume/{dlqId}``       the four optional Service-* headers; removes the DLQ entry.
- ``POST /v2/dlq/resume``               many at once: ``{"dlqIds": [...]}`` (or ``?dlqIds=`` repeated);
  ``{"workflowRuns": [{workflowRunId, workflowCreatedAt}, ...]}`` in the order given.
- ``POST /v2/dlq/restart/{dlqId}``, ``POST /v2/dlq/restart``   the same, from the first step.
- ``GET  /v2/dlq``                      the qstash SDK's DLQ message shape and every filter of its
  ``DlqFilter``, newest first, ``count`` 1..100 (default 100), cursor.
- ``GET|DELETE /v2/dlq/{dlqId}``        one entry; delete answers ``"OK"``.
- ``DELETE /v2/dlq``                    ``{"dlqIds": [...]}`` -> ``{"deleted": n}``.
- ``DELETE /v2/workflows/runs/{id}``    cancel, like the real service (200 ``"OK"``; 404; 422 when
  the run is not in progress).
- ``DELETE /v2/workflows/runs``         ``{"workflowRunIds": [...]}``, ``{"workflowUrl": prefix}`` or
  ``{}`` / no body (every run in progress) -> ``{"cancelled": n}``.
- ``GET  /v2/events``                   the events log (one event per delivery the runner made) in the
  qstash SDK's shape and with its ``LogFilter``; newest first, ``count`` 1..1000 (default 1000), cursor.
- ``POST /v2/trigger/{workflowUrl}``    start a run of a registered workflow (body = payload; headers
  Service-Workflow-RunId, Service-Retries, Service-Label, Service-Flow-Control-Key/-Value).

Message size: a run's message may not be larger than the queue account's ``max_message_size``, read
from the live record (a plan upgrade changes it at once): a trigger body over it is answered 413
``{"error"}`` before it is read (the area's body cap is that limit, unless ``queue_max_body_bytes``
sets another), and trigger, resume and restart answer 413 when the message, as compact JSON, is over it.

Sources for the shapes the spec does not show: qstash 3.4.0's ``dlq.py``, ``log.py`` and
``message.py`` (installed) for the DLQ and events; upstash/workflow-js ``src/client/index.ts``
(bulk cancel: ``DELETE /v2/workflows/runs`` with ``{workflowRunIds}``, ``{workflowUrl}`` as a URL
prefix, or ``{}`` for all; reply ``{cancelled}``) and ``src/client/dlq.ts`` (resume / restart by
``dlqIds``, reply ``{workflowRuns: [...]}``). The hosted service serves resume and restart under
``/v2/workflows/dlq/``; the sandbox keeps the spec's ``/v2/dlq/`` prefix.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from svckit.queue.models import EventState, RunState
from svckit.sandbox.area import Area, SandboxContext, positive_option
from svckit.sandbox.auth import bearer_check
from svckit.sandbox.http import ApiError, AuthGate, json_app
from svckit.sandbox.runner import (
    DEFAULT_WORKERS,
    InvalidState,
    MessageTooLarge,
    NotFoundError,
    UnknownWorkflow,
    WorkflowRunner,
    decode_cursor,
    encode_cursor,
)
from svckit.sandbox.store import Store

MAX_LOGS_COUNT = 10
MAX_DLQ_COUNT = 100
#: qstash's ``LogApi.list``: "Default and max is 1000".
MAX_EVENTS_COUNT = 1000
EVENT_STATES = tuple(s.value for s in EventState)
#: SQLite stores integers in 64 bits; a larger value must be a 400, not an OverflowError (500).
INT64_MAX = 2**63 - 1


# -- parameter parsing --------------------------------------------------------------------------
def _int_param(name: str, raw: str | None, minimum: int = 0, maximum: int | None = None) -> int | None:
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


def _str_header(request: Request, name: str) -> str | None:
    value = request.headers.get(name)
    if value is not None and not value.strip():
        raise ApiError(400, f"{name}: must not be empty")
    return value


def _cursor(raw: str | None) -> tuple[int, str] | None:
    if raw is None:
        return None
    try:
        return decode_cursor(raw)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None


def _values(params: Any, name: str) -> list[str]:
    """Every value of a repeated query parameter (``?messageIds=a&messageIds=b``)."""
    getlist = getattr(params, "getlist", None)
    if getlist is not None:
        return list(getlist(name))
    value = params.get(name)
    return [] if value is None else list(value) if isinstance(value, (list, tuple)) else [value]


#: a filter that no sandbox entry can match: nothing is published to a URL group or a queue, or by a
#: schedule, in the sandbox (the runner delivers to workflow URLs directly).
NEVER = "0"

# filter parameter -> SQL clause; ``int`` marks the numeric ones (a non-number is a 400).
_Filters = Sequence[tuple[str, str, bool]]
_RUN_FILTERS: _Filters = (
    ("workflowRunId", "run_id = ?", False), ("workflowUrl", "url = ?", False), ("label", "label = ?", False),
    ("workflowCreatedAt", "created_at = ?", True), ("fromDate", "created_at >= ?", True),
    ("toDate", "created_at <= ?", True),
)
_DLQ_FILTERS: _Filters = (
    ("messageId", "d.message_id = ?", False), ("url", "r.url = ?", False), ("label", "r.label = ?", False),
    ("callerIp", "r.caller_ip = ?", False), ("responseStatus", "d.response_status = ?", True),
    ("fromDate", "d.created_at >= ?", True), ("toDate", "d.created_at <= ?", True),
    # the workflow SDK's DLQ filters
    ("workflowRunId", "r.run_id = ?", False), ("workflowUrl", "r.url = ?", False),
    ("workflowCreatedAt", "r.created_at = ?", True),
    ("topicName", NEVER, False), ("queueName", NEVER, False), ("scheduleId", NEVER, False),
)
_EVENT_FILTERS: _Filters = (
    ("messageId", "e.message_id = ?", False), ("url", "r.url = ?", False), ("label", "r.label = ?", False),
    ("fromDate", "e.time >= ?", True), ("toDate", "e.time <= ?", True),
    ("workflowRunId", "r.run_id = ?", False),
    ("topicName", NEVER, False), ("queueName", NEVER, False), ("scheduleId", NEVER, False),
)


def _where(params: Any, filters: _Filters) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    args: list[Any] = []
    for name, clause, numeric in filters:
        raw = params.get(name)
        if raw is None:
            continue
        value = _int_param(name, raw) if numeric else raw
        where.append(clause)
        if "?" in clause:
            args.append(value)
    return where, args


def _page(store: Store, select: str, where: list[str], args: list[Any], params: Any, *, maximum: int,
          order: tuple[str, str], keys: tuple[str, str], int_key: bool) -> tuple[list[Any], str | None]:
    """One page, newest first by ``order`` (a time column, then a tie-breaking key column), after the
    ``cursor`` parameter; also the cursor of the next page (None on the last one). ``keys`` name the
    two columns in the result rows."""
    count = _int_param("count", params.get("count"), 1, maximum) or maximum
    after = _cursor(params.get("cursor"))
    if after is not None:
        time_col, key_col = order
        where = [*where, f"({time_col} < ? OR ({time_col} = ? AND {key_col} < ?))"]
        key: Any = after[1]
        if int_key:
            key = int(key) if key.isdigit() else -1
        args = [*args, after[0], after[0], key]
    sql = select + (" WHERE " + " AND ".join(where) if where else "")
    rows = store.query(f"{sql} ORDER BY {order[0]} DESC, {order[1]} DESC LIMIT ?", (*args, count + 1))
    page = rows[:count]
    cursor = encode_cursor(page[-1][keys[0]], page[-1][keys[1]]) if len(rows) > count else None
    return page, cursor


def _with_cursor(body: dict[str, Any], cursor: str | None) -> dict[str, Any]:
    return body if cursor is None else {"cursor": cursor, **body}


def _present(wire: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in wire.items() if v is not None}


# -- reading runs -------------------------------------------------------------------------------
def _step_wire(row: Any) -> dict[str, Any]:
    return _present({"stepId": row["step_id"], "stepName": row["step_name"], "stepType": row["step_type"],
                     "callType": row["call_type"], "messageId": row["message_id"], "out": row["out"],
                     "concurrent": row["concurrent"], "state": row["state"], "createdAt": row["created_at"]})


def _run_wire(run: Any, steps: Sequence[Any]) -> dict[str, Any]:
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
    })


def list_runs(store: Store, params: Any) -> dict[str, Any]:
    """``GET /v2/workflows/logs`` against the store (params: the query parameters)."""
    where, args = _where(params, _RUN_FILTERS)
    state = params.get("state")
    if state is not None:
        states = [s.value for s in RunState]
        if state not in states:
            raise ApiError(400, f"state: must be one of {', '.join(states)}, got {state!r}")
        where.append("state = ?")
        args.append(state)
    page, cursor = _page(store, "SELECT * FROM runs", where, args, params, maximum=MAX_LOGS_COUNT,
                         order=("created_at", "seq"), keys=("created_at", "seq"), int_key=True)
    steps: dict[int, list[Any]] = {r["seq"]: [] for r in page}
    if page:
        marks = ",".join("?" * len(page))
        for step in store.query(f"SELECT * FROM steps WHERE run_seq IN ({marks}) "
                                "ORDER BY run_seq, group_no, step_id IS NOT NULL, step_id, seq",
                                [r["seq"] for r in page]):
            steps[step["run_seq"]].append(step)
    return _with_cursor({"runs": [_run_wire(r, steps[r["seq"]]) for r in page]}, cursor)


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
    """The headers the runner delivered the run's messages with."""
    headers = {"Service-Workflow-RunId": [row["run_id"]], "Service-Workflow-Url": [row["url"]]}
    if row["body"] is not None:
        headers["Content-Type"] = ["application/json"]
    return headers


_DLQ_SELECT = ("SELECT d.*, r.run_id, r.url, r.created_at AS run_created_at, r.label, r.body, r.retries, "
               "r.flow_control_key, r.flow_control_value, r.caller_ip FROM dlq d JOIN runs r ON r.seq = d.run_seq")


def _dlq_wire(row: Any) -> dict[str, Any]:
    """One DLQ entry: every field qstash's ``parse_dlq_message_response`` reads, plus the workflow
    fields of the workflow SDK's DLQ message (``workflowRunId``, ``workflowUrl``, ``workflowCreatedAt``)."""
    return _present({
        "dlqId": row["dlq_id"], "messageId": row["message_id"], "url": row["url"], "method": "POST",
        "header": _message_headers(row), "body": row["body"], "maxRetries": row["retries"],
        "notBefore": row["not_before"] if row["not_before"] is not None else row["created_at"],
        "createdAt": row["created_at"], "callerIP": row["caller_ip"],
        "responseStatus": row["response_status"], "responseHeader": {"Content-Type": ["text/plain"]},
        "responseBody": row["response_body"], "label": row["label"],
        **flow_control_wire(row["flow_control_key"], row["flow_control_value"]),
        "workflowRunId": row["run_id"], "workflowUrl": row["url"], "workflowCreatedAt": row["run_created_at"],
    })


def list_dlq(store: Store, params: Any) -> dict[str, Any]:
    """``GET /v2/dlq`` against the store: every filter of qstash's ``DlqFilter`` (see ``_DLQ_FILTERS``)."""
    where, args = _where(params, _DLQ_FILTERS)
    page, cursor = _page(store, _DLQ_SELECT, where, args, params, maximum=MAX_DLQ_COUNT,
                         order=("d.created_at", "d.dlq_id"), keys=("created_at", "dlq_id"), int_key=False)
    return _with_cursor({"messages": [_dlq_wire(r) for r in page]}, cursor)


def get_dlq(store: Store, dlq_id: str) -> dict[str, Any]:
    rows = store.query(_DLQ_SELECT + " WHERE d.dlq_id = ?", (dlq_id,))
    if not rows:
        raise ApiError(404, f"no DLQ entry {dlq_id!r}")
    return _dlq_wire(rows[0])


def _event_wire(row: Any) -> dict[str, Any]:
    """One event: every field qstash's ``parse_logs_response`` reads (``body`` is base64 there), plus
    the run and step it belongs to."""
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
    where, args = _where(params, _EVENT_FILTERS)
    ids = _values(params, "messageIds")
    if ids:
        where.append(f"e.message_id IN ({','.join('?' * len(ids))})")
        args += ids
    state = params.get("state")
    if state is not None:
        if state not in EVENT_STATES:
            raise ApiError(400, f"state: must be one of {', '.join(EVENT_STATES)}, got {state!r}")
        where.append("e.state = ?")
        args.append(state)
    select = ("SELECT e.*, r.run_id, r.url, r.created_at AS run_created_at, r.label, r.body, r.retries, "
              "r.flow_control_key, r.flow_control_value FROM events e JOIN runs r ON r.seq = e.run_seq")
    page, cursor = _page(store, select, where, args, params, maximum=MAX_EVENTS_COUNT,
                         order=("e.time", "e.seq"), keys=("time", "seq"), int_key=True)
    return _with_cursor({"events": [_event_wire(r) for r in page]}, cursor)


# -- request bodies of the bulk operations -------------------------------------------------------
async def _object_body(request: Request) -> dict[str, Any]:
    """The JSON object body; no body at all is ``{}``."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
        raise ApiError(400, "request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def _id_list(body: dict[str, Any], field: str) -> list[str] | None:
    value = body.get(field)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ApiError(400, f"{field}: must be an array of non-empty strings")
    return value


async def _dlq_ids(request: Request, *, required: bool) -> list[str]:
    """``dlqIds`` from the body, or from repeated ``?dlqIds=`` (the workflow SDK sends them there)."""
    ids = _id_list(await _object_body(request), "dlqIds")
    if ids is None:
        ids = [v for v in _values(request.query_params, "dlqIds") if v]
    if required and not ids:
        raise ApiError(400, "dlqIds: give at least one DLQ id")
    return ids


def _run_overrides(request: Request) -> dict[str, Any]:
    """The optional Service-* headers of resume and restart (spec, Endpoints D)."""
    return {
        "flow_control_key": _str_header(request, "Service-Flow-Control-Key"),
        "flow_control_value": _str_header(request, "Service-Flow-Control-Value"),
        "retries": _int_param("Service-Retries", request.headers.get("Service-Retries")),
        "run_id": _str_header(request, "Service-Workflow-RunId"),
    }


def _handle_wire(handle: Any) -> dict[str, Any]:
    return {"workflowRunId": handle.workflow_run_id, "workflowCreatedAt": handle.workflow_created_at}


class QueueArea(Area):
    """Queue service interface plus the local workflow runner (``self.runner``)."""

    prefix = "/queue"

    def __init__(self, ctx: SandboxContext) -> None:
        super().__init__(ctx)
        self.store = Store.acquire(ctx)
        self.store.ensure_queue_account(ctx.credentials.devapi_email)
        self.runner = WorkflowRunner(self.store, retry_delay=float(ctx.options.get("queue_retry_delay", 0.05)),
                                     workers=positive_option(ctx.options, "queue_workers", DEFAULT_WORKERS),
                                     message_limit=self.max_message_size)
        # Recover before any request can start a run: RUN_STARTED rows now are a previous process's.
        self.runner.recover()

    def max_message_size(self) -> int:
        """The account's current ``max_message_size`` (bytes), from the live record."""
        return int(self.store.queue_account()["max_message_size"])

    @property
    def _body_cap_given(self) -> bool:
        return self.ctx.options.get(self.body_option) is not None

    @property
    def max_body_bytes(self) -> int:
        """The account's ``max_message_size``, unless the ``queue_max_body_bytes`` option sets another cap."""
        return super().max_body_bytes if self._body_cap_given else self.max_message_size()

    def body_too_large(self, limit: int) -> str:
        if self._body_cap_given:
            return super().body_too_large(limit)
        return (f"request body too large: the queue interface reads at most the account's max_message_size "
                f"of {limit} bytes per request (a trigger's body is its message); send a smaller body, or "
                "move to a plan with a larger max_message_size (POST /devapi/v2/queue-upgrade)")

    def app(self) -> ASGIApp:
        store, runner = self.store, self.runner

        def logs(request: Request) -> JSONResponse:
            return JSONResponse(list_runs(store, request.query_params))

        def dlq(request: Request) -> JSONResponse:
            return JSONResponse(list_dlq(store, request.query_params))

        def dlq_one(request: Request) -> JSONResponse:
            return JSONResponse(get_dlq(store, request.path_params["dlqId"]))

        def dlq_delete(request: Request) -> JSONResponse:
            dlq_id = request.path_params["dlqId"]
            if not runner.delete_dlq([dlq_id]):
                raise ApiError(404, f"no DLQ entry {dlq_id!r}")
            return JSONResponse("OK")

        async def dlq_delete_many(request: Request) -> JSONResponse:
            ids = await _dlq_ids(request, required=False)
            return JSONResponse({"deleted": await run_in_threadpool(runner.delete_dlq, ids)})

        def from_dlq(start: Any, dlq_ids: list[str], overrides: dict[str, Any]) -> list[Any]:
            try:
                return start(dlq_ids, **overrides)
            except NotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except UnknownWorkflow as exc:
                raise ApiError(422, str(exc)) from None
            except MessageTooLarge as exc:  # the plan's limit shrank since the run was made
                raise ApiError(413, str(exc)) from None

        def one_from_dlq(start: Any) -> Any:
            def handler(request: Request) -> JSONResponse:
                (handle,) = from_dlq(start, [request.path_params["dlqId"]], _run_overrides(request))
                return JSONResponse(_handle_wire(handle))
            return handler

        def many_from_dlq(start: Any) -> Any:
            async def handler(request: Request) -> JSONResponse:
                ids, overrides = await _dlq_ids(request, required=True), _run_overrides(request)
                handles = await run_in_threadpool(from_dlq, start, ids, overrides)
                return JSONResponse({"workflowRuns": [_handle_wire(h) for h in handles]})
            return handler

        def cancel(request: Request) -> JSONResponse:
            try:
                runner.cancel(request.path_params["workflowRunId"])
            except NotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except InvalidState as exc:
                raise ApiError(422, str(exc)) from None
            return JSONResponse("OK")

        async def cancel_many(request: Request) -> JSONResponse:
            body = await _object_body(request)
            run_ids = _id_list(body, "workflowRunIds")
            url = body.get("workflowUrl")
            if url is not None and (not isinstance(url, str) or not url):
                raise ApiError(400, "workflowUrl: must be a non-empty string (a URL prefix)")
            if run_ids is not None and url is not None:
                raise ApiError(400, "give either workflowRunIds or workflowUrl, not both")
            count = await run_in_threadpool(lambda: runner.cancel_many(run_ids=run_ids, url_prefix=url))
            return JSONResponse({"cancelled": count})

        def events(request: Request) -> JSONResponse:
            return JSONResponse(list_events(store, request.query_params))

        async def trigger(request: Request) -> JSONResponse:
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else None
            except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
                body = raw.decode("utf-8", "replace")  # a non-JSON payload is kept as a string
            options: dict[str, Any] = {
                "run_id": _str_header(request, "Service-Workflow-RunId"),
                "label": _str_header(request, "Service-Label"),
                "retries": _int_param("Service-Retries", request.headers.get("Service-Retries")),
                "flow_control_key": _str_header(request, "Service-Flow-Control-Key"),
                "flow_control_value": _str_header(request, "Service-Flow-Control-Value"),
                "caller_ip": request.client.host if request.client else None,
            }
            try:
                handle = await run_in_threadpool(runner.trigger, request.path_params["url"], body, **options)
            except UnknownWorkflow as exc:
                raise ApiError(404, f"{exc}; registered: {', '.join(runner.urls) or 'none'}") from None
            except MessageTooLarge as exc:
                raise ApiError(413, str(exc)) from None
            return JSONResponse(_handle_wire(handle))

        routes = [
            Route("/v2/workflows/logs", logs, methods=["GET"]),
            Route("/v2/workflows/runs", cancel_many, methods=["DELETE"]),
            Route("/v2/workflows/runs/{workflowRunId}", cancel, methods=["DELETE"]),
            Route("/v2/dlq", dlq, methods=["GET"]),
            Route("/v2/dlq", dlq_delete_many, methods=["DELETE"]),
            Route("/v2/dlq/resume", many_from_dlq(runner.resume_many), methods=["POST"]),
            Route("/v2/dlq/resume/{dlqId}", one_from_dlq(runner.resume_many), methods=["POST"]),
            Route("/v2/dlq/restart", many_from_dlq(runner.restart_many), methods=["POST"]),
            Route("/v2/dlq/restart/{dlqId}", one_from_dlq(runner.restart_many), methods=["POST"]),
            Route("/v2/dlq/{dlqId}", dlq_one, methods=["GET"]),
            Route("/v2/dlq/{dlqId}", dlq_delete, methods=["DELETE"]),
            Route("/v2/events", events, methods=["GET"]),
            Route("/v2/trigger/{url:path}", trigger, methods=["POST"]),
        ]
        return AuthGate(json_app(routes), bearer_check(store.queue_token, "queue token",
                                                       " (a rotated token stops working at once)"),
                        'Bearer realm="queue"')

    async def holds(self) -> str:
        [row] = self.store.query("SELECT (SELECT COUNT(*) FROM runs) AS runs, (SELECT COUNT(*) FROM dlq) AS dlq")
        return f"{row['runs']:,} workflow runs, {row['dlq']:,} in the DLQ"

    def env(self, base_url: str) -> dict[str, str]:
        # Read from the store each time: it reflects a rotation done through /devapi/v2.
        return {"SVC_QUEUE_URL": f"{base_url}{self.prefix}", "SVC_QUEUE_TOKEN": self.store.queue_token()}

    async def seed(self, name: str) -> None:
        if name == "demo":
            from svckit.sandbox.demo_workflows import seed_demo

            await asyncio.to_thread(seed_demo, self.runner)

    async def stop(self) -> None:
        self.runner.close()
        self.store.release()
