"""The SQLite store of the account (C) and queue (D) areas: ``state.sqlite3`` in the data directory.

One connection in WAL mode, guarded by one lock, so request handlers (in Starlette's thread pool) and
workflow worker threads can share it safely. Every write is its own short transaction, committed
before the call returns: a step output is on disk as soon as the step finished, so a killed sandbox
loses nothing that completed.

Both areas use the same instance: :meth:`Store.acquire` builds it on first use and keeps it in
``ctx.shared["store"]``; :meth:`Store.release` closes it after the last user.

The file holds the queue token and signing password, so it is created 0600 before SQLite opens it
(its WAL and shared-memory files take the same mode; see :mod:`svckit.sandbox.private`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from svckit._disk import writing
from svckit._files import create_private_file
from svckit.sandbox.area import Health, SandboxContext, new_token
from svckit.sandbox.delivery.signing import new_signing_key
from svckit.sandbox.plans import PLAN_PRESETS
from svckit.sandbox.schema import migrate

#: search indexes every data directory starts with, so rename has targets.
SEED_INDEXES = (("idx_products", "products"), ("idx_support_articles", "support-articles"))


def _url_part(url: str | None, part: str) -> str | None:
    try:
        return None if url is None else getattr(urlsplit(url), part)
    except ValueError:  # not a URL (an unbalanced "[" ...): it has no host or path to match
        return None


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def new_queue_credentials() -> dict[str, str]:
    return {"token": new_token(32), "password": "sig_" + new_token(18)}


class Store:
    """Thread-safe access to ``state.sqlite3`` (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._users = 0
        self._depth = 0
        #: called with the new record after each change of the queue account (the delivery engine's limits)
        self.account_listeners: list[Callable[[dict[str, Any]], None]] = []
        with self._lock, writing(self.path):  # a read-only or full data directory says so at start
            create_private_file(self.path)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            # the workflow SDK's ``host`` and ``path`` filters
            self._db.create_function("url_host", 1, lambda url: _url_part(url, "hostname"), deterministic=True)
            self._db.create_function("url_path", 1, lambda url: _url_part(url, "path"), deterministic=True)
            migrate(self._db)

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def acquire(cls, ctx: SandboxContext) -> Store:
        """The store of this sandbox, created by its first user."""
        store = ctx.shared.get("store")
        if store is None:
            store = ctx.shared.setdefault("store", cls(ctx.data_dir / "state.sqlite3"))
        store._users += 1
        return store

    def release(self) -> None:
        self._users -= 1
        if self._users <= 0:
            self.close()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None  # type: ignore[assignment]

    @property
    def closed(self) -> bool:
        return self._db is None

    async def health(self) -> Health:
        """Check "sqlite": the store is open and its directory takes writes now, with the free space there."""
        if self.closed:
            return Health("sqlite", False, f"{self.path}: closed (the sandbox is stopping)")
        return await Health.of_disk("sqlite", self.path)

    # -- primitives --------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the writer lock (BEGIN IMMEDIATE ... COMMIT). Re-entrant: a
        transaction opened inside another (same thread, the lock is an RLock) joins the outer one.
        A failed one, its COMMIT too, is rolled back; one the disk refused raises DiskError (a full
        or read-only file system: :mod:`svckit._disk`), and the next goes through once it takes writes."""
        with self._lock:
            if self._db is None:
                raise StoreClosed("the sandbox store is closed")
            if self._depth:
                self._depth += 1
                try:
                    yield self._db
                finally:
                    self._depth -= 1
                return
            self._depth = 1
            try:
                with writing(self.path):
                    self._db.execute("BEGIN IMMEDIATE")
                    try:
                        yield self._db
                        self._db.execute("COMMIT")
                    except BaseException:
                        self._rollback()
                        raise
            finally:
                self._depth = 0

    def _rollback(self) -> None:
        """Undo the open transaction, so the connection takes the next write. SQLite may have rolled
        back already (a full disk at COMMIT does): a ROLLBACK then would raise and hide the error."""
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            if self._db is None:
                raise StoreClosed("the sandbox store is closed")
            return self._db.execute(sql, params).fetchall()

    def get_meta(self, key: str) -> str | None:
        rows = self.query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0]["value"] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # -- queue account (table D1) ------------------------------------------------------------
    def ensure_queue_account(self, customer_id: str) -> dict[str, Any]:
        """The queue account record, created on the free plan the first time a data dir is used."""
        with self.transaction() as db:
            row = db.execute("SELECT record FROM queue_account").fetchone()
            if row is not None:
                return json.loads(row["record"])
            now = int(time.time())
            record: dict[str, Any] = {
                "customer_id": customer_id,
                "id": str(uuid.uuid4()),
                **new_queue_credentials(),
                "active": True,
                "state": "active",
                "last_plan_upgrade_time": now,
                **PLAN_PRESETS["free"],
                "created_by": customer_id,
                "creation_time": now,
            }
            db.execute("INSERT INTO queue_account (id, record) VALUES (?, ?)", (record["id"], json.dumps(record)))
            return record

    def queue_account(self) -> dict[str, Any]:
        rows = self.query("SELECT record FROM queue_account")
        if not rows:
            raise LookupError("no queue account in this data directory")
        return json.loads(rows[0]["record"])

    def queue_token(self) -> str:
        return self.queue_account()["token"]

    def update_queue_account(self, **changes: Any) -> dict[str, Any]:
        with self.transaction() as db:
            row = db.execute("SELECT id, record FROM queue_account").fetchone()
            if row is None:
                raise LookupError("no queue account in this data directory")
            record = {**json.loads(row["record"]), **changes}
            db.execute("UPDATE queue_account SET record = ? WHERE id = ?", (json.dumps(record), row["id"]))
        for listener in list(self.account_listeners):
            listener(record)
        return record

    def rotate_queue_credentials(self) -> dict[str, Any]:
        """New token and password in one write: the old ones are invalid from the next request on."""
        return self.update_queue_account(**new_queue_credentials())

    def upgrade_plan(self, customer_id: str, plan_name: str) -> bool:
        """Apply the presets of ``plan_name`` if ``customer_id`` owns the account; False if not."""
        with self.transaction():  # the check and the write are one transaction (the lock is re-entrant)
            if self.queue_account()["customer_id"] != customer_id:
                return False
            self.update_queue_account(**PLAN_PRESETS[plan_name], last_plan_upgrade_time=int(time.time()))
            return True

    # -- signing keys (area D's deliveries) -------------------------------------------------------
    def signing_keys(self) -> tuple[str, str]:
        """The current and next signing keys of this data directory, made the first time."""
        with self.transaction():
            current, upcoming = self.get_meta("signing_key_current"), self.get_meta("signing_key_next")
            if current is None or upcoming is None:
                current, upcoming = new_signing_key(), new_signing_key()
                self.set_meta("signing_key_current", current)
                self.set_meta("signing_key_next", upcoming)
            return current, upcoming

    def rotate_signing_keys(self) -> tuple[str, str]:
        """The next key becomes the current one, and a new next key is made."""
        with self.transaction():
            _, upcoming = self.signing_keys()
            fresh = new_signing_key()
            self.set_meta("signing_key_current", upcoming)
            self.set_meta("signing_key_next", fresh)
            return upcoming, fresh

    # -- the developer API's resource ids (area C) ------------------------------------------
    def resource_identity(self, kind: str, name: str) -> dict[str, Any]:
        """``{"id": uuid4, "creation_time": Unix seconds}`` of the resource ``name`` of ``kind``
        ("redis", "vector"), made the first time it is asked for and kept in the meta table, so the
        same after a restart on this data directory."""
        key = f"resource/{kind}/{name}"
        known = self.get_meta(key)  # a read, without the writer's lock, once it is made
        if known is not None:
            return json.loads(known)
        with self.transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            if row is not None:
                return json.loads(row["value"])
            identity = {"id": str(uuid.uuid4()), "creation_time": int(time.time())}
            db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(identity)))
            return identity

    # -- search indexes (area C) -------------------------------------------------------------
    def search_index_records(self) -> list[dict[str, Any]]:
        """Each search index's id, name and creation time (Unix seconds), by id."""
        return [{"id": r["id"], "name": r["name"], "creation_time": r["created_at"] // 1000}
                for r in self.query("SELECT id, name, created_at FROM search_indexes ORDER BY id")]

    def ensure_search_indexes(self) -> None:
        with self.transaction() as db:
            for index_id, name in SEED_INDEXES:
                db.execute("INSERT OR IGNORE INTO search_indexes (id, name, created_at) VALUES (?, ?, ?)",
                           (index_id, name, now_ms()))

    def search_indexes(self) -> dict[str, str]:
        return {r["id"]: r["name"] for r in self.query("SELECT id, name FROM search_indexes ORDER BY id")}

    def rename_search_index(self, index_id: str, name: str) -> bool:
        with self.transaction() as db:
            return db.execute("UPDATE search_indexes SET name = ? WHERE id = ?", (name, index_id)).rowcount == 1


class StoreClosed(RuntimeError):
    """The sandbox stopped; a worker thread that outlived it must not write any more."""
