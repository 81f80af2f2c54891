"""What the local QStash keeps besides messages: queues, URL groups (``/v2/topics``: the SDKs' and the
API's name for them) and the signing keys. Routes (queue area, /v2, Bearer auth):

- ``POST /v2/queues`` ``{queueName, parallelism?, paused?}`` upsert; ``GET /v2/queues``,
  ``GET|DELETE /v2/queues/{name}``, ``POST /v2/queues/{name}/pause|resume``. A queue is
  ``{name, parallelism, createdAt, updatedAt, lag, paused}``; ``lag`` is how many of its messages wait.
  Deleting a queue cancels the messages that wait in it.
- ``POST|DELETE /v2/topics/{name}/endpoints`` ``{endpoints: [{url, name?}]}``: add (a new group, a new
  URL, a new name for a URL) or remove (by url or name; the last one gone, the group is gone);
  ``GET /v2/topics``, ``GET|DELETE /v2/topics/{name}``: ``{name, createdAt, updatedAt, endpoints}``.
- ``GET /v2/keys`` ``{current, next}``; ``POST /v2/keys/rotate``: the next key becomes current.

Limits (412, :mod:`.quota`): ``max_queues``, a queue's ``parallelism`` up to ``max_parallelism``,
``max_topics``, ``max_endpoints_per_topic``. Endpoint URLs follow the loopback rule (400).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit.sandbox.delivery.engine import Deliveries
from svckit.sandbox.delivery.publish import Publisher, check_name
from svckit.sandbox.delivery.quota import UPGRADE, check_room
from svckit.sandbox.delivery.records import WAITING, cancel_waiting
from svckit.sandbox.http import ApiError, json_body, off_loop
from svckit.sandbox.store import Store, now_ms


def _queue_wire(row: Any, lag: int) -> dict[str, Any]:
    return {"name": row["name"], "parallelism": row["parallelism"], "createdAt": row["created_at"],
            "updatedAt": row["updated_at"], "lag": lag, "paused": bool(row["paused"])}


class Resources:
    """The routes above over one sandbox's store, publisher (its loopback rule) and delivery engine."""

    def __init__(self, store: Store, publisher: Publisher, engine: Deliveries) -> None:
        self.store, self.publisher, self.engine = store, publisher, engine

    def routes(self) -> list[Route]:
        return [
            Route("/v2/queues", self.upsert_queue, methods=["POST"]),
            Route("/v2/queues", self.list_queues, methods=["GET"]),
            Route("/v2/queues/{name}", self.get_queue, methods=["GET"]),
            Route("/v2/queues/{name}", self.delete_queue, methods=["DELETE"]),
            Route("/v2/queues/{name}/pause", self.pause_queue(True), methods=["POST"]),
            Route("/v2/queues/{name}/resume", self.pause_queue(False), methods=["POST"]),
            Route("/v2/topics", self.list_topics, methods=["GET"]),
            Route("/v2/topics/{name}", self.get_topic, methods=["GET"]),
            Route("/v2/topics/{name}", self.delete_topic, methods=["DELETE"]),
            Route("/v2/topics/{name}/endpoints", self.add_endpoints, methods=["POST"]),
            Route("/v2/topics/{name}/endpoints", self.remove_endpoints, methods=["DELETE"]),
            Route("/v2/keys", self.keys, methods=["GET"]),
            Route("/v2/keys/rotate", self.rotate_keys, methods=["POST"]),
        ]

    # -- queues ---------------------------------------------------------------------------------
    def _queues(self, name: str | None = None) -> list[dict[str, Any]]:
        where, args = ("WHERE q.name = ?", (name,)) if name is not None else ("", ())
        rows = self.store.query(
            f"SELECT q.*, (SELECT COUNT(*) FROM messages m WHERE m.queue_name = q.name AND m.state IN "
            f"({','.join('?' * len(WAITING))})) AS lag FROM queues q {where} ORDER BY q.created_at, q.name",
            (*WAITING, *args))
        return [_queue_wire(r, r["lag"]) for r in rows]

    async def upsert_queue(self, request: Request) -> JSONResponse:
        body = await json_body(request, optional=True)
        name = body.get("queueName")
        if not isinstance(name, str):
            raise ApiError(400, "queueName: give the queue's name")
        check_name("queue", name)
        parallelism, paused = body.get("parallelism", 1), body.get("paused", False)
        if isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism < 1:
            raise ApiError(400, f"parallelism: must be a whole number of at least 1, got {parallelism!r}")
        if not isinstance(paused, bool):
            raise ApiError(400, f"paused: must be true or false, got {paused!r}")

        def upsert() -> None:
            account = self.store.queue_account()
            if parallelism > int(account["max_parallelism"]):
                raise ApiError(412, f"parallelism {parallelism} is over the queue account's max_parallelism of "
                                    f"{account['max_parallelism']}; ask for less, or {UPGRADE}")
            now = now_ms()
            with self.store.transaction() as db:
                check_room(db, "queues", "queues", "max_queues", account, {"name": name})
                db.execute("INSERT INTO queues (name, parallelism, paused, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
                           "ON CONFLICT (name) DO UPDATE SET parallelism = excluded.parallelism, "
                           "paused = excluded.paused, updated_at = excluded.updated_at",
                           (name, parallelism, int(paused), now, now))

        await off_loop(upsert)
        self.engine.queue_changed(name, parallelism, paused)
        return JSONResponse("OK")

    def list_queues(self, request: Request) -> JSONResponse:
        return JSONResponse(self._queues())

    def get_queue(self, request: Request) -> JSONResponse:
        found = self._queues(request.path_params["name"])
        if not found:
            raise ApiError(404, f"no queue {request.path_params['name']!r}")
        return JSONResponse(found[0])

    def pause_queue(self, paused: bool) -> Any:
        def handler(request: Request) -> JSONResponse:
            name = request.path_params["name"]
            with self.store.transaction() as db:
                row = db.execute("SELECT parallelism FROM queues WHERE name = ?", (name,)).fetchone()
                if row is None:
                    raise ApiError(404, f"no queue {name!r}")
                db.execute("UPDATE queues SET paused = ?, updated_at = ? WHERE name = ?", (int(paused), now_ms(), name))
            self.engine.queue_changed(name, row["parallelism"], paused)
            return JSONResponse("OK")
        return handler

    def delete_queue(self, request: Request) -> JSONResponse:
        name = request.path_params["name"]
        with self.store.transaction() as db:
            if db.execute("DELETE FROM queues WHERE name = ?", (name,)).rowcount == 0:
                raise ApiError(404, f"no queue {name!r}")
            canceled = cancel_waiting(db, "queue_name = ?", [name], now_ms())
        self.engine.forget(canceled)
        self.engine.queue_changed(name, None)
        return JSONResponse("OK")

    # -- URL groups -----------------------------------------------------------------------------
    def _topics(self, name: str | None = None) -> list[dict[str, Any]]:
        where, args = ("WHERE name = ?", (name,)) if name is not None else ("", ())
        topics = self.store.query(f"SELECT * FROM topics {where} ORDER BY created_at, name", args)
        endpoints: dict[str, list[dict[str, str]]] = {t["name"]: [] for t in topics}
        for row in self.store.query("SELECT * FROM topic_endpoints ORDER BY rowid"):
            if row["topic"] in endpoints:
                endpoints[row["topic"]].append({"url": row["url"], **({"name": row["name"]} if row["name"] else {})})
        return [{"name": t["name"], "createdAt": t["created_at"], "updatedAt": t["updated_at"],
                 "endpoints": endpoints[t["name"]]} for t in topics]

    def list_topics(self, request: Request) -> JSONResponse:
        return JSONResponse(self._topics())

    def get_topic(self, request: Request) -> JSONResponse:
        found = self._topics(request.path_params["name"])
        if not found:
            raise ApiError(404, f"no URL group {request.path_params['name']!r}")
        return JSONResponse(found[0])

    def delete_topic(self, request: Request) -> JSONResponse:
        with self.store.transaction() as db:
            if db.execute("DELETE FROM topics WHERE name = ?", (request.path_params["name"],)).rowcount == 0:
                raise ApiError(404, f"no URL group {request.path_params['name']!r}")
        return JSONResponse("OK")

    @staticmethod
    def _endpoints(body: dict[str, Any], *, removing: bool) -> list[dict[str, str | None]]:
        given = body.get("endpoints")
        if not isinstance(given, list) or not given:
            raise ApiError(400, "endpoints: give a non-empty array of {url, name}")
        out = []
        for endpoint in given:
            if not isinstance(endpoint, dict):
                raise ApiError(400, "endpoints: each one is an object {url, name}")
            url, name = endpoint.get("url"), endpoint.get("name")
            if (url is not None and not isinstance(url, str)) or (name is not None and not isinstance(name, str)):
                raise ApiError(400, "endpoints: url and name are strings")
            if (removing and url is None and name is None) or (not removing and not url):
                raise ApiError(400, f"endpoints: each one needs {'a url or a name' if removing else 'a url'}")
            out.append({"url": url, "name": name or None})
        return out

    async def add_endpoints(self, request: Request) -> JSONResponse:
        topic = check_name("URL group", request.path_params["name"])
        endpoints = self._endpoints(await json_body(request, optional=True), removing=False)
        for endpoint in endpoints:
            self.publisher.check_url(endpoint["url"], "endpoint")  # type: ignore[arg-type]

        def add() -> None:
            account = self.store.queue_account()
            now = now_ms()
            with self.store.transaction() as db:
                if check_room(db, "URL groups", "topics", "max_topics", account, {"name": topic}):
                    db.execute("INSERT INTO topics (name, created_at, updated_at) VALUES (?, ?, ?)", (topic, now, now))
                for endpoint in endpoints:
                    check_room(db, f"endpoints in URL group {topic!r}", "topic_endpoints", "max_endpoints_per_topic",
                               account, {"topic": topic, "url": endpoint["url"]}, within={"topic": topic})
                    db.execute("INSERT INTO topic_endpoints (topic, url, name) VALUES (?, ?, ?) ON CONFLICT (topic, url) "
                               "DO UPDATE SET name = excluded.name", (topic, endpoint["url"], endpoint["name"]))
                db.execute("UPDATE topics SET updated_at = ? WHERE name = ?", (now, topic))

        await off_loop(add)
        return JSONResponse("OK")

    async def remove_endpoints(self, request: Request) -> JSONResponse:
        topic = request.path_params["name"]
        endpoints = self._endpoints(await json_body(request, optional=True), removing=True)
        with self.store.transaction() as db:
            if not db.execute("SELECT 1 FROM topics WHERE name = ?", (topic,)).fetchone():
                raise ApiError(404, f"no URL group {topic!r}")
            for endpoint in endpoints:
                column, value = ("url", endpoint["url"]) if endpoint["url"] else ("name", endpoint["name"])
                db.execute(f"DELETE FROM topic_endpoints WHERE topic = ? AND {column} = ?", (topic, value))
            if not db.execute("SELECT 1 FROM topic_endpoints WHERE topic = ?", (topic,)).fetchone():
                db.execute("DELETE FROM topics WHERE name = ?", (topic,))
            else:
                db.execute("UPDATE topics SET updated_at = ? WHERE name = ?", (now_ms(), topic))
        return JSONResponse("OK")

    # -- signing keys ---------------------------------------------------------------------------
    def keys(self, request: Request) -> JSONResponse:
        current, upcoming = self.store.signing_keys()
        return JSONResponse({"current": current, "next": upcoming})

    def rotate_keys(self, request: Request) -> JSONResponse:
        current, upcoming = self.store.rotate_signing_keys()
        return JSONResponse({"current": current, "next": upcoming})
