"""A destination on loopback for the local QStash's tests: an HTTP server that records every request it
gets and answers each path as told (200 unless :meth:`Receiver.answer` said otherwise)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Delivery:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def text(self) -> str:
        return self.body.decode()


class Receiver:
    """``with Receiver() as r: r.url("/hook")``; ``r.deliveries`` in arrival order."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self._answers: dict[str, list[tuple[int, dict[str, str], bytes]]] = {}
        self._slow: dict[str, float] = {}
        self._gates: dict[str, threading.Event] = {}
        #: requests being answered now, and the most there were at once
        self.in_flight = self.most_in_flight = 0
        self._lock = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.in_flight += 1
                    receiver.most_in_flight = max(receiver.most_in_flight, receiver.in_flight)
                    receiver._lock.notify_all()
                try:
                    self._answer(body)
                finally:
                    with receiver._lock:
                        receiver.in_flight -= 1

            def _answer(self, body: bytes) -> None:
                gate = receiver._gates.get(self.path.partition("?")[0])
                if gate is not None:
                    gate.wait(30)
                with receiver._lock:
                    receiver.deliveries.append(Delivery(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                                        body, time.time()))
                    queued = receiver._answers.get(self.path.partition("?")[0])
                    status, headers, reply = queued.pop(0) if queued and len(queued) > 1 else (queued[0] if queued else (200, {}, b"ok"))
                    receiver._lock.notify_all()
                time.sleep(receiver._slow.get(self.path.partition("?")[0], 0.0))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def answer(self, path: str, *replies: int | tuple[int, dict[str, str], bytes]) -> None:
        """Answer ``path`` with these statuses in turn (the last one from then on)."""
        with self._lock:
            self._answers[path] = [r if isinstance(r, tuple) else (r, {}, b"answer %d" % r) for r in replies]

    def gate(self, path: str) -> threading.Event:
        """Requests to ``path`` wait, unanswered, until the returned event is set (at most 30 s)."""
        return self._gates.setdefault(path, threading.Event())

    def wait_in_flight(self, count: int, timeout: float = 10.0) -> None:
        """Until ``count`` requests are being answered at once."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self.in_flight < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{self.in_flight} of {count} requests in flight within {timeout} s"
                self._lock.wait(left)

    def slow(self, path: str, seconds: float) -> None:
        """Answer ``path`` after ``seconds`` (a destination that takes its time)."""
        self._slow[path] = seconds

    def at(self, path: str) -> list[Delivery]:
        with self._lock:
            return [d for d in self.deliveries if d.path.partition("?")[0] == path]

    def wait_for(self, path: str, count: int = 1, timeout: float = 10.0) -> list[Delivery]:
        """The first ``count`` deliveries to ``path``, once they came (AssertionError after ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(found := [d for d in self.deliveries if d.path.partition("?")[0] == path]) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(found)} of {count} deliveries to {path} within {timeout} s"
                self._lock.wait(left)
            return found[:count]
