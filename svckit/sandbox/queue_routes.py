"""The queue area's own endpoints (the runs, the DLQ, trigger and batch; svckit/sandbox/queue.py's docstring
lists them): module-level functions in Starlette's shape, each reading its :class:`~svckit.sandbox.queue.QueueArea`
from ``request.app.state.area``, and the :data:`ROUTES` table. Blocking work (SQLite) goes through
:func:`~svckit.sandbox.http.off_loop`; an endpoint that is a plain function runs in Starlette's worker thread."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit.sandbox.headers import neutral_headers
from svckit.sandbox.http import ApiError, off_loop
from svckit.sandbox.queue_reads import (
    BULK_COUNT,
    MAX_BULK_COUNT,
    RUN_FILTERS,
    Filter,
    dlq_page,
    get_dlq,
    int_param,
    list_dlq,
    list_events,
    list_runs,
    values,
    where,
    with_cursor,
)
from svckit.sandbox.workflow.runner import CallbackError, InvalidState, MessageTooLarge, NotFoundError

if TYPE_CHECKING:
    from svckit.sandbox.queue import QueueArea


# -- request headers and bodies -----------------------------------------------------------------
def _str_header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name.lower())
    if value is not None and not value.strip():
        raise ApiError(400, f"{name}: must not be empty")
    return value


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
        ids = [v for v in values(request.query_params, "dlqIds") if v]
    if required and not ids:
        raise ApiError(400, "dlqIds: give at least one DLQ id")
    return ids


def _run_options(headers: Mapping[str, str], *, label: bool = False) -> dict[str, Any]:
    """A run's options from its optional Service-* headers (spec, Endpoints D), as
    :meth:`WorkflowRunner.trigger` and the DLQ's resume and restart take them; ``headers`` by
    lower-case name (a request's, or a batch message's made neutral); ``label`` for a new run."""
    options = {
        "flow_control_key": _str_header(headers, "Service-Flow-Control-Key"),
        "flow_control_value": _str_header(headers, "Service-Flow-Control-Value"),
        "retries": int_param("Service-Retries", headers.get("service-retries")),
        "run_id": _str_header(headers, "Service-Workflow-RunId"),
    }
    if label:
        options["label"] = _str_header(headers, "Service-Label")
    return options


def _handle_wire(handle: Any) -> dict[str, Any]:
    return {"workflowRunId": handle.workflow_run_id, "workflowCreatedAt": handle.workflow_created_at}


async def _array_body(request: Request) -> list[Any]:
    try:
        body = json.loads(await request.body())
    except (ValueError, RecursionError):
        raise ApiError(400, "request body is not valid JSON") from None
    if not isinstance(body, list) or not body:
        raise ApiError(400, "request body must be a non-empty JSON array of messages")
    return body


def _neutral(given: Any) -> dict[str, str]:
    """A batch message's headers by lower-case neutral name (``Upstash-Retries`` -> ``service-retries``)."""
    if not isinstance(given, dict):
        raise ApiError(400, "a message's headers must be an object of header names to values")
    return {name.decode(): value.decode() for name, value in
            neutral_headers([(str(k).lower().encode(), str(v).encode()) for k, v in given.items()])}


def _batch_message(message: Any) -> dict[str, Any]:
    """A plain message of ``POST /v2/batch``: ``{destination, headers, body, queue}``, headers made neutral."""
    if not (isinstance(message, dict) and isinstance(message.get("destination"), str)):
        raise ApiError(400, "every message must be an object with a destination (a URL or a URL group's name)")
    return {**message, "headers": _neutral(message.get("headers") or {})}


def _cancel_filters(params: Any) -> list[Filter]:
    """The run filters of a cancel: ``workflowUrl`` matches a prefix unless ``workflowUrlExactMatch``."""
    exact = params.get("workflowUrlExactMatch", "false")
    if exact not in ("true", "false"):
        raise ApiError(400, f"workflowUrlExactMatch: must be true or false, got {exact!r}")
    url = Filter("workflowUrl", "r.url", "=" if exact == "true" else "prefix", many=True)
    return [url if f.param == "workflowUrl" else f for f in RUN_FILTERS]


# -- endpoints: each reads its area from the app's state (QueueArea.app) -------------------------
def _area(request: Request) -> QueueArea:
    return request.app.state.area


def logs(request: Request) -> JSONResponse:
    return JSONResponse(list_runs(_area(request).store, request.query_params))


def grouped_events(request: Request) -> JSONResponse:
    group = request.query_params.get("groupBy")
    if group != "workflowRunId":
        raise ApiError(400, f"groupBy: the sandbox groups events by workflowRunId (the workflow SDK's "
                            f"logs()), got {group!r}; the events one by one are GET /v2/events")
    return JSONResponse(list_runs(_area(request).store, request.query_params))


def dlq(request: Request) -> JSONResponse:
    return JSONResponse(list_dlq(_area(request).store, request.query_params))


def dlq_one(request: Request) -> JSONResponse:
    return JSONResponse(get_dlq(_area(request).store, request.path_params["dlqId"]))


def dlq_delete(request: Request) -> JSONResponse:
    dlq_id = request.path_params["dlqId"]
    if not _area(request).runner.delete_dlq([dlq_id]):
        raise ApiError(404, f"no DLQ entry {dlq_id!r}")
    return JSONResponse("OK")


async def dlq_delete_many(request: Request) -> JSONResponse:
    ids = await _dlq_ids(request, required=False)
    return JSONResponse({"deleted": await off_loop(_area(request).runner.delete_dlq, ids)})


async def _dlq_selection(request: Request) -> tuple[list[str], str | None]:
    """The entries a workflow-SDK bulk action acts on: the ``dlqIds`` given, else one page of those the
    filters select (no filter: every entry), with the cursor of the next page."""
    ids = await _dlq_ids(request, required=False)
    if ids:
        return ids, None
    entries, cursor = await off_loop(dlq_page, _area(request).store, request.query_params,
                                     maximum=MAX_BULK_COUNT, default=BULK_COUNT)
    return [e["dlq_id"] for e in entries], cursor


def _from_dlq(request: Request, how: str, dlq_ids: list[str], overrides: dict[str, Any]) -> list[Any]:
    """The runs that ``runner.<how>`` (``resume_many`` or ``restart_many``) starts from ``dlq_ids``."""
    try:
        return getattr(_area(request).runner, how)(dlq_ids, **overrides)  # type: ignore[no-any-return]
    except NotFoundError as exc:
        raise ApiError(404, str(exc)) from None
    except InvalidState as exc:
        raise ApiError(422, str(exc)) from None
    except MessageTooLarge as exc:  # the plan's limit shrank since the run was made
        raise ApiError(413, str(exc)) from None


def one_from_dlq(how: str, request: Request) -> JSONResponse:
    (handle,) = _from_dlq(request, how, [request.path_params["dlqId"]], _run_options(request.headers))
    return JSONResponse(_handle_wire(handle))


async def many_from_dlq(how: str, request: Request) -> JSONResponse:
    ids, overrides = await _dlq_ids(request, required=True), _run_options(request.headers)
    handles = await off_loop(_from_dlq, request, how, ids, overrides)
    return JSONResponse({"workflowRuns": [_handle_wire(h) for h in handles]})


async def selected_from_dlq(how: str, request: Request) -> JSONResponse:
    overrides = _run_options(request.headers)
    ids, cursor = await _dlq_selection(request)
    handles = await off_loop(_from_dlq, request, how, ids, overrides)
    return JSONResponse(with_cursor({"workflowRuns": [_handle_wire(h) for h in handles]}, cursor))


async def retry_one(request: Request) -> JSONResponse:
    dlq_id = request.path_params["dlqId"]
    answers = await off_loop(_area(request).publisher.retry, [dlq_id])
    if not answers:
        raise ApiError(404, f"no DLQ entry {dlq_id!r} of a message (a workflow run's entry is resumed: "
                            f"POST /v2/dlq/resume/{dlq_id})")
    return JSONResponse({"messageId": answers[0]["messageId"]})


async def retry_selected(request: Request) -> JSONResponse:
    ids, cursor = await _dlq_selection(request)
    answers = await off_loop(_area(request).publisher.retry, ids)
    return JSONResponse(with_cursor({"responses": [{"messageId": a["messageId"]} for a in answers]}, cursor))


async def dlq_delete_selected(request: Request) -> JSONResponse:
    ids, cursor = await _dlq_selection(request)
    return JSONResponse(with_cursor({"deleted": await off_loop(_area(request).runner.delete_dlq, ids)}, cursor))


def retry_callback(request: Request) -> JSONResponse:
    try:
        handle = _area(request).runner.retry_failure_function(request.path_params["dlqId"])
    except NotFoundError as exc:
        raise ApiError(404, str(exc)) from None
    except CallbackError as exc:
        raise ApiError(422, str(exc)) from None
    return JSONResponse(_handle_wire(handle))


async def cancel(request: Request) -> JSONResponse:
    area, run_id = _area(request), request.path_params["workflowRunId"]
    if request.query_params.get("cancel") == "false":  # the run's app ends it: its body is the response
        response = (await request.body()).decode("utf-8", "replace") or None
        await off_loop(area.workflows.end, run_id, response)
        return JSONResponse("OK")
    try:
        await off_loop(area.runner.cancel, run_id)
    except NotFoundError as exc:
        raise ApiError(404, str(exc)) from None
    except InvalidState as exc:
        raise ApiError(422, str(exc)) from None
    return JSONResponse("OK")


async def cancel_many(request: Request) -> JSONResponse:
    runner, params = _area(request).runner, request.query_params
    run_ids = [v for v in values(params, "workflowRunIds") if v]
    clauses, args = where(params, _cancel_filters(params))
    if run_ids or clauses or "count" in params:  # the workflow SDK's query
        limit = None if run_ids else int_param("count", params.get("count"), 1, MAX_BULK_COUNT) or BULK_COUNT
        count = await off_loop(runner.cancel_many, run_ids=run_ids or None, where=clauses, args=args, limit=limit)
        return JSONResponse({"cancelled": count})
    body = await _object_body(request)  # the older body form
    body_ids = _id_list(body, "workflowRunIds")
    url = body.get("workflowUrl")
    if url is not None and (not isinstance(url, str) or not url):
        raise ApiError(400, "workflowUrl: must be a non-empty string (a URL prefix)")
    if body_ids is not None and url is not None:
        raise ApiError(400, "give either workflowRunIds or workflowUrl, not both")
    count = await off_loop(runner.cancel_many, run_ids=body_ids, url_prefix=url)
    return JSONResponse({"cancelled": count})


def events(request: Request) -> JSONResponse:
    return JSONResponse(list_events(_area(request).store, request.query_params))


async def trigger(request: Request) -> JSONResponse:
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
        body = raw.decode("utf-8", "replace")  # a non-JSON payload is kept as a string
    options = {**_run_options(request.headers, label=True),
               "caller_ip": request.client.host if request.client else None}
    try:
        handle = await off_loop(_area(request).runner.trigger, request.path_params["url"], body, **options)
    except MessageTooLarge as exc:
        raise ApiError(413, str(exc)) from None
    return JSONResponse(_handle_wire(handle))


async def batch(request: Request) -> JSONResponse:
    messages = [_batch_message(m) for m in await _array_body(request)]
    caller = request.client.host if request.client else None
    return JSONResponse(await off_loop(_area(request).messages.batch_items, messages, caller))


#: the runs and the DLQ (the module docstring); QueueArea.app adds the messages', resources',
#: schedules' and workflows' routes after these
ROUTES = [
    Route("/v2/batch", batch, methods=["POST"]),
    Route("/v2/workflows/logs", logs, methods=["GET"]),
    Route("/v2/workflows/events", grouped_events, methods=["GET"]),
    Route("/v2/workflows/runs", cancel_many, methods=["DELETE"]),
    Route("/v2/workflows/runs/{workflowRunId}", cancel, methods=["DELETE"]),
    Route("/v2/workflows/dlq", dlq_delete_selected, methods=["DELETE"]),
    Route("/v2/workflows/dlq/resume", partial(selected_from_dlq, "resume_many"), methods=["POST"]),
    Route("/v2/workflows/dlq/restart", partial(selected_from_dlq, "restart_many"), methods=["POST"]),
    Route("/v2/workflows/dlq/callback/{dlqId}", retry_callback, methods=["POST"]),
    Route("/v2/dlq", dlq, methods=["GET"]),
    Route("/v2/dlq", dlq_delete_many, methods=["DELETE"]),
    Route("/v2/dlq/resume", partial(many_from_dlq, "resume_many"), methods=["POST"]),
    Route("/v2/dlq/resume/{dlqId}", partial(one_from_dlq, "resume_many"), methods=["POST"]),
    Route("/v2/dlq/restart", partial(many_from_dlq, "restart_many"), methods=["POST"]),
    Route("/v2/dlq/restart/{dlqId}", partial(one_from_dlq, "restart_many"), methods=["POST"]),
    Route("/v2/dlq/retry", retry_selected, methods=["POST"]),
    Route("/v2/dlq/retry/{dlqId}", retry_one, methods=["POST"]),
    Route("/v2/dlq/{dlqId}", dlq_one, methods=["GET"]),
    Route("/v2/dlq/{dlqId}", dlq_delete, methods=["DELETE"]),
    Route("/v2/events", events, methods=["GET"]),
    Route("/v2/trigger/{url:path}", trigger, methods=["POST"]),
]
