"""The routes of served runs in the queue area (paths carry /v2, Bearer auth: :mod:`svckit.sandbox.queue`
mounts them beside the runs log and the DLQ, which read every run alike):

- ``GET  /v2/workflows/runs/{id}``             the run's history, as its deliveries carry it (the JS SDK
  reads it when a delivery comes without a body)
- ``DELETE /v2/workflows/runs/{id}?cancel=``   the app ends its run (``cancel=false``, the body is the
  run's response; :meth:`WorkflowRoutes.end`) or cancels it (the queue area's cancel)
- ``POST /v2/wait/{eventId}``, ``POST /v2/notify/{eventId}``, ``POST /v2/notify/{runId}/{eventId}``,
  ``GET /v2/waiters/{eventId}``: :mod:`.events`
"""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit.sandbox.delivery.engine import Deliveries
from svckit.sandbox.delivery.publish import Publisher
from svckit.sandbox.http import ApiError, lower_headers, off_loop
from svckit.sandbox.store import Store, now_ms
from svckit.sandbox.workflow import events
from svckit.sandbox.workflow.runs import run_of


class WorkflowRoutes:
    """The routes above, over one sandbox's store, publisher (its served runs) and delivery engine."""

    def __init__(self, store: Store, publisher: Publisher, engine: Deliveries) -> None:
        self.store, self.publisher, self.engine = store, publisher, engine

    def routes(self) -> list[Route]:
        return [
            Route("/v2/workflows/runs/{workflowRunId}", self.history, methods=["GET"]),
            Route("/v2/wait/{eventId}", self.wait, methods=["POST"]),
            Route("/v2/notify/{eventId}", self.notify, methods=["POST"]),
            Route("/v2/notify/{workflowRunId}/{eventId}", self.notify, methods=["POST"]),
            Route("/v2/waiters/{eventId}", self.waiters, methods=["GET"]),
        ]

    def end(self, run_id: str, response: str | None) -> None:
        """The app ended its run (``cancel=false``): ``response`` is the run's."""
        with self.store.transaction() as db:
            run = run_of(db, run_id)
            if run is None:
                raise ApiError(404, f"no workflow run {run_id!r}")
            self.publisher.runs.end(db, run, cancel=False, response=response, now=now_ms())

    def history(self, request: Request) -> JSONResponse:
        run_id = request.path_params["workflowRunId"]
        with self.store.transaction() as db:
            entries = self.publisher.runs.history(db, run_id)
        if entries is None:
            raise ApiError(404, f"no workflow run {run_id!r} in progress")
        return JSONResponse(entries)

    async def wait(self, request: Request) -> JSONResponse:
        try:
            body = json.loads(await request.body())
        except (ValueError, RecursionError):
            raise ApiError(400, "request body is not valid JSON") from None
        if isinstance(body, dict):
            for key in ("url", "timeoutUrl"):
                if isinstance(body.get(key), str):
                    self.publisher.check_url(body[key], "wait " + key)
        headers = lower_headers(request)

        def register() -> None:
            with self.store.transaction() as db:
                waiting = events.wait(db, request.path_params["eventId"], body, headers, now_ms())
            self.engine.submit(waiting)

        await off_loop(register)
        return JSONResponse({})

    async def notify(self, request: Request) -> JSONResponse:
        data = await request.body()
        run_id = request.path_params.get("workflowRunId")

        def deliver() -> list[dict[str, object]]:
            with self.store.transaction() as db:
                answers, waiting, forgotten = events.notify(db, request.path_params["eventId"], data, run_id, now_ms())
            self.engine.forget(forgotten)
            self.engine.submit(waiting)
            return answers

        answers = await off_loop(deliver)
        if run_id is not None:  # the run form answers one waiter
            if not answers:
                raise ApiError(404, f"workflow run {run_id!r} does not wait for {request.path_params['eventId']!r}")
            return JSONResponse(answers[0])
        return JSONResponse(answers)

    def waiters(self, request: Request) -> JSONResponse:
        with self.store.transaction() as db:
            return JSONResponse(events.waiters(db, request.path_params["eventId"]))
