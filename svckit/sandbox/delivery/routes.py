"""The local QStash's routes in the queue area (paths carry /v2, Bearer auth: :mod:`svckit.sandbox.queue`
mounts them): publishing, enqueueing, and reading and canceling messages.

- ``POST /v2/publish/{destination}``          a URL (its query string is the request's) or a URL group
- ``POST /v2/enqueue/{queue}/{destination}``  the same, delivered in the queue's order
- ``GET  /v2/messages/{messageId}``           a message not yet final (404 once it is: as the hosted service)
- ``DELETE /v2/messages/{messageId}``         cancel it: ``{"cancelled": 1}``; 404 unknown or already final
- ``DELETE /v2/messages``                     cancel many: ``{"messageIds": [...]}`` (Python SDK) or
  ``?messageIds=`` repeated (JS SDK), or the filters (``topicName``, ``queueName``, ``url``, ``label``,
  ``flowControlKey``, ``scheduleId``, ``callerIp``, ``fromDate``, ``toDate``), none: every waiting
  message (``count``, which the JS SDK sends, is ignored, as the hosted service does) -> ``{"cancelled": n}``
Plain messages of ``POST /v2/batch`` go through :meth:`MessageRoutes.batch_items`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit.sandbox.delivery.destination import DestinationError, from_path
from svckit.sandbox.delivery.engine import Deliveries
from svckit.sandbox.delivery.options import OptionError, read_options
from svckit.sandbox.delivery.publish import Publish, Publisher, check_name
from svckit.sandbox.delivery.records import WAITING, cancel_waiting, message_wire
from svckit.sandbox.http import ApiError, json_body, lower_headers, off_loop, path_tail
from svckit.sandbox.store import Store, now_ms
from svckit.sandbox.workflow.wire import workflow_of


def publish_of(tail: str, query: str, headers: Mapping[str, str], body: bytes, queue: str | None = None) -> Publish:
    try:
        return Publish(from_path(tail, query), read_options(headers), body, queue, workflow=workflow_of(headers))
    except (OptionError, DestinationError) as exc:
        raise ApiError(400, str(exc)) from None


class MessageRoutes:
    """The routes above, over one sandbox's store, publisher and delivery engine."""

    def __init__(self, store: Store, publisher: Publisher, engine: Deliveries) -> None:
        self.store, self.publisher, self.engine = store, publisher, engine

    def routes(self) -> list[Route]:
        return [
            Route("/v2/publish/{destination:path}", self.publish, methods=["POST"]),
            Route("/v2/enqueue/{queue}/{destination:path}", self.enqueue, methods=["POST"]),
            Route("/v2/messages/{messageId}", self.get, methods=["GET"]),
            Route("/v2/messages/{messageId}", self.cancel_one, methods=["DELETE"]),
            Route("/v2/messages", self.cancel_many, methods=["DELETE"]),
        ]

    async def _accept(self, request: Request, item: Publish) -> JSONResponse:
        caller = request.client.host if request.client else None
        [answer] = await off_loop(self.publisher.publish, [item], caller)
        duplicate = (answer[0] if isinstance(answer, list) else answer).get("deduplicated", False)
        return JSONResponse(answer, status_code=202 if duplicate else 200)

    async def publish(self, request: Request) -> JSONResponse:
        item = publish_of(path_tail(request, "/v2/publish/"), request.scope.get("query_string", b"").decode("latin-1"),
                          lower_headers(request), await request.body())
        return await self._accept(request, item)

    async def enqueue(self, request: Request) -> JSONResponse:
        queue = check_name("queue", request.path_params["queue"])
        tail = path_tail(request, f"/v2/enqueue/{queue}/")
        item = publish_of(tail, request.scope.get("query_string", b"").decode("latin-1"), lower_headers(request),
                          await request.body(), queue)
        return await self._accept(request, item)

    def batch_items(self, messages: list[dict[str, Any]], caller: str | None) -> list[Any]:
        """Plain messages of a batch (each ``{destination, headers, body, queue}``, headers made neutral);
        every one is accepted, or none."""
        items = []
        for message in messages:
            destination = message["destination"]
            tail, _, query = destination.partition("?") if destination.lower().startswith("http") else (destination, "", "")
            body = message.get("body")
            raw = b"" if body is None else body.encode() if isinstance(body, str) else json.dumps(body).encode()
            queue = message.get("queue")
            if queue is not None and not isinstance(queue, str):
                raise ApiError(400, "a message's queue must be a string (a queue's name)")
            items.append(publish_of(tail, query, message["headers"], raw, queue))
        return self.publisher.publish(items, caller)

    def get(self, request: Request) -> JSONResponse:
        message_id = request.path_params["messageId"]
        rows = self.store.query(f"SELECT * FROM messages WHERE message_id = ? AND state IN ({','.join('?' * len(WAITING))})",
                                (message_id, *WAITING))
        if not rows:
            raise ApiError(404, f"no message {message_id!r} waiting for delivery (a delivered, failed or canceled "
                                "message is in the events log: GET /v2/events?messageId=...)")
        return JSONResponse(message_wire(rows[0]))

    def _cancel(self, where: str, args: list[Any]) -> int:
        with self.store.transaction() as db:
            canceled = cancel_waiting(db, where, args, now_ms())
        self.engine.forget(canceled)
        return len(canceled)

    async def cancel_one(self, request: Request) -> JSONResponse:
        message_id = request.path_params["messageId"]
        if not await off_loop(self._cancel, "message_id = ?", [message_id]):
            raise ApiError(404, f"no message {message_id!r} waiting for delivery to cancel")
        return JSONResponse({"cancelled": 1})

    async def cancel_many(self, request: Request) -> JSONResponse:
        params = request.query_params
        ids = (await json_body(request, optional=True)).get("messageIds")
        if ids is None:
            ids = params.getlist("messageIds")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ApiError(400, "messageIds: must be an array of message ids")
        clauses, args = [], []
        if ids:
            clauses.append(f"message_id IN ({','.join('?' * len(ids))})")
            args += ids
        for param, column in (("topicName", "topic_name"), ("queueName", "queue_name"), ("url", "url"),
                              ("flowControlKey", "flow_control_key"), ("scheduleId", "schedule_id"),
                              ("callerIp", "caller_ip"), ("label", "label")):
            given = params.getlist(param)
            if given:
                clauses.append(f"{column} IN ({','.join('?' * len(given))})")
                args += given
        for param, op in (("fromDate", ">="), ("toDate", "<=")):
            if param in params:
                try:
                    args.append(int(params[param]))
                except ValueError:
                    raise ApiError(400, f"{param}: must be Unix milliseconds, got {params[param]!r}") from None
                clauses.append(f"created_at {op} ?")
        cancelled = await off_loop(self._cancel, " AND ".join(clauses), args)
        return JSONResponse({"cancelled": cancelled})
