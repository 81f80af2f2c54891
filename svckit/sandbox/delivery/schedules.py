"""Schedules: a message published on a cron (``/v2/schedules``), and the ticker that publishes it on time.

- ``POST /v2/schedules/{destination}`` with ``Upstash-Cron`` (and the options of a publish, but not
  Not-Before or deduplication; ``Upstash-Queue-Name`` to enqueue each firing; ``Upstash-Schedule-Id``
  to replace a schedule in place) -> ``{"scheduleId"}``. Checked as a publish is (its options, the
  account's limits, the loopback rule), and against ``max_schedules`` (412).
- ``GET /v2/schedules``, ``GET|DELETE /v2/schedules/{id}``, ``PATCH`` (the SDKs) or ``POST`` (the
  docs) ``/v2/schedules/{id}/pause|resume``.

The ticker runs on the sandbox's event loop: each schedule's next time is kept in the store
(``next_at``); a firing publishes its message, then moves ``next_at`` on. After a restart a schedule
fires at its next time from then: a time missed while the sandbox was down is not made up (nor is a
firing doubled by a crash just after it published). A firing that is refused (the day's
limit) is recorded in the schedule's ``error`` and the next time is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import json
import logging
import time
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit.sandbox.delivery.cron import CronError, parse_cron
from svckit.sandbox.delivery.destination import DestinationError, from_path
from svckit.sandbox.delivery.options import PREFIX, OptionError, read_options
from svckit.sandbox.delivery.publish import Publish, Publisher, check_name
from svckit.sandbox.delivery.quota import check_message, check_room, retries_of
from svckit.sandbox.delivery.records import body_wire, header_map
from svckit.sandbox.http import ApiError, lower_headers, off_loop, path_tail
from svckit.sandbox.store import Store, StoreClosed, now_ms

log = logging.getLogger(__name__)

#: a schedule's states of the messages of its last firing, as the SDKs read them
_LAST_STATES = {"CREATED": "IN_PROGRESS", "ACTIVE": "IN_PROGRESS", "RETRY": "IN_PROGRESS",
                "DELIVERED": "SUCCESS", "FAILED": "FAIL", "CANCELED": "FAIL"}


def _publish_of(row: Any) -> Publish:
    headers = json.loads(row["headers"])
    tail, _, query = row["destination"].partition("?")
    return Publish(from_path(tail, query), read_options(headers), row["body"], headers.get(PREFIX + "queue-name"),
                   row["schedule_id"])


class Schedules:
    """The schedule routes and the ticker of one sandbox (module docstring)."""

    def __init__(self, store: Store, publisher: Publisher) -> None:
        self.store, self.publisher = store, publisher
        self._heap: list[tuple[int, str]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def routes(self) -> list[Route]:
        return [
            Route("/v2/schedules", self.list, methods=["GET"]),
            Route("/v2/schedules/{scheduleId}/pause", self.pause(True), methods=["PATCH", "POST"]),
            Route("/v2/schedules/{scheduleId}/resume", self.pause(False), methods=["PATCH", "POST"]),
            Route("/v2/schedules/{scheduleId}", self.get, methods=["GET"]),
            Route("/v2/schedules/{scheduleId}", self.delete, methods=["DELETE"]),
            Route("/v2/schedules/{destination:path}", self.create, methods=["POST"]),
        ]

    # -- the ticker (on the event loop) -----------------------------------------------------------
    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        now = time.time()
        rows = await off_loop(self.store.query, "SELECT schedule_id, cron FROM schedules WHERE paused = 0")
        for row in rows:
            next_at = int(parse_cron(row["cron"]).next_after(now) * 1000)
            await off_loop(self._set_next, row["schedule_id"], next_at)
            heapq.heappush(self._heap, (next_at, row["schedule_id"]))
        self._task = asyncio.create_task(self._run(), name="svckit-schedules")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _set_next(self, schedule_id: str, next_at: int) -> None:
        with self.store.transaction() as db:
            db.execute("UPDATE schedules SET next_at = ? WHERE schedule_id = ?", (next_at, schedule_id))

    def _arm(self, schedule_id: str, next_at: int) -> None:
        heapq.heappush(self._heap, (next_at, schedule_id))
        self._wake.set()

    def _armed(self, schedule_id: str, next_at: int | None) -> None:
        """From any thread: a schedule was made, changed or resumed (``next_at``), or paused or deleted."""
        if self._loop is not None and next_at is not None:
            self._loop.call_soon_threadsafe(self._arm, schedule_id, next_at)

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            now = now_ms()
            while self._heap and self._heap[0][0] <= now:
                due, schedule_id = heapq.heappop(self._heap)
                try:
                    following = await off_loop(self._fire, schedule_id, due)
                except StoreClosed:
                    return
                except Exception:  # a schedule's fault must not stop the others
                    log.exception("schedule %s could not fire", schedule_id)
                    following = None
                if following is not None:
                    heapq.heappush(self._heap, (following, schedule_id))
            wait = max(0.0, (self._heap[0][0] - now_ms()) / 1000) if self._heap else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    def _fire(self, schedule_id: str, due: int) -> int | None:
        """Publish the schedule's message if it is still due at ``due``; its next time (None: no more)."""
        rows = self.store.query("SELECT * FROM schedules WHERE schedule_id = ?", (schedule_id,))
        if not rows or rows[0]["paused"] or rows[0]["next_at"] != due:
            return None  # deleted, paused, or changed since (its new time is in the heap too)
        row = rows[0]
        following = int(parse_cron(row["cron"]).next_after(max(time.time(), due / 1000)) * 1000)
        error = None
        try:  # a crash between the publish and the next time is no double firing: a start recomputes it
            self.publisher.publish([_publish_of(row)], row["caller_ip"])
        except ApiError as exc:
            error = exc.message
        with self.store.transaction() as db:
            db.execute("UPDATE schedules SET last_at = ?, next_at = ?, error = ? WHERE schedule_id = ?",
                       (due, following, error, schedule_id))
        return following

    # -- routes ---------------------------------------------------------------------------------
    async def create(self, request: Request) -> JSONResponse:
        tail = path_tail(request, "/v2/schedules/")
        query = request.scope.get("query_string", b"").decode("latin-1")
        headers = lower_headers(request)
        body = await request.body()
        cron_text = headers.get(PREFIX + "cron")
        if not cron_text:
            raise ApiError(400, "Upstash-Cron: give the schedule's cron expression, e.g. '*/5 * * * *'")
        try:
            cron = parse_cron(cron_text)
            destination = from_path(tail, query)
            options = read_options(headers)
        except (CronError, DestinationError, OptionError) as exc:
            raise ApiError(400, str(exc)) from None
        queue = headers.get(PREFIX + "queue-name")
        if queue is not None:
            check_name("queue", queue)
        schedule_id = headers.get(PREFIX + "schedule-id") or f"scd_{uuid.uuid4().hex[:24]}"
        check_name("schedule id", schedule_id)
        self.publisher.check_urls(destination, options)
        caller = request.client.host if request.client else None
        kept = {k: v for k, v in headers.items() if k.startswith(PREFIX) or k == "content-type"}
        destination_text = destination.url or destination.group

        def save() -> int:
            account = self.store.queue_account()
            check_message(options, len(body), account)
            now = now_ms()
            next_at = int(cron.next_after(now / 1000) * 1000)
            with self.store.transaction() as db:
                check_room(db, "schedules", "schedules", "max_schedules", account, {"schedule_id": schedule_id})
                db.execute("INSERT INTO schedules (schedule_id, destination, cron, headers, body, created_at, paused, "
                           "caller_ip, next_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (schedule_id) DO UPDATE "
                           "SET destination = excluded.destination, cron = excluded.cron, headers = excluded.headers, "
                           "body = excluded.body, paused = 0, caller_ip = excluded.caller_ip, next_at = excluded.next_at",
                           (schedule_id, destination_text, cron.expression, json.dumps(kept), body, now, caller, next_at))
            return next_at

        self._armed(schedule_id, await off_loop(save))
        return JSONResponse({"scheduleId": schedule_id})

    def _wire(self, row: Any) -> dict[str, Any]:
        headers = json.loads(row["headers"])
        options = read_options(headers)
        account = self.store.queue_account()
        last = {}
        if row["last_at"] is not None:
            last = {r["message_id"]: _LAST_STATES[r["state"]] for r in self.store.query(
                "SELECT message_id, state FROM messages WHERE schedule_id = ? AND created_at >= ? AND kind = 'message'",
                (row["schedule_id"], row["last_at"]))}
        flow = options.flow_control
        wire = {
            "scheduleId": row["schedule_id"], "cron": row["cron"], "createdAt": row["created_at"],
            "destination": row["destination"], "method": options.method, "header": header_map(list(options.forward)),
            **body_wire(row["body"]), "retries": retries_of(options, account), "delay": int(options.delay) or None,
            "callback": options.callback.url, "failureCallback": options.failure_callback.url,
            "callerIP": row["caller_ip"], "callerIp": row["caller_ip"], "isPaused": bool(row["paused"]),
            "queueName": headers.get(PREFIX + "queue-name"), "retryDelayExpression": options.retry_delay,
            "label": options.label, "labels": list(options.labels) or None,
            "lastScheduleTime": row["last_at"], "nextScheduleTime": None if row["paused"] else row["next_at"],
            "lastScheduleStates": last or None, "error": row["error"],
            "flowControlKey": flow.key if flow else None, "parallelism": flow.parallelism if flow else None,
            "rate": flow.rate if flow else None,
        }
        return {k: v for k, v in wire.items() if v is not None}

    def list(self, request: Request) -> JSONResponse:
        return JSONResponse([self._wire(r) for r in self.store.query("SELECT * FROM schedules ORDER BY created_at")])

    def _one(self, schedule_id: str) -> Any:
        rows = self.store.query("SELECT * FROM schedules WHERE schedule_id = ?", (schedule_id,))
        if not rows:
            raise ApiError(404, f"no schedule {schedule_id!r}")
        return rows[0]

    def get(self, request: Request) -> JSONResponse:
        return JSONResponse(self._wire(self._one(request.path_params["scheduleId"])))

    def delete(self, request: Request) -> JSONResponse:
        with self.store.transaction() as db:
            if db.execute("DELETE FROM schedules WHERE schedule_id = ?", (request.path_params["scheduleId"],)).rowcount == 0:
                raise ApiError(404, f"no schedule {request.path_params['scheduleId']!r}")
        return JSONResponse("OK")

    def pause(self, paused: bool) -> Any:
        def handler(request: Request) -> JSONResponse:
            row = self._one(request.path_params["scheduleId"])
            next_at = None if paused else int(parse_cron(row["cron"]).next_after(time.time()) * 1000)
            with self.store.transaction() as db:
                db.execute("UPDATE schedules SET paused = ?, next_at = ? WHERE schedule_id = ?",
                           (int(paused), next_at, row["schedule_id"]))
            self._armed(row["schedule_id"], next_at)
            return JSONResponse("OK")
        return handler
