"""The sandbox server: every area mounted under its prefix in one Starlette app on loopback.

:class:`Sandbox` runs that app with uvicorn in a background thread (for notebooks and tests) and is a
context manager; ``svckit sandbox`` (svckit/cli.py) runs the same thing in the foreground.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import importlib
import ipaddress
import logging
import re
import shutil
import socket
import ssl
import tempfile
import threading
import time
import weakref
from collections.abc import AsyncIterator, Coroutine, Sequence
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from svckit._files import private_dir
from svckit.config import Settings
from svckit.sandbox import health
from svckit.sandbox.area import Area, Credentials, SandboxContext
from svckit.sandbox.headers import VendorHeaders
from svckit.sandbox.hosts import AllowedHosts, served_names
from svckit.sandbox.http import error_body_with_status, error_handlers
from svckit.sandbox.limits import BodyLimit, protocol_factory
from svckit.sandbox.lock import DataDirLock
from svckit.sandbox.openapi import OPENAPI_PATH, openapi_endpoint
from svckit.sandbox.options import parse_options
from svckit.sandbox.private import refuse_unsafe, tighten
from svckit.sandbox.tls import server_context

log = logging.getLogger(__name__)

#: area name -> "module:Class"; areas are imported only when asked for.
AREAS: dict[str, str] = {
    "kv": "svckit.sandbox.kv:KVArea",
    "vector": "svckit.sandbox.vector:VectorArea",
    "account": "svckit.sandbox.devapi:DevApiArea",
    "queue": "svckit.sandbox.queue:QueueArea",
}
ALL_AREAS: tuple[str, ...] = tuple(AREAS)
LOOPBACK = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the sandbox on this machine: a loopback address, or a name
    whose every address is one ("localhost"). An empty host binds every interface."""
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False  # the bind will fail and say why; until then, assume the worst
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def exposure_warning(host: str) -> str | None:
    """What binding ``host`` exposes, as a warning to show before binding; None for loopback."""
    if is_loopback(host):
        return None
    return (f"WARNING: binding {host or 'every interface'!r} (not loopback) serves every area (key-value, "
            "vector, devapi, queue) to anyone who can reach this machine on that address, over plain HTTP: "
            "the bearer tokens, the devapi key and every stored value cross the network unencrypted. "
            f"Bind {LOOPBACK} (the default) unless that is what you want.")


def load_areas(ctx: SandboxContext, names: Sequence[str]) -> list[Area]:
    areas = []
    for name in names:
        if name not in AREAS:
            raise ValueError(f"areas: unknown area {name!r}; choose from {', '.join(AREAS)}")
        module, _, cls = AREAS[name].partition(":")
        areas.append(getattr(importlib.import_module(module), cls)(ctx))
    ctx.areas[:] = areas  # what the developer API lists (Area.resource_records)
    return areas


def build_app(areas: Sequence[Area], seed: str | None = None, hosts: frozenset[str] | None = None) -> Starlette:
    """The app of ``areas``, answering requests whose Host is one of ``hosts`` (hosts.py; by default
    the loopback names)."""
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        started: list[Area] = []
        try:
            for area in areas:
                try:
                    await area.start()
                except Exception as exc:  # uvicorn logs it and exits: keep it for Sandbox.start's error
                    app.state.startup_error = exc
                    raise
                started.append(area)
            if seed:
                for area in areas:
                    await area.seed(seed)
            yield
        finally:
            for area in reversed(started):
                await area.stop()

    # the OpenAPI document of every route and the areas' health (no auth), before the area mounts
    routes: list[BaseRoute] = [Route(OPENAPI_PATH, openapi_endpoint, methods=["GET"]), health.route(areas)]
    for area in areas:
        mount = Mount(area.prefix, app=BodyLimit(area.app(), area))
        # Key-value arguments travel as path segments and may hold a line feed once decoded; the
        # default pattern's "." stops there, so let it match any character.
        mount.path_regex = re.compile(mount.path_regex.pattern, re.DOTALL)
        routes.append(mount)
    prefixes = frozenset(area.prefix for area in areas)
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers=error_handlers(error_body_with_status),
                     middleware=[Middleware(AllowedHosts, names=hosts or served_names(LOOPBACK)),
                                 Middleware(VendorHeaders),
                                 Middleware(BarePrefix, prefixes=prefixes)])


def freeze_heap() -> None:
    """Move every object made so far out of the garbage collector's reach (``gc.freeze``), for a
    process that runs nothing but the sandbox.

    A full collection visits every object the collector tracks, and a sandbox with the embedding
    model loaded holds about half a million of them, made at start and kept until exit: under load,
    full collections took a quarter of the gateway's CPU (bench/RESULTS.md). Frozen objects are still
    freed when nothing refers to them; only a reference cycle among them is never collected. Not
    done when the sandbox runs in a thread of a notebook's kernel: the freeze would cover the
    notebook's own objects too.
    """
    gc.collect()
    gc.freeze()


async def _freeze_when_settled(areas: Sequence[Area]) -> None:
    """Freeze again once every area's start-up work (the model, the demo corpus) is done."""
    for area in areas:
        with contextlib.suppress(Exception):  # an area that failed to settle says so itself
            await area.settled()
    freeze_heap()


def event_loop() -> str:
    """uvicorn's event loop: uvloop, in C, where it imports, else asyncio (uvloop has no Windows
    build). The HTTP parser is always httptools, a core dependency (the async clients parse with it)."""
    try:
        importlib.import_module("uvloop")
    except ImportError:
        return "asyncio"
    return "uvloop"


def run_on_loop(main: Coroutine[Any, Any, None], config: uvicorn.Config) -> None:
    """Run ``main`` to completion on a new event loop of the kind ``config.loop`` names."""
    with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
        runner.run(main)


class _Server(uvicorn.Server):
    """uvicorn's server, telling the areas to end their event streams before it waits for open
    connections (otherwise a connected monitor stream holds shutdown up until the grace timeout)."""

    def __init__(self, config: uvicorn.Config, areas: Sequence[Area]) -> None:
        super().__init__(config)
        self.areas = areas

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for area in self.areas:
            await area.drain()
        await super().shutdown(sockets)


class BarePrefix:
    """Serve a request for an area's bare base URL (``POST /kv``) as ``/kv/`` instead of redirecting.

    Clients (the peer SDK among them) post single commands to the base URL exactly and do not follow
    a 307, which is what Starlette's router would answer.
    """

    def __init__(self, app: ASGIApp, prefixes: frozenset[str]) -> None:
        self.app = app
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in self.prefixes:
            scope = {**scope, "path": scope["path"] + "/",
                     "raw_path": scope.get("raw_path", scope["path"].encode()).rstrip(b"/") + b"/"}
        await self.app(scope, receive, send)


class Sandbox:
    """All four interfaces on loopback, in a background thread.

    >>> with Sandbox() as sb:                     # doctest: +SKIP
    ...     kv = sb.connect().kv
    ...     kv.set("greeting", "hello")

    ``data_dir=None`` uses a fresh temporary directory that is removed on stop; name a directory to
    keep state across restarts. Other keyword options go to the areas (``backend``, ``redis_url``,
    ``embedding_model``, ...) and set the request bounds (``header_timeout``, ``kv_max_request_size``,
    each area's body cap, ...): :class:`~svckit.sandbox.options.SandboxOptions` names and documents
    every one. They are parsed once, here: an unknown option or a bad value raises
    :class:`~svckit.sandbox.options.SandboxOptionError` naming it (and the close match for a typo).

    The data directory is kept private (0700, its files 0600); one that another user owns or may write
    is refused (svckit/sandbox/private.py), and so is one another live sandbox, or the Redis it
    started, holds (svckit/sandbox/lock.py). A ``host`` other than loopback is
    warned about on start: it serves every area and its tokens over plain HTTP to the network.
    A request whose Host header names another site is refused (DNS rebinding, svckit/sandbox/hosts.py);
    ``allowed_hosts=[...]`` adds names to loopback's and ``host``.

    ``tls=True`` serves https with a certificate signed by a local CA made at start
    (svckit/sandbox/tls.py): ``url`` is https://..., and ``env`` names the CA certificate the clients
    trust in SVC_CA_FILE.
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        port: int = 0,
        host: str = LOOPBACK,
        seed: str | None = None,
        areas: Sequence[str] = ALL_AREAS,
        tls: bool = False,
        **options: Any,
    ) -> None:
        self._tmp = None if data_dir is not None else tempfile.mkdtemp(prefix="svckit-sandbox-")
        if self._tmp is not None:  # removed on stop(), and at the latest when this object or the process goes
            weakref.finalize(self, shutil.rmtree, self._tmp, ignore_errors=True)
        self.data_dir = Path(data_dir if data_dir is not None else str(self._tmp)).resolve()
        self.host, self.port = host, port
        self.seed = seed
        self.area_names = tuple(areas)
        self.tls = tls
        self.ca_file: Path | None = None  # the CA certificate (PEM), once a tls sandbox started
        self._ssl: ssl.SSLContext | None = None
        self.options = parse_options(options)  # an unknown option or a bad value fails here, naming it
        self._protocol = protocol_factory(self.options)
        self._hosts = served_names(host, self.options.allowed_hosts)  # a bad name fails here
        self.areas: list[Area] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()  # set once serving and said so (start() returns then)
        self._lock: DataDirLock | None = None  # the data directory's, from start to stop (lock.py)

    # -- lifecycle ---------------------------------------------------------------------------
    def _prepare(self) -> tuple[Starlette, socket.socket]:
        """Before anything in the data directory is read: refuse one another user could have written
        (private.py), and hold it for this sandbox alone (lock.py)."""
        private_dir(self.data_dir)
        refuse_unsafe(self.data_dir)
        lock = self._lock = DataDirLock.acquire(self.data_dir)
        try:
            return self._open(lock.fd)
        except BaseException:
            self._unlock()
            raise

    def _unlock(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def _open(self, lock_fd: int | None) -> tuple[Starlette, socket.socket]:
        ctx = SandboxContext(self.data_dir, Credentials.load_or_create(self.data_dir), self.options,
                             lock_fd=lock_fd)
        self.context = ctx
        opened = tighten(self.data_dir)
        if opened:
            log.warning("data directory %s: removed group and other access from %d path(s); it is kept 0700, "
                        "its files 0600", self.data_dir, len(opened))
        warning = exposure_warning(self.host)
        if warning is not None:
            log.warning(warning)
        if self.tls:
            self._ssl, self.ca_file = server_context(self.data_dir, self.host)
        self.areas = load_areas(ctx, self.area_names)
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets whose proto says TCP (accepted
        # sockets inherit it); without it every reply waits ~40 ms for a delayed ACK (Nagle).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(2048)
        self.port = sock.getsockname()[1]
        return build_app(self.areas, self.seed, self._hosts), sock

    def _config(self, app: Starlette, owns_process: bool = False) -> uvicorn.Config:
        # proxy_headers=False: no proxy stands in front of a loopback sandbox, so uvicorn's
        # X-Forwarded-* middleware (one more layer and header scan per request) has nothing to do
        # http: uvicorn's httptools protocol with read timeouts and a head size cap (limits.py)
        # ssl: the context made in _prepare, whose key is not kept on disk (tls.py)
        # log_config: uvicorn configures Python's logging only in a process of its own; in a user's
        # process (a notebook kernel) its loggers just propagate, and only its warnings show
        tls = self._ssl
        ssl_factory = None if tls is None else lambda config, default: tls
        logging_config = uvicorn.config.LOGGING_CONFIG if owns_process else None
        protocol = self._protocol
        return uvicorn.Config(app, http=protocol, loop=event_loop(), log_level="warning",  # type: ignore[arg-type]
                              log_config=logging_config, access_log=False, lifespan="on", timeout_graceful_shutdown=3,
                              proxy_headers=False, ssl_context_factory=ssl_factory)

    async def _serve(self, server: _Server, sock: socket.socket, on_ready: Any = None,
                     owns_process: bool = False) -> None:
        """Serve on the running loop; say which parser and loop serve, once serving.
        ``owns_process``: nothing but the sandbox runs in this process (see :func:`freeze_heap`)."""
        self._loop = asyncio.get_running_loop()
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                await task
                return
            await asyncio.sleep(0.02)
        stack = self.server_stack
        hint = " (install uvloop for the C event loop)" if stack["loop"] != "uvloop" else ""
        log.info("http: uvicorn, %s parser on the %s event loop%s", stack["http"], stack["loop"], hint)
        self._ready.set()
        settling = None
        if owns_process:
            freeze_heap()
            settling = asyncio.create_task(_freeze_when_settled(self.areas))
        if on_ready is not None:
            on_ready(self)
        await task
        if settling is not None:
            settling.cancel()

    @property
    def server_stack(self) -> dict[str, str]:
        """What serves HTTP: ``{"http": "httptools", "loop": "uvloop" | "asyncio"}``; the loop is
        read off the running one."""
        loop = event_loop()
        if self._loop is not None:
            loop = "uvloop" if type(self._loop).__module__.startswith("uvloop") else "asyncio"
        return {"http": "httptools", "loop": loop}

    def start(self, timeout: float = 120.0) -> Sandbox:
        app, sock = self._prepare()
        config = self._config(app)
        self._server = server = _Server(config, self.areas)

        def run() -> None:
            try:
                run_on_loop(self._serve(server, sock), config)
            except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
                self._error = exc

        self._thread = threading.Thread(target=run, name="svckit-sandbox", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.02):
            if self._error is not None or not self._thread.is_alive():
                cause = getattr(app.state, "startup_error", None) or self._error
                self._unlock()
                raise RuntimeError(f"sandbox failed to start: {cause!r}") from cause
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"sandbox did not start within {timeout} s")
        return self

    def serve_forever(self, on_ready: Any = None) -> None:
        """Run in the foreground until SIGINT/SIGTERM (used by ``svckit sandbox``)."""
        app, sock = self._prepare()
        config = self._config(app, owns_process=True)
        self._server = server = _Server(config, self.areas)
        try:
            run_on_loop(self._serve(server, sock, on_ready, owns_process=True), config)
        finally:
            self._unlock()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        self._unlock()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what a user needs -------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """The SVC_* variables for this sandbox, in the documented order."""
        out: dict[str, str] = {"SVC_CA_FILE": str(self.ca_file)} if self.ca_file else {}
        for area in self.areas:
            out.update(area.env(self.url))
        from svckit.config import VARIABLES

        return {name: out[name] for name in VARIABLES if name in out}

    @property
    def settings(self) -> Settings:
        return Settings.from_env(self.env)

    def connect(self, **client_options: Any):  # -> svckit.Clients
        from svckit.connect import connect

        return connect(self.settings, **client_options)

    def holds(self, timeout: float = 10.0) -> dict[str, str]:
        """What each area holds now, by area name (``{"kv": "1,203 keys", ...}``), read on the
        sandbox's event loop; ``{}`` when it is not running in this process."""
        loop = self._loop
        if loop is None or self._thread is None:
            return {}

        async def read() -> list[str]:
            return [await area.holds() for area in self.areas]

        texts = asyncio.run_coroutine_threadsafe(read(), loop).result(timeout)
        return {name: text for name, text in zip(self.area_names, texts, strict=True) if text}

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Whether every area's start-up work (the embedding model, the demo corpus) is done, waiting
        up to ``timeout`` seconds for it (None: as long as it takes). The work goes on either way."""
        loop = self._loop
        if loop is None or self._thread is None:
            return True

        async def settle() -> None:
            for area in self.areas:  # shielded: giving up waiting must not cancel the work waited for
                await asyncio.shield(area.settled())

        try:
            asyncio.run_coroutine_threadsafe(settle(), loop).result(timeout)
        except concurrent.futures.TimeoutError:
            return False
        return True

    def area(self, name: str) -> Area:
        return self.areas[self.area_names.index(name)]

    def __repr__(self) -> str:
        return f"Sandbox({self.url!r}, data_dir={str(self.data_dir)!r}, areas={self.area_names})"
