"""The queue account through the developer API: the spec's paths (``GET /queue/user``,
``POST /queue/user/rotatetoken``, ``POST /queue-upgrade``, svckit's ``GET /qstash/stats``) and the vendor's
per-instance ones beside them (``GET /qstash/users``, ``GET /qstash/user/{id}``,
``POST /qstash/rotate-token/{id}``, ``POST /qstash/set-plan/{id}``, ``GET /qstash/stats/{id}``).

One function per job: a per-instance path checks the id (404 for another) and then does what the
spec's path does, through the same store method. The data directory has one queue account.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit.account.plans import SET_PLAN_NAMES, UPGRADE_PLAN_NAMES
from svckit.sandbox.delivery.stats import DEFAULT_PERIOD, queue_stats
from svckit.sandbox.http import ApiError, json_body, off_loop, required_string
from svckit.sandbox.store import Store, now_ms


def queue_routes(store: Store) -> list[Route]:
    """The routes of the queue account, spec's and vendor's, on ``store``."""

    def account(request: Request) -> dict[str, Any]:
        """The account the path's ``{id}`` names (404 for any other); run in a worker thread."""
        record = store.queue_account()
        account_id = request.path_params["id"]
        if account_id != record["id"]:
            raise ApiError(404, f"queue account {account_id!r} not found")
        return record

    # -- reads ---------------------------------------------------------------------------------
    def user(request: Request) -> JSONResponse:  # GET /queue/user (spec)
        return JSONResponse(store.queue_account())

    def users(request: Request) -> JSONResponse:  # GET /qstash/users
        return JSONResponse([store.queue_account()])

    def user_by_id(request: Request) -> JSONResponse:  # GET /qstash/user/{id}
        return JSONResponse(account(request))

    def stats(request: Request) -> JSONResponse:  # GET /qstash/stats (svckit), /qstash/stats/{id}
        if "id" in request.path_params:
            account(request)
        try:
            return JSONResponse(queue_stats(store.query, request.query_params.get("period", DEFAULT_PERIOD), now_ms()))
        except ValueError as exc:  # names the periods
            raise ApiError(400, str(exc)) from None

    # -- changes -------------------------------------------------------------------------------
    def rotate(request: Request) -> JSONResponse:  # POST /queue/user/rotatetoken (spec), /qstash/rotate-token/{id}
        if "id" in request.path_params:
            account(request)
        return JSONResponse(store.rotate_queue_credentials())

    async def upgrade(request: Request) -> JSONResponse:  # POST /queue-upgrade (spec)
        body = await json_body(request)
        customer_id = required_string(body, "customer_id")
        plan_name = required_string(body, "plan_name")
        if plan_name not in UPGRADE_PLAN_NAMES:
            raise ApiError(400, f"plan_name: must be one of {', '.join(UPGRADE_PLAN_NAMES)}")
        if not await off_loop(store.upgrade_plan, customer_id, plan_name):
            raise ApiError(404, f"no queue account for customer {customer_id!r}")
        return JSONResponse("OK")

    async def set_plan(request: Request) -> JSONResponse:  # POST /qstash/set-plan/{id}: {"plan_name"}
        record = await off_loop(account, request)
        plan_name = required_string(await json_body(request), "plan_name")
        if plan_name not in SET_PLAN_NAMES:
            raise ApiError(400, f"plan_name: must be one of {', '.join(SET_PLAN_NAMES)}, got {plan_name!r}")
        if not await off_loop(store.upgrade_plan, record["customer_id"], SET_PLAN_NAMES[plan_name]):
            raise ApiError(404, f"queue account {record['id']!r} not found")
        return JSONResponse("OK")

    return [
        Route("/queue/user", user, methods=["GET"]),
        Route("/queue/user/rotatetoken", rotate, methods=["POST"]),
        Route("/queue-upgrade", upgrade, methods=["POST"]),
        Route("/qstash/stats", stats, methods=["GET"]),
        Route("/qstash/users", users, methods=["GET"]),
        Route("/qstash/user/{id}", user_by_id, methods=["GET"]),
        Route("/qstash/rotate-token/{id}", rotate, methods=["POST"]),
        Route("/qstash/set-plan/{id}", set_plan, methods=["POST"]),
        Route("/qstash/stats/{id}", stats, methods=["GET"]),
    ]
