"""An ASGI app of the user's own (a FastAPI app with the vendor's ``serve()`` workflows, say) served
on a free loopback port from a background thread, so a notebook or a test can run the app the local
QStash delivers to, in the same process::

    with AppServer(app) as server:
        qstash.message.publish_json(url=f"{server.url}/workflow", body={...})

uvicorn, on its public ``Server.run(sockets=...)``; the socket is bound before the thread starts, so
:attr:`url` is right at once and no other process can take the port meanwhile. Only 127.0.0.1.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Self

import uvicorn


class AppServer:
    """``app`` served on ``127.0.0.1`` (``port`` 0: a free one) from a daemon thread."""

    def __init__(self, app: Any, port: int = 0, *, timeout: float = 30.0) -> None:
        self.app, self.timeout = app, timeout
        self._socket = socket.create_server(("127.0.0.1", port))
        self.port: int = self._socket.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._server = server
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]},
                                        name=f"svckit-app-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self.timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the app did not start serving on {self.url} within {self.timeout:g} s")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(self.timeout)
            self._thread = None
        self._socket.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"AppServer({self.url}, {'serving' if self._thread else 'stopped'})"
