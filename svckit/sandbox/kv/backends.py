"""Which Redis serves the key-value area, and how the gateway reaches it.

``auto`` picks, in order: an external Redis (``redis_url``), a ``redis-server`` found on PATH started
as a child process in the data directory, and only where neither exists fakeredis in-process.

The child runs with ``appendonly yes`` and ``appendfsync everysec``: every write reaches the AOF file
within a second even if the machine crashes, and a clean stop (SIGTERM -> Redis's own shutdown) fsyncs
everything, so a sandbox restarted on the same data directory finds all its data. ``always`` would
make each write wait for a disk flush, which is the wrong trade for a local sandbox whose speed is
measured. The child is killed if the sandbox process dies without stopping it (PR_SET_PDEATHSIG on
Linux, plus a watchdog that follows the parent pid elsewhere), with SIGKILL: a SIGTERM waits while a
Lua script runs, so a busy child outlived a killed sandbox, and a sandbox started again on the same
data directory would have started a second Redis on the same socket and files. SIGKILL loses nothing
acknowledged: Redis writes the AOF file before it sends the replies of each turn of its event loop,
and the kernel keeps what was written when the process dies (the one exception is everysec's own: a
write held back while a slow fsync runs, at most 2 s, is lost as in a crash of Redis itself). The
child also holds the data directory's lock (:mod:`svckit.sandbox.lock`, inherited), so a Redis that
outlives its sandbox all the same keeps a new start on that directory out, which then says which
process holds it.

The child is supervised (:meth:`RedisChild.supervise`): when it exits while the sandbox serves (the
OOM killer, a stray signal), it is started again on the same data directory, at once the first time and
after a growing pause (up to ``RESTART_MAX_DELAY``) when it keeps dying. Meanwhile the gateway answers
503 with ``Retry-After`` (:meth:`Backend.outage`), and once the child answers again every pool drops its
old connections. It replays its AOF, so what it lost is at most the last second of writes. An external
Redis is not the sandbox's to restart: its requests get the same 503 while it is away, and redis-py's
pools reconnect on their own when it is back.

The child answers only the gateway (docs/security.md): it listens on a Unix socket (mode 0700) and on no
TCP port, unless the data directory's path is too long for a socket path, when it listens on a
loopback port instead; either way every client must authenticate as one of the users of
:mod:`.users` (the ``default`` user is off). It runs with a umask of 077, so every file it writes (AOF,
RDB, the ACL file after ``ACL SAVE``, its log) is 0600 and its directory 0700.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from redis.asyncio.connection import BlockingConnectionPool, ConnectionPool
from redis.exceptions import BusyLoadingError, RedisError

from svckit._files import private_dir
from svckit.sandbox.kv.resp import MAX_CONNECTIONS, POOL_WAIT, tcp_pool
from svckit.sandbox.kv.users import ADMIN_USER, GATEWAY_USER, READER_USER, load_passwords, write_acl_file
from svckit.sandbox.options import SandboxOptions
from svckit.sandbox.seams import fake_socket, status_keeping_fake_connection

log = logging.getLogger(__name__)

APPENDFSYNC = "everysec"
UNIX_PATH_MAX = 104  # sun_path: 108 bytes on Linux, 104 on macOS
#: how often the supervisor looks at the child, and the pause before a restart: none the first time,
#: then doubling from RESTART_FIRST_DELAY up to RESTART_MAX_DELAY while the child keeps dying within
#: STABLE_AFTER seconds of its start
SUPERVISE_EVERY = 0.05
#: seconds a child told SHUTDOWN NOSAVE (a script it cannot stop) has to exit before it is killed
SHUTDOWN_WAIT = 5.0
RESTART_FIRST_DELAY = 0.25
RESTART_MAX_DELAY = 5.0
STABLE_AFTER = 30.0


class Backend:
    """A running Redis and a way to open connection pools on it (as the gateway or an ACL user)."""

    name = ""
    #: a redis-py URL of the backing Redis, with the gateway's credentials where it needs them, for
    #: tools that talk to it directly (the bench, tests); None for fakeredis. Never log or show it.
    redis_url: str | None = None
    #: True when the sandbox owns the server's users (a redis-server child), so it may restrict them.
    owns_users = False
    #: where the server keeps its data, when it is the sandbox's own
    dir: Path | None = None
    #: how often the sandbox started its server again after it died
    restarts = 0

    def pool(self, username: str | None = None, password: str | None = None) -> ConnectionPool:
        """Connections as ``username`` (an ACL user's REST token), or as the gateway's own user."""
        raise NotImplementedError

    def admin_pool(self) -> ConnectionPool:
        """Connections for the gateway's management work (see :mod:`.users`)."""
        return self.pool()

    def reader_pool(self) -> ConnectionPool | None:
        """Connections for the Read Only token's commands as a Redis user that may only read, where
        the sandbox owns the server's users (see :mod:`.users`); None elsewhere: the gateway's own
        connections serve them."""
        return None

    def describe(self) -> str:
        raise NotImplementedError

    def outage(self, exc: BaseException) -> tuple[str, int]:
        """Why the backing Redis cannot be reached now, and the seconds to wait before trying again:
        the gateway's 503 and its Retry-After."""
        if isinstance(exc, BusyLoadingError):
            return "the backing Redis has just started and is loading its data into memory; retry in 1 s", 1
        return f"the backing Redis is unreachable ({exc})", 1

    def serving(self) -> bool:
        """False only while a server of this backend's own is known to be away (a child that died and
        is being restarted); an external one is assumed to serve until a request finds otherwise."""
        return True

    async def serving_again(self, within: float) -> bool:
        """Wait up to ``within`` seconds for a server of this backend's own that died to serve again;
        whether it does. An external one is not the sandbox's to wait for: False at once."""
        return False

    def closer(self, conn: Any) -> Callable[[], None]:
        """What must run, beyond ``disconnect()``, to drop a subscribed connection's server state."""
        return lambda: None

    async def start(self) -> None:
        """Start the server if this backend owns one."""

    async def supervise(self, on_restart: Callable[[], Awaitable[None]]) -> None:
        """Keep the server running while the sandbox serves, if this backend owns one."""

    async def end_without_saving(self, run: Callable[[list[list[bytes]]], Awaitable[Any]]) -> bool:
        """End a server of this backend's own that runs a script Redis cannot stop (UNKILLABLE), without
        saving, for the supervisor to start again; ``run`` sends commands on the admin connection.
        False when the server is not the sandbox's to end (an external one)."""
        return False

    async def stop(self) -> None:
        """Stop the server if this backend owns one."""


class ExternalRedis(Backend):
    name = "external"

    def __init__(self, url: str) -> None:
        self.redis_url = url

    def pool(self, username: str | None = None, password: str | None = None) -> ConnectionPool:
        extra: dict[str, Any] = {}
        if username is not None:
            extra = {"username": username, "password": password}
        return tcp_pool(self.redis_url or "", **extra)

    def describe(self) -> str:
        return f"external Redis at {self._host()}"

    def _host(self) -> str:
        """Where the Redis is, without the URL's credentials (never shown)."""
        parts = urlsplit(self.redis_url or "")
        if parts.scheme == "unix":
            return parts.path
        return f"{parts.hostname}:{parts.port or 6379}"

    def outage(self, exc: BaseException) -> tuple[str, int]:
        if isinstance(exc, BusyLoadingError):
            return super().outage(exc)
        why = f"the external Redis at {self._host()} is unreachable ({exc}); the gateway reconnects when it is back"
        return why, 1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _load_prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


#: resolved in the parent, so the forked child only makes one foreign call (no imports, no locks).
_PRCTL = _load_prctl() if sys.platform == "linux" else None
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """preexec_fn: ask Linux to SIGKILL the child when the thread that started it goes away (a SIGTERM
    would wait for a running script to end, which may be never)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


def restart_delay(quick_deaths: int) -> float:
    """The pause before starting a dead child again, after ``quick_deaths`` deaths in a row that each
    came within STABLE_AFTER seconds of a start: none for a child that had run well, then doubling."""
    if quick_deaths == 0:
        return 0.0
    return min(RESTART_MAX_DELAY, RESTART_FIRST_DELAY * 2 ** min(quick_deaths - 1, 8))


def _exit_status(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"status {code}"


def _major(version: str) -> int:
    head = version.partition(".")[0]
    return int(head) if head.isdigit() else 0


def redis_server_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10,
                         check=False).stdout
    for part in out.split():
        if part.startswith("v="):
            return part[2:]
    return "unknown"


class RedisChild(Backend):
    """``redis-server`` started by the sandbox, its data in ``data_dir/redis``."""

    name = "redis-server"

    owns_users = True
    dir: Path  # the child's own: always there

    def __init__(self, binary: str, data_dir: Path, lock_fd: int | None = None) -> None:
        self.binary = binary
        self.dir = data_dir / "redis"
        self.lock_fd = lock_fd  # the data directory's lock, which the child holds too (svckit/sandbox/lock.py)
        self.port = 0
        self.socket: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._args: list[str] = []
        self.started_at = 0.0  # time.monotonic() of the current child's start
        self.down_since: float | None = None  # while the child is being restarted: when it died
        self.restart_at = 0.0  # ... and when the next start is due
        self.restarts = 0  # how often the supervisor started it again
        self.version = redis_server_version(binary)
        self._passwords = load_passwords(data_dir)

    def pool(self, username: str | None = None, password: str | None = None) -> ConnectionPool:
        if username is None:
            username, password = GATEWAY_USER, self._passwords[GATEWAY_USER]
        return tcp_pool(self._address(), username=username, password=password)  # unix://: its Unix socket

    def admin_pool(self) -> ConnectionPool:
        return self.pool(ADMIN_USER, self._passwords[ADMIN_USER])

    def reader_pool(self) -> ConnectionPool:
        return self.pool(READER_USER, self._passwords[READER_USER])

    def _address(self, credentials: str = "") -> str:
        """A redis-py URL of the server, with ``user:password@`` when given: its Unix socket when it has
        one (a loopback TCP send costs the gateway several times the CPU of a Unix-socket send), else
        its loopback port."""
        if self.socket is not None:
            return f"unix://{credentials}{quote(str(self.socket))}?db=0"
        return f"redis://{credentials}127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        # created 0700; what an older version left readable to others the sandbox tightens at start
        private_dir(self.dir)
        acl_file = self.dir / "users.acl"
        write_acl_file(acl_file, self._passwords)  # ACL SAVE keeps ACL users across restarts there
        sock = self.dir / "redis.sock"
        # a Unix socket path is limited to about 100 bytes: a deep data directory listens on loopback TCP
        self.socket = sock if len(str(sock).encode()) < UNIX_PATH_MAX else None
        self.port = 0 if self.socket is not None else _free_port()
        self._args = [
            self.binary, "--port", str(self.port), "--dir", str(self.dir),
            "--appendonly", "yes", "--appendfsync", APPENDFSYNC, "--daemonize", "no",
            "--logfile", str(self.dir / "redis.log"), "--save", "3600 1 300 100 60 10000",
            "--protected-mode", "yes", "--aclfile", str(acl_file),
        ]
        if _major(self.version) >= 7:
            # SIGTERM (a stop, or the sandbox's death) ends it even when its last save fails: on a full
            # disk Redis would otherwise refuse to exit, and outlive a sandbox that died
            self._args += ["--shutdown-on-sigterm", "force"]
        if self.socket is not None:
            self._args += ["--unixsocket", str(sock), "--unixsocketperm", "700"]
        else:
            self._args += ["--bind", "127.0.0.1"]
        url = self._address(f"{GATEWAY_USER}:{self._passwords[GATEWAY_USER]}@")
        self.redis_url = url
        await self._spawn()

    async def _spawn(self) -> None:
        """Start redis-server on the data directory and wait until it answers (its AOF replayed).

        Started from the event-loop thread, which lives as long as the sandbox serves: the death
        signal fires when that thread ends, i.e. when the sandbox is gone. Popen is quick (no wait);
        the preexec_fn only calls the prctl resolved above. A process group of its own: a Ctrl-C in
        the terminal (SIGINT to the foreground group) stops the sandbox, which then stops its child,
        instead of killing the child first (which the supervisor would then restart, and say so)."""
        self.proc = subprocess.Popen(  # noqa: ASYNC220
            self._args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            umask=0o077, process_group=0, pass_fds=() if self.lock_fd is None else (self.lock_fd,),
            preexec_fn=_die_with_parent if _PRCTL is not None else None)  # noqa: PLW1509
        self.started_at = time.monotonic()
        if _PRCTL is None:
            self._start_watchdog()
        await self._wait_ready()

    async def supervise(self, on_restart: Callable[[], Awaitable[None]]) -> None:
        """Run while the sandbox serves: start the child again whenever it exits, then ``on_restart()``
        (the area drops its pools' old connections). Ends when :meth:`stop` takes the child away."""
        quick_deaths = 0
        while (proc := self.proc) is not None:
            await asyncio.sleep(SUPERVISE_EVERY)
            if proc is not self.proc or proc.poll() is None:
                continue
            quick_deaths = quick_deaths + 1 if time.monotonic() - self.started_at < STABLE_AFTER else 0
            self.down_since = time.monotonic()
            while self.proc is proc:
                delay = restart_delay(quick_deaths)
                self.restart_at = time.monotonic() + delay
                log.warning("redis-server child pid %s exited (%s); restarting it on %s in %.2f s",
                            proc.pid, _exit_status(proc.returncode), self.dir, delay)
                await asyncio.sleep(delay)
                if self.proc is not proc:  # stopped meanwhile
                    return
                try:
                    await self._spawn()
                except RuntimeError as exc:  # it exited again, or never answered
                    log.warning("redis-server did not come back: %s", exc)
                    if self.proc is not None and self.proc.poll() is None:
                        self.proc.kill()
                    proc, quick_deaths = self.proc or proc, quick_deaths + 1
            self.restarts += 1
            log.warning("redis-server restarted (pid %s) after %.2f s; restart %d", self.pid,
                        time.monotonic() - self.down_since, self.restarts)
            # still "restarting" until the pools have dropped their connections to the dead child and
            # the new one is prepared: a request that meets a stale connection meanwhile is told so
            try:
                await on_restart()
            except (RedisError, OSError) as exc:  # it died again at once: the next turn of the loop sees it
                log.warning("redis-server restarted but could not be prepared: %s", exc)
            finally:
                self.down_since = None

    async def end_without_saving(self, run: Callable[[list[list[bytes]]], Awaitable[Any]]) -> bool:
        """SHUTDOWN NOSAVE (the one command Redis takes while a script it cannot kill runs), SIGKILL
        when the child has not gone within SHUTDOWN_WAIT. Either leaves the AOF as it was before the
        script: its writes reach the file only when it ends."""
        proc = self.proc
        if proc is None:
            return False
        try:
            await run([[b"SHUTDOWN", b"NOSAVE"]])
        except (RedisError, OSError, TimeoutError):
            pass  # the connection closes as Redis exits: no reply is the answer
        await _exit_within(proc, SHUTDOWN_WAIT)
        return True

    def serving(self) -> bool:
        return self.down_since is None and self.proc is not None and self.proc.poll() is None

    async def serving_again(self, within: float) -> bool:
        if self.proc is None:  # stopped
            return False
        deadline = time.monotonic() + within
        while not self.serving():
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(SUPERVISE_EVERY)
        return True

    def outage(self, exc: BaseException) -> tuple[str, int]:
        if isinstance(exc, BusyLoadingError) or self.proc is None or self.serving():
            return super().outage(exc)  # started again and loading its data; or stopped, or running yet not reached
        # dead, and the supervisor restarting it (or about to: it looks every SUPERVISE_EVERY seconds)
        wait = max(1, math.ceil(self.restart_at - time.monotonic())) if self.down_since is not None else 1
        why = ("the backing Redis is restarting: redis-server exited and the sandbox is starting it again "
               f"on its data directory; retry in {wait} s")
        return why, wait

    def _start_watchdog(self) -> None:
        """Outside Linux: a tiny process that kills the child (SIGKILL, as PDEATHSIG does on Linux) when
        this process disappears."""
        assert self.proc is not None
        code = ("import os,sys,time,signal\nparent,child=int(sys.argv[1]),int(sys.argv[2])\n"
                "while True:\n    time.sleep(1)\n    try: os.kill(parent,0)\n"
                "    except OSError:\n        os.kill(child,signal.SIGKILL); break\n"
                "    try: os.kill(child,0)\n    except OSError: break\n")
        subprocess.Popen([sys.executable, "-c", code, str(os.getpid()), str(self.proc.pid)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def _wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with status {self.proc.returncode}; "
                                   f"see {self.dir / 'redis.log'}")
            try:
                if self.socket is not None:
                    reader, writer = await asyncio.open_unix_connection(str(self.socket))
                else:
                    reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                password = self._passwords[GATEWAY_USER].encode()
                writer.write(b"*3\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n*1\r\n$4\r\nPING\r\n"
                             % (len(GATEWAY_USER), GATEWAY_USER.encode(), len(password), password))
                await writer.drain()
                auth, ping = await reader.readline(), await reader.readline()
                writer.close()
                if auth.startswith(b"-WRONGPASS"):
                    raise RuntimeError(f"redis-server refused the sandbox's own credentials; see {self.dir}/users.acl")
                if ping.startswith(b"+PONG"):
                    return
                # -LOADING while the AOF is replayed: keep waiting
            except OSError:
                pass
            await asyncio.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer within {timeout:.0f} s; see {self.dir / 'redis.log'}")

    async def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()  # Redis shuts down cleanly on SIGTERM: flushes the AOF
        await _exit_within(proc, 15)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def describe(self) -> str:
        where = "its Unix socket" if self.socket else "a loopback TCP port (the data directory's path is too long for a socket)"
        return (f"redis-server {self.version} child pid {self.pid} on {where}, password required, "
                f"appendonly yes (appendfsync {APPENDFSYNC}), data in {self.dir}")


async def _exit_within(proc: subprocess.Popen[bytes], seconds: float) -> None:
    """Wait for ``proc`` to exit, SIGKILLed after ``seconds``. Polled, not waited for in an executor:
    at interpreter exit (a notebook kernel stopping its sandbox from atexit) the executors are already
    shut and refuse new work."""
    deadline = time.monotonic() + seconds
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(5)
            return
        await asyncio.sleep(0.02)


class _FreshConnectionPool(BlockingConnectionPool):
    """Connections used once: each request authenticates anew. fakeredis, unlike Redis, keeps a
    connection authenticated after ``ACL DELUSER`` or a password change, so an ACL user's REST token
    would outlive its user if connections were reused."""

    async def release(self, connection: Any) -> None:
        sock = fake_socket(connection)
        await connection.disconnect()
        if sock is not None:
            sock.close()
        await super().release(connection)


class FakeRedisBackend(Backend):
    """fakeredis in-process: the fallback when no Redis is available. State lives in memory only."""

    name = "fakeredis"

    def __init__(self) -> None:
        import fakeredis

        self.server = fakeredis.FakeServer(server_type="redis")

    def pool(self, username: str | None = None, password: str | None = None) -> ConnectionPool:
        common: dict[str, Any] = {"connection_class": status_keeping_fake_connection(), "server": self.server,
                                  "protocol": 2, "decode_responses": False, "max_connections": MAX_CONNECTIONS,
                                  "timeout": POOL_WAIT}
        if username is not None:
            return _FreshConnectionPool(username=username, password=password, **common)
        return BlockingConnectionPool(**common)

    def closer(self, conn: Any) -> Callable[[], None]:
        # fakeredis forgets a connection's subscriptions only when its fake socket is closed, which
        # disconnect() does not do; grab the socket now, since a cancelled read drops the reference.
        sock = fake_socket(conn)
        return sock.close if sock is not None else (lambda: None)

    def describe(self) -> str:
        import fakeredis

        return f"fakeredis {fakeredis.__version__} in-process (data kept in memory only)"


def choose_backend(options: SandboxOptions, data_dir: Path, lock_fd: int | None = None) -> Backend:
    """The backend ``options`` ask for; a redis-server child started in ``data_dir`` holds ``lock_fd``,
    the data directory's lock, too."""
    choice, url = options.backend, options.redis_url
    if options.redis_cluster and not url:
        raise ValueError("redis_cluster needs redis_url, the address of any node of the cluster "
                         "(--redis-cluster --redis-url redis://127.0.0.1:7000)")
    if choice == "external" or (choice == "auto" and url):
        if not url:
            raise ValueError("backend 'external' needs redis_url (--redis-url redis://127.0.0.1:6379)")
        from svckit.sandbox.kv.cluster import RedisClusterBackend, is_cluster

        if options.redis_cluster or is_cluster(url):
            return RedisClusterBackend(url)
        return ExternalRedis(url)
    if choice in ("auto", "redis"):
        binary = options.redis_server or shutil.which("redis-server")
        if binary:
            return RedisChild(binary, data_dir, lock_fd)
        if choice == "redis":
            raise ValueError("backend 'redis': no redis-server on PATH; install it or use backend='fakeredis'")
    return FakeRedisBackend()
