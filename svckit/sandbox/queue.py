"""Area D of the sandbox: the queue service interface under ``/queue`` (paths carry /v2), Bearer auth.

The bearer token is the CURRENT ``token`` of the queue account record in the store, read on every
request, so a token rotated through /devapi/v2 is refused from the very next request on.

Routes: the spec's two, then what the hosted service's SDKs call (state rules in docs/errors.md;
the filters, pages and reply shapes in :mod:`svckit.sandbox.queue_reads`):
- ``GET  /v2/workflows/logs``           every filter of the spec; newest first; ``count`` 1..10
  (default 10; a larger value is rejected with 400, see docs/errors.md); cursor pagination that returns
  every run exactly once and leaves ``cursor`` out on the last page.
- ``POST /v2/dlq/resume/{dlqId}``       the four optional Service-* headers; removes the DLQ entry.
- ``POST /v2/dlq/resume``               many at once: ``{"dlqIds": [...]}`` (or ``?dlqIds=`` repeated);
  ``{"workflowRuns": [{workflowRunId, workflowCreatedAt}, ...]}`` in the order given.
- ``POST /v2/dlq/restart/{dlqId}``, ``POST /v2/dlq/restart``   the same, from the first step.
- ``GET  /v2/dlq``                      the qstash SDK's DLQ message shape and every filter of its
  ``DlqFilter`` and of the workflow SDK's list, newest first, ``count`` 1..100 (default 100), cursor.
- ``GET|DELETE /v2/dlq/{dlqId}``        one entry; delete answers ``"OK"``.
- ``DELETE /v2/dlq``                    ``{"dlqIds": [...]}`` -> ``{"deleted": n}``.
- ``DELETE /v2/workflows/runs/{id}``    cancel, like the real service (200 ``"OK"``; 404; 422 when
  the run is not in progress); with ``?cancel=false`` the run's app ends it (the body is its response).
- ``DELETE /v2/workflows/runs``         cancel many -> ``{"cancelled": n}``: the workflow SDK's query
  (``?workflowRunIds=`` repeated; or the run filters, ``workflowUrl`` a prefix unless
  ``workflowUrlExactMatch=true``, at most ``count``, default 100, newest first; or ``count`` alone:
  every run in progress, ``count`` of them); or the older body ``{"workflowRunIds": [...]}``,
  ``{"workflowUrl": prefix}``, ``{}`` / nothing (every run in progress).
- ``GET  /v2/events``                   the events log (one event per state of each message) in the
  qstash SDK's shape and with its ``LogFilter``; newest first, ``count`` 1..1000 (default 1000), cursor.
- ``POST /v2/trigger/{workflowUrl}``    start a run of the workflow at that URL (registered in the sandbox, or
  an app's ``serve()`` on loopback): its Init message (body = payload; headers Service-Workflow-RunId,
  Service-Retries, Service-Label, Service-Flow-Control-Key/-Value).

The workflow SDK's ``Client`` (``/v2/workflows/...``):
- ``GET  /v2/workflows/events?groupBy=workflowRunId``   ``logs()``: the runs, as ``/v2/workflows/logs``.
- ``POST /v2/workflows/dlq/resume``, ``/restart``, ``DELETE /v2/workflows/dlq``   by ``?dlqIds=``
  (repeated), or one page of the entries the DLQ filters select (none: every entry), ``count``
  (default 100, at most 1000) at a time, newest first, with the ``cursor`` of the next page; reply
  ``{workflowRuns}`` or ``{deleted}``, plus ``cursor`` while entries remain.
- ``POST /v2/batch``                    messages, published as one (:mod:`svckit.sandbox.delivery`); an
  Init message of a workflow run (``Client.trigger()``) starts the run, ``deduplicated`` for a run id
  already in progress. Every message is accepted, or none (413 for a message too large).
- ``POST /v2/workflows/dlq/callback/{dlqId}``   call the run's failure function again:
  ``{workflowRunId, workflowCreatedAt}``; 404; 422 when the run has no failure callback or it has not failed.

Every run is one kind, whoever serves its workflow: the user's app with the vendor's ``serve()``, or
the sandbox itself for the workflows registered on :attr:`QueueArea.runner`
(:mod:`svckit.sandbox.workflow`).

Message size: a run's message may not be larger than the queue account's ``max_message_size``, read
from the live record (a plan upgrade changes it at once): a trigger body over it is answered 413
``{"error"}`` before it is read (the area's body cap is that limit, unless ``queue_max_body_bytes``
sets another), and trigger, resume and restart answer 413 when the run's first message is over it.

Sources for the shapes the spec does not show: qstash 3.4.0's ``dlq.py``, ``log.py`` and
``message.py`` (installed) for the DLQ and events; @upstash/workflow 1.3.3's ``Client`` and ``DLQ``
(``src/client/index.ts``, ``src/client/dlq.ts``, and ``buildBulkActionQueryParameters``: ids, filters,
``count`` and ``cursor`` as query parameters, arrays repeated).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from svckit.sandbox.area import Area, Health, SandboxContext, positive_option
from svckit.sandbox.auth import bearer_check
from svckit.sandbox.delivery.burst import BurstLimit
from svckit.sandbox.delivery.engine import Deliveries
from svckit.sandbox.delivery.publish import Publisher
from svckit.sandbox.delivery.resources import Resources
from svckit.sandbox.delivery.routes import MessageRoutes
from svckit.sandbox.delivery.schedules import Schedules
from svckit.sandbox.headers import neutral_headers
from svckit.sandbox.http import ApiError, AuthGate, json_app
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
from svckit.sandbox.store import Store
from svckit.sandbox.workflow.routes import WorkflowRoutes
from svckit.sandbox.workflow.runner import (
    DEFAULT_WORKERS,
    CallbackError,
    InvalidState,
    MessageTooLarge,
    NotFoundError,
    WorkflowRunner,
)


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


class QueueArea(Area):
    """Queue service interface plus the local workflow runner (``self.runner``)."""

    prefix = "/queue"

    def __init__(self, ctx: SandboxContext) -> None:
        super().__init__(ctx)
        self.store = Store.acquire(ctx)
        self.store.ensure_queue_account(ctx.credentials.devapi_email)
        # the local QStash: messages kept in the store and delivered to loopback (svckit/sandbox/delivery)
        self.deliveries = Deliveries(self.store, signing_key=lambda: self.store.signing_keys()[0],
                                     account=self.store.queue_account,
                                     backoff_scale=float(ctx.options.get("queue_backoff_scale", 1.0)))
        self.publisher = Publisher(self.store, self.deliveries, ctx.options.get("allow_destinations") or ())
        # the workflows the sandbox serves itself (the demo's, a test's): delivered to in process
        self.runner = WorkflowRunner(self.store, self.publisher,
                                     workers=positive_option(ctx.options, "queue_workers", DEFAULT_WORKERS),
                                     retry_delay=float(ctx.options.get("queue_retry_delay", 0.05)))
        self.publisher.local = self.runner.serves
        self.deliveries.local = (self.runner.serves, self.runner.app)
        self.messages = MessageRoutes(self.store, self.publisher, self.deliveries)
        self.resources = Resources(self.store, self.publisher, self.deliveries)
        self.schedules = Schedules(self.store, self.publisher)
        self.workflows = WorkflowRoutes(self.store, self.publisher, self.deliveries)

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

        def grouped_events(request: Request) -> JSONResponse:
            group = request.query_params.get("groupBy")
            if group != "workflowRunId":
                raise ApiError(400, f"groupBy: the sandbox groups events by workflowRunId (the workflow SDK's "
                                    f"logs()), got {group!r}; the events one by one are GET /v2/events")
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

        async def dlq_selection(request: Request) -> tuple[list[str], str | None]:
            """The entries a workflow-SDK bulk action acts on: the ``dlqIds`` given, else one page of
            those the filters select (no filter: every entry), with the cursor of the next page."""
            ids = await _dlq_ids(request, required=False)
            if ids:
                return ids, None
            entries, cursor = await run_in_threadpool(lambda: dlq_page(
                store, request.query_params, maximum=MAX_BULK_COUNT, default=BULK_COUNT))
            return [e["dlq_id"] for e in entries], cursor

        def from_dlq(start: Callable[..., list[Any]], dlq_ids: list[str], overrides: dict[str, Any]) -> list[Any]:
            try:
                return start(dlq_ids, **overrides)
            except NotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except InvalidState as exc:
                raise ApiError(422, str(exc)) from None
            except MessageTooLarge as exc:  # the plan's limit shrank since the run was made
                raise ApiError(413, str(exc)) from None

        def one_from_dlq(start: Callable[..., list[Any]]) -> Any:
            def handler(request: Request) -> JSONResponse:
                (handle,) = from_dlq(start, [request.path_params["dlqId"]], _run_options(request.headers))
                return JSONResponse(_handle_wire(handle))
            return handler

        def many_from_dlq(start: Callable[..., list[Any]]) -> Any:
            async def handler(request: Request) -> JSONResponse:
                ids, overrides = await _dlq_ids(request, required=True), _run_options(request.headers)
                handles = await run_in_threadpool(from_dlq, start, ids, overrides)
                return JSONResponse({"workflowRuns": [_handle_wire(h) for h in handles]})
            return handler

        async def retry_one(request: Request) -> JSONResponse:
            dlq_id = request.path_params["dlqId"]
            answers = await run_in_threadpool(self.publisher.retry, [dlq_id])
            if not answers:
                raise ApiError(404, f"no DLQ entry {dlq_id!r} of a message (a workflow run's entry is resumed: "
                                    f"POST /v2/dlq/resume/{dlq_id})")
            return JSONResponse({"messageId": answers[0]["messageId"]})

        async def retry_selected(request: Request) -> JSONResponse:
            ids, cursor = await dlq_selection(request)
            answers = await run_in_threadpool(self.publisher.retry, ids)
            return JSONResponse(with_cursor({"responses": [{"messageId": a["messageId"]} for a in answers]}, cursor))

        def selected_from_dlq(start: Callable[..., list[Any]]) -> Any:
            async def handler(request: Request) -> JSONResponse:
                overrides = _run_options(request.headers)
                ids, cursor = await dlq_selection(request)
                handles = await run_in_threadpool(from_dlq, start, ids, overrides)
                return JSONResponse(with_cursor({"workflowRuns": [_handle_wire(h) for h in handles]}, cursor))
            return handler

        async def dlq_delete_selected(request: Request) -> JSONResponse:
            ids, cursor = await dlq_selection(request)
            return JSONResponse(with_cursor({"deleted": await run_in_threadpool(runner.delete_dlq, ids)}, cursor))

        def retry_callback(request: Request) -> JSONResponse:
            try:
                handle = runner.retry_failure_function(request.path_params["dlqId"])
            except NotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except CallbackError as exc:
                raise ApiError(422, str(exc)) from None
            return JSONResponse(_handle_wire(handle))

        async def cancel(request: Request) -> JSONResponse:
            run_id = request.path_params["workflowRunId"]
            if request.query_params.get("cancel") == "false":  # the run's app ends it: its body is the response
                response = (await request.body()).decode("utf-8", "replace") or None
                await run_in_threadpool(lambda: self.workflows.end(run_id, response))
                return JSONResponse("OK")
            try:
                await run_in_threadpool(runner.cancel, run_id)
            except NotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except InvalidState as exc:
                raise ApiError(422, str(exc)) from None
            return JSONResponse("OK")

        async def cancel_many(request: Request) -> JSONResponse:
            params = request.query_params
            run_ids = [v for v in values(params, "workflowRunIds") if v]
            clauses, args = where(params, _cancel_filters(params))
            if run_ids or clauses or "count" in params:  # the workflow SDK's query
                limit = None if run_ids else int_param("count", params.get("count"), 1, MAX_BULK_COUNT) or BULK_COUNT
                count = await run_in_threadpool(lambda: runner.cancel_many(
                    run_ids=run_ids or None, where=clauses, args=args, limit=limit))
                return JSONResponse({"cancelled": count})
            body = await _object_body(request)  # the older body form
            body_ids = _id_list(body, "workflowRunIds")
            url = body.get("workflowUrl")
            if url is not None and (not isinstance(url, str) or not url):
                raise ApiError(400, "workflowUrl: must be a non-empty string (a URL prefix)")
            if body_ids is not None and url is not None:
                raise ApiError(400, "give either workflowRunIds or workflowUrl, not both")
            count = await run_in_threadpool(lambda: runner.cancel_many(run_ids=body_ids, url_prefix=url))
            return JSONResponse({"cancelled": count})

        def events(request: Request) -> JSONResponse:
            return JSONResponse(list_events(store, request.query_params))

        async def trigger(request: Request) -> JSONResponse:
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else None
            except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
                body = raw.decode("utf-8", "replace")  # a non-JSON payload is kept as a string
            options = {**_run_options(request.headers, label=True),
                       "caller_ip": request.client.host if request.client else None}
            try:
                handle = await run_in_threadpool(runner.trigger, request.path_params["url"], body, **options)
            except MessageTooLarge as exc:
                raise ApiError(413, str(exc)) from None
            return JSONResponse(_handle_wire(handle))

        async def batch(request: Request) -> JSONResponse:
            messages = [_batch_message(m) for m in await _array_body(request)]
            caller = request.client.host if request.client else None
            return JSONResponse(await run_in_threadpool(self.messages.batch_items, messages, caller))

        routes = [
            Route("/v2/batch", batch, methods=["POST"]),
            Route("/v2/workflows/logs", logs, methods=["GET"]),
            Route("/v2/workflows/events", grouped_events, methods=["GET"]),
            Route("/v2/workflows/runs", cancel_many, methods=["DELETE"]),
            Route("/v2/workflows/runs/{workflowRunId}", cancel, methods=["DELETE"]),
            Route("/v2/workflows/dlq", dlq_delete_selected, methods=["DELETE"]),
            Route("/v2/workflows/dlq/resume", selected_from_dlq(runner.resume_many), methods=["POST"]),
            Route("/v2/workflows/dlq/restart", selected_from_dlq(runner.restart_many), methods=["POST"]),
            Route("/v2/workflows/dlq/callback/{dlqId}", retry_callback, methods=["POST"]),
            Route("/v2/dlq", dlq, methods=["GET"]),
            Route("/v2/dlq", dlq_delete_many, methods=["DELETE"]),
            Route("/v2/dlq/resume", many_from_dlq(runner.resume_many), methods=["POST"]),
            Route("/v2/dlq/resume/{dlqId}", one_from_dlq(runner.resume_many), methods=["POST"]),
            Route("/v2/dlq/restart", many_from_dlq(runner.restart_many), methods=["POST"]),
            Route("/v2/dlq/restart/{dlqId}", one_from_dlq(runner.restart_many), methods=["POST"]),
            Route("/v2/dlq/retry", retry_selected, methods=["POST"]),
            Route("/v2/dlq/retry/{dlqId}", retry_one, methods=["POST"]),
            Route("/v2/dlq/{dlqId}", dlq_one, methods=["GET"]),
            Route("/v2/dlq/{dlqId}", dlq_delete, methods=["DELETE"]),
            Route("/v2/events", events, methods=["GET"]),
            Route("/v2/trigger/{url:path}", trigger, methods=["POST"]),
            *self.messages.routes(), *self.resources.routes(), *self.schedules.routes(), *self.workflows.routes(),
        ]
        limited = BurstLimit(json_app(routes), lambda: int(store.queue_account()["max_requests_per_second"]))
        return AuthGate(limited, bearer_check(store.queue_token, "queue token",
                                                       " (a rotated token stops working at once)"),
                        'Bearer realm="queue"')

    async def holds(self) -> str:
        [row] = self.store.query("SELECT (SELECT COUNT(*) FROM runs) AS runs, (SELECT COUNT(*) FROM dlq) AS dlq")
        return f"{row['runs']:,} workflow runs, {row['dlq']:,} in the DLQ"

    async def health(self) -> list[Health]:
        return [await self.store.health()]

    def env(self, base_url: str) -> dict[str, str]:
        # Read from the store each time: it reflects a rotation done through /devapi/v2.
        current, upcoming = self.store.signing_keys()
        return {"SVC_QUEUE_URL": f"{base_url}{self.prefix}", "SVC_QUEUE_TOKEN": self.store.queue_token(),
                "SVC_QUEUE_CURRENT_SIGNING_KEY": current, "SVC_QUEUE_NEXT_SIGNING_KEY": upcoming}

    async def seed(self, name: str) -> None:
        if name == "demo":
            from svckit.sandbox.demo_workflows import seed_demo

            await asyncio.to_thread(seed_demo, self.runner)

    async def start(self) -> None:
        await self.deliveries.start()
        await self.schedules.start()

    async def stop(self) -> None:
        await self.schedules.stop()
        await self.deliveries.stop()
        self.store.release()
