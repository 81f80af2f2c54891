"""What every interface area of the sandbox provides, and the context it is built from."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp

from svckit._disk import probe, writing
from svckit._files import read_private, write_private
from svckit.sandbox.http import error_body, off_loop
from svckit.sandbox.options import SandboxOptions

#: the request body cap of an area that names none (413 beyond it, see svckit/sandbox/limits.py)
DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024


def new_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


@dataclass
class Credentials:
    """Random secrets of one data directory, kept in ``credentials.json`` (mode 0600).

    The queue token and password are not here: they belong to the queue account record, which the
    account area keeps in SQLite (rotating it must be atomic with the rest of the record).
    """

    kv_token: str = field(default_factory=new_token)
    kv_readonly_token: str = field(default_factory=new_token)
    vector_token: str = field(default_factory=new_token)
    devapi_email: str = "sandbox@svckit.local"
    devapi_key: str = field(default_factory=new_token)
    _path: Path | None = field(default=None, repr=False, compare=False)

    @classmethod
    def load_or_create(cls, data_dir: Path) -> Credentials:
        path = data_dir / "credentials.json"
        text = read_private(path)  # not a symbolic link, the user's own alone: nobody planted these tokens
        if text is not None:
            known = {k: v for k, v in json.loads(text).items()
                     if k in cls.__dataclass_fields__ and not k.startswith("_")}
            creds = cls(**known)
        else:
            creds = cls()
        creds._path = path
        creds.save()
        return creds

    def save(self) -> None:
        path = self._path
        if path is None:
            return
        with writing(path):  # a read-only or full data directory says so at start, naming the file
            write_private(path, json.dumps({k: v for k, v in asdict(self).items() if not k.startswith("_")}))

    def __repr__(self) -> str:
        return "Credentials(***)"


@dataclass
class SandboxContext:
    """Everything an area needs to build itself."""

    data_dir: Path
    credentials: Credentials
    #: the Sandbox(...) options, parsed once (svckit/sandbox/options.py); left out of the repr
    options: SandboxOptions = field(default_factory=SandboxOptions, repr=False)
    #: resources that several areas use (the SQLite store of accounts and runs), built by the first
    #: area that needs them: ``ctx.shared.setdefault("store", ...)``.
    shared: dict[str, Any] = field(default_factory=dict)
    #: the open lock on the data directory (svckit/sandbox/lock.py): a process the sandbox starts there
    #: (its redis-server) inherits it, so the directory stays held while that process lives
    lock_fd: int | None = None
    #: every area of this sandbox, in the order loaded (filled by ``server.load_areas``): the developer
    #: API lists what the others hold through their :meth:`Area.resource_records`
    areas: list[Area] = field(default_factory=list, repr=False)


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


class DailyCounts:
    """Counts by key for the current UTC day, from zero at midnight UTC (in memory: a restart starts
    the day's count again). Cheap enough for every request: a lock and a dict. The key-value gateway's
    daily request limit and the vector area's query and update counts are kept in one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._day = utc_today()
        self._counts: Counter[str] = Counter()

    def _roll(self) -> None:
        today = utc_today()
        if today != self._day:
            self._day, self._counts = today, Counter()

    def add(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._roll()
            self._counts[key] += n

    def take(self, key: str, n: int, limit: int) -> bool:
        """Count ``n`` for ``key`` if today's count stays within ``limit``; False (nothing counted) if not."""
        with self._lock:
            self._roll()
            if self._counts[key] + n > limit:
                return False
            self._counts[key] += n
            return True

    def today(self, key: str) -> int:
        with self._lock:
            self._roll()
            return self._counts[key]


@dataclass(frozen=True)
class Health:
    """One check of an area's health, as ``GET /health`` and ``svckit doctor --sandbox URL`` show it:
    ``check`` names what was checked ("redis", "sqlite", "index"), ``detail`` says what was found
    in a few words for a person (a path, a pid, the error; never a token or password)."""

    check: str
    ok: bool
    detail: str

    @classmethod
    async def of_disk(cls, check: str, path: Path) -> Health:
        """Check ``check``: whether writes to ``path`` go through now, with the free space there, or
        why not (:func:`svckit._disk.probe`, run in a thread: the event loop never waits for the disk)."""
        ok, detail = await off_loop(probe, path)
        return cls(check, ok, f"{path}: {detail}")


class Area:
    """One interface area served under ``prefix``. Subclasses fill in the hooks they need."""

    prefix: str = ""

    def __init__(self, ctx: SandboxContext) -> None:
        self.ctx = ctx

    @property
    def max_body_bytes(self) -> int:
        """The largest request body this area reads: a larger one is answered 413 before it is read
        (svckit/sandbox/limits.py). Read on every request, so an area may derive it from live state;
        each area's comes from its option (``vector_max_body_bytes``, ``devapi_max_body_bytes``, ...)."""
        return DEFAULT_MAX_BODY_BYTES

    def body_too_large(self, limit: int) -> str:
        """The error message of a body over ``limit`` bytes."""
        return (f"request body too large: this interface reads at most {limit} bytes per request; "
                "send less per request (split a batch into several)")

    def error_body(self, message: str, status: int) -> dict[str, Any]:
        """This area's error body: ``{"error": message}``; the vector area's carries ``status`` too
        (svckit/sandbox/http.py; every error of the area's app is answered in it)."""
        return error_body(message, status)

    def app(self) -> ASGIApp:
        raise NotImplementedError

    def env(self, base_url: str) -> dict[str, str]:
        """SVC_* variables this area contributes, given the sandbox's base URL."""
        return {}

    async def start(self) -> None:
        """Called once the event loop runs, before the first request."""

    #: the developer API's kind of what this area holds ("redis", "vector"); "" for nothing it lists
    resource_kind: str = ""

    def resource_records(self, origin: str) -> dict[str, dict[str, Any]]:
        """What this area holds, as the developer API lists it: resource name -> its fields (its
        ``endpoint``, a whole URL on ``origin``, the scheme and host the request came to; its tokens;
        each limit the area enforces, -1 where none). The developer API adds the id, creation time,
        region, plan and owner. Quick: called on the event loop."""
        return {}

    async def resource_stats(self, name: str) -> dict[str, Any]:
        """The usage of resource ``name`` now, as the developer API's stats read it (today's counts
        by UTC day); work that touches the disk or the backend is done off the event loop."""
        return {}

    async def holds(self) -> str:
        """What this area holds now, in a few words for a person ("1,203 keys"); read on the
        event loop while serving (the notebook's status line, :meth:`Sandbox.holds`)."""
        return ""

    async def drain(self) -> None:
        """Called when shutdown begins, before open connections are awaited: end long-lived
        responses (event streams) so that they close instead of holding the shutdown up."""

    async def stop(self) -> None:
        """Called on shutdown, after the connections closed; stop children, flush state."""

    async def health(self) -> list[Health]:
        """What this area depends on, checked now (Redis reachable, the index ready, SQLite
        writable): read on the event loop by ``GET /health``, so each check is quick and never
        blocks the loop (a file probe runs in a thread)."""
        return []

    async def seed(self, name: str) -> None:
        """Load a named data set (``demo``) into this area."""

    async def settled(self) -> None:
        """Wait until the work this area began in the background at start or seed (loading a model,
        embedding a data set) is done."""
