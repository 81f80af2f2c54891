"""A fault-injecting HTTP server on loopback, for testing the client's retry and stream rules.

It speaks just enough HTTP/1.1 to answer httpx, and plays a script: each incoming request takes the
next fault from the queue (or ``ok`` when the queue is empty). Faults happen on a real socket, so the
client sees exactly what it would see from a broken network or server.
"""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
from collections import deque

OK_BODY = b'{"result":"OK"}'

#: fault name -> what the server does with the request
FAULTS = ("ok", "reset", "truncate", "slow", "500", "503", "sse", "sse-break", "sse-2", "sse-hold")


class FaultServer:
    def __init__(self, slow_seconds: float = 2.0) -> None:
        self.script: deque[str] = deque()
        self.requests: list[str] = []
        self.slow_seconds = slow_seconds
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    owner._handle(self.request)
                except (ConnectionResetError, BrokenPipeError):
                    pass  # the client left in the middle of an answer: some tests do just that

        class Server(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def play(self, *faults: str) -> None:
        for fault in faults:
            assert fault in FAULTS, fault
        self.script.extend(faults)

    # -- the server side ---------------------------------------------------------------------
    def _handle(self, sock: socket.socket) -> None:
        while True:
            head = _read_head(sock)
            if head is None:
                return
            self.requests.append(head.split(b"\r\n", 1)[0].decode())
            fault = self.script.popleft() if self.script else "ok"
            if not self._answer(sock, fault):
                return

    def _answer(self, sock: socket.socket, fault: str) -> bool:
        """Send the reply for ``fault``; False when the connection is gone afterwards."""
        if fault == "reset":
            # SO_LINGER 0 makes close() send RST instead of FIN: a "connection reset by peer".
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
            return False
        if fault == "truncate":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                         + OK_BODY[:7])
            sock.close()
            return False
        if fault == "slow":
            return client_stays(sock, self.slow_seconds) and _send(sock, 200, OK_BODY)
        if fault in ("500", "503"):
            return _send(sock, int(fault), b'{"error":"injected fault"}')
        if fault.startswith("sse"):
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")
            events = [b'data: "OK"\n\n', b"data: one\n\n", b"data: two\n\n"]
            for event in events:
                sock.sendall(b"%x\r\n%s\r\n" % (len(event), event))
            if fault == "sse-break":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
                return False
            if fault == "sse-hold":
                # keep the stream open without another event until the client goes away
                while True:
                    try:
                        if not sock.recv(65536):
                            return False
                    except OSError:
                        return False
            sock.sendall(b"0\r\n\r\n")
            return True
        return _send(sock, 200, OK_BODY)


def client_stays(sock: socket.socket, seconds: float) -> bool:
    """Hold the answer until the client gives up on it and hangs up (False), or ``seconds`` pass
    with the client still waiting (True): a slow server that notices a client leaving."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) != b""  # a byte of a new request would be a client that did not wait
    except TimeoutError:
        return True
    except OSError:  # reset by the client
        return False
    finally:
        sock.settimeout(None)


def _send(sock: socket.socket, status: int, body: bytes) -> bool:
    reason = {200: "OK", 500: "Internal Server Error", 503: "Service Unavailable"}[status]
    sock.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                 % (status, reason.encode(), len(body), body))
    return True


def _read_head(sock: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = sock.recv(65536)
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        rest += chunk
    return head
