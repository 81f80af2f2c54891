"""Area D of the sandbox: the queue service interface under ``/queue`` (paths carry /v2), Bearer auth.

The bearer token is the CURRENT ``token`` of the queue account record in the store, read on every
request, so a token rotated through /devapi/v2 is refused from the very next request on.

Routes:
- ``GET  /v2/workflows/logs``           every filter of the spec; newest first; ``count`` 1..10
  (default 10; a larger value is rejected with 400, see docs/errors.md); cursor pagination that returns
  every run exactly once and leaves ``cursor`` out on the last page.
- ``POST /v2/dlq/resume/{dlqId}``       the four optional Service-* headers; removes the DLQ entry.
- ``GET  /v2/dlq``                      ``{cursor, messages: [{dlqId, workflowRunId, workflowUrl, ...}]}``.
- ``DELETE /v2/workflows/runs/{id}``    cancel, like the real service (200 ``"OK"``; 404; 422 when
  the run is not in progress).
- ``POST /v2/trigger/{workflowUrl}``    start a run of a registered workflow (body = payload; headers
  Service-Workflow-RunId, Service-Retries, Service-Label, Service-Flow-Control-Key/-Value).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from svckit.sandbox.area import Area, SandboxContext
from svckit.sandbox.auth import bearer_check
from svckit.sandbox.devapi import ApiError, AuthGate, json_app
from svckit.sandbox.runner import (
    RUN_STATES,
    InvalidState,
    NotFoundError,
    UnknownWorkflow,
    WorkflowRunner,
    decode_cursor,
    encode_cursor,
)
from svckit.sandbox.store import Store

MAX_LOGS_COUNT = 10
MAX_DLQ_COUNT = 100
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


# -- reading runs -------------------------------------------------------------------------------
def _step_wire(row: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"stepId": row["step_id"], "stepName": row["step_name"], "stepType": row["step_type"],
                            "callType": row["call_type"], "messageId": row["message_id"], "out": row["out"],
                            "concurrent": row["concurrent"], "state": row["state"], "createdAt": row["created_at"]}
    return {k: v for k, v in step.items() if v is not None}


def _run_wire(run: Any, steps: Sequence[Any]) -> dict[str, Any]:
    groups: list[dict[str, Any]] = []
    current = None
    for row in steps:
        if current is None or current[0] != row["group_no"]:
            current = (row["group_no"], {"type": row["group_type"], "steps": []})
            groups.append(current[1])
        current[1]["steps"].append(_step_wire(row))
    wire = {
        "workflowRunId": run["run_id"], "workflowUrl": run["url"], "workflowState": run["state"],
        "workflowRunCreatedAt": run["created_at"], "workflowRunCompletedAt": run["completed_at"],
        "steps": groups, "label": run["label"], "flowControlKey": run["flow_control_key"],
        "flowControlValue": run["flow_control_value"], "retries": run["retries"], "dlqId": run["dlq_id"],
    }
    return {k: v for k, v in wire.items() if v is not None}


def list_runs(store: Store, params: Any) -> dict[str, Any]:
    """``GET /v2/workflows/logs`` against the store (params: the query parameters)."""
    where: list[str] = []
    args: list[Any] = []
    for name, column in (("workflowRunId", "run_id"), ("workflowUrl", "url"), ("label", "label")):
        if params.get(name) is not None:
            where.append(f"{column} = ?")
            args.append(params[name])
    state = params.get("state")
    if state is not None:
        if state not in RUN_STATES:
            raise ApiError(400, f"state: must be one of {', '.join(RUN_STATES)}, got {state!r}")
        where.append("state = ?")
        args.append(state)
    for name, clause in (("workflowCreatedAt", "created_at = ?"), ("fromDate", "created_at >= ?"),
                         ("toDate", "created_at <= ?")):
        value = _int_param(name, params.get(name))
        if value is not None:
            where.append(clause)
            args.append(value)
    count = _int_param("count", params.get("count"), 1, MAX_LOGS_COUNT) or MAX_LOGS_COUNT
    after = _cursor(params.get("cursor"))
    if after is not None:
        where.append("(created_at < ? OR (created_at = ? AND seq < ?))")
        args += [after[0], after[0], int(after[1]) if after[1].isdigit() else -1]
    sql = "SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "")
    rows = store.query(sql + " ORDER BY created_at DESC, seq DESC LIMIT ?", (*args, count + 1))
    page, more = rows[:count], len(rows) > count
    steps: dict[int, list[Any]] = {r["seq"]: [] for r in page}
    if page:
        marks = ",".join("?" * len(page))
        for step in store.query(f"SELECT * FROM steps WHERE run_seq IN ({marks}) "
                                "ORDER BY run_seq, group_no, step_id IS NOT NULL, step_id, seq",
                                [r["seq"] for r in page]):
            steps[step["run_seq"]].append(step)
    body: dict[str, Any] = {"runs": [_run_wire(r, steps[r["seq"]]) for r in page]}
    if more:
        body = {"cursor": encode_cursor(page[-1]["created_at"], page[-1]["seq"]), **body}
    return body


def list_dlq(store: Store, params: Any) -> dict[str, Any]:
    count = _int_param("count", params.get("count"), 1, MAX_DLQ_COUNT) or MAX_DLQ_COUNT
    where, args = "", []
    after = _cursor(params.get("cursor"))
    if after is not None:
        where = " WHERE (d.created_at < ? OR (d.created_at = ? AND d.dlq_id < ?))"
        args = [after[0], after[0], after[1]]
    rows = store.query(
        "SELECT d.*, r.run_id, r.url, r.created_at AS run_created_at, r.label FROM dlq d "
        f"JOIN runs r ON r.seq = d.run_seq{where} ORDER BY d.created_at DESC, d.dlq_id DESC LIMIT ?",
        (*args, count + 1))
    page, more = rows[:count], len(rows) > count
    messages = []
    for r in page:
        message = {"dlqId": r["dlq_id"], "messageId": r["message_id"], "url": r["url"],
                   "workflowRunId": r["run_id"], "workflowUrl": r["url"], "workflowCreatedAt": r["run_created_at"],
                   "createdAt": r["created_at"], "responseStatus": r["response_status"],
                   "responseBody": r["response_body"], "label": r["label"]}
        messages.append({k: v for k, v in message.items() if v is not None})
    body: dict[str, Any] = {"messages": messages}
    if more:
        body = {"cursor": encode_cursor(page[-1]["created_at"], page[-1]["dlq_id"]), **body}
    return body


class QueueArea(Area):
    """Queue service interface plus the local workflow runner (``self.runner``)."""

    prefix = "/queue"

    def __init__(self, ctx: SandboxContext) -> None:
        super().__init__(ctx)
        self.store = Store.acquire(ctx)
        self.store.ensure_queue_account(ctx.credentials.devapi_email)
        self.runner = WorkflowRunner(self.store, retry_delay=float(ctx.options.get("queue_retry_delay", 0.05)),
                                     log=ctx.log)
        # Recover before any request can start a run: RUN_STARTED rows now are a previous process's.
        self.runner.recover()

    def app(self) -> ASGIApp:
        store, runner = self.store, self.runner

        def logs(request: Request) -> JSONResponse:
            return JSONResponse(list_runs(store, request.query_params))

        def dlq(request: Request) -> JSONResponse:
            return JSONResponse(list_dlq(store, request.query_params))

        def resume(request: Request) -> JSONResponse:
            overrides: dict[str, Any] = {
                "flow_control_key": _str_header(request, "Service-Flow-Control-Key"),
                "flow_control_value": _str_header(request, "Service-Flow-Control-Value"),
                "retries": _int_param("Service-Retries", request.headers.get("Service-Retries")),
                "run_id": _str_header(request, "Service-Workflow-RunId"),
            }
            try:
                handle = runner.resume(request.path_params["dlqId"], **overrides)
            except NotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except UnknownWorkflow as exc:
                raise ApiError(422, str(exc)) from None
            return JSONResponse({"workflowRunId": handle.workflow_run_id,
                                 "workflowCreatedAt": handle.workflow_created_at})

        def cancel(request: Request) -> JSONResponse:
            try:
                runner.cancel(request.path_params["workflowRunId"])
            except NotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except InvalidState as exc:
                raise ApiError(422, str(exc)) from None
            return JSONResponse("OK")

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
            }
            try:
                handle = await run_in_threadpool(runner.trigger, request.path_params["url"], body, **options)
            except UnknownWorkflow as exc:
                raise ApiError(404, f"{exc}; registered: {', '.join(runner.urls) or 'none'}") from None
            return JSONResponse({"workflowRunId": handle.workflow_run_id,
                                 "workflowCreatedAt": handle.workflow_created_at})

        routes = [
            Route("/v2/workflows/logs", logs, methods=["GET"]),
            Route("/v2/workflows/runs/{workflowRunId}", cancel, methods=["DELETE"]),
            Route("/v2/dlq", dlq, methods=["GET"]),
            Route("/v2/dlq/resume/{dlqId}", resume, methods=["POST"]),
            Route("/v2/trigger/{url:path}", trigger, methods=["POST"]),
        ]
        return AuthGate(json_app(routes), bearer_check(store.queue_token, "queue token", " (a rotated token stops working at once)"), 'Bearer realm="queue"')

    def env(self, base_url: str) -> dict[str, str]:
        # Read from the store each time: it reflects a rotation done through /devapi/v2.
        return {"SVC_QUEUE_URL": f"{base_url}{self.prefix}", "SVC_QUEUE_TOKEN": self.store.queue_token()}

    async def seed(self, name: str) -> None:
        if name == "demo":
            from svckit.sandbox.demo_workflows import seed_demo

            await asyncio.to_thread(seed_demo, self.runner, self.ctx.log)

    async def stop(self) -> None:
        self.runner.close()
        self.store.release()
