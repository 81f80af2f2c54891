"""Persistence of a local index: one SQLite file per index directory.

Each upsert and delete is one transaction, so a crash or restart keeps every acknowledged vector, and
a write the disk refused (full, read-only) leaves nothing of itself: it raises
:class:`~svckit.errors.DiskError` naming the file, and the next write goes through once the disk takes
it again (:mod:`svckit._disk`).
Dense vectors are stored as float32 blobs (nothing is re-embedded on restart). Sparse vectors made
from text are not stored, because re-tokenising the raw text at load is cheap and their weights depend
on the namespace's current average length anyway; sparse vectors the client gave are stored as JSON
``[indices, values]``. ``given`` marks rows whose vectors came from the client rather than the model.

The ``namespaces`` table names every namespace, so one that a reset or deletes emptied is still there
after a restart; only :meth:`IndexStore.drop_namespace` removes a name. A file written before the table
existed gets it filled from the namespaces of its vectors when opened.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from svckit._disk import writing
from svckit._files import create_private_file, private_dir

SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
    namespace TEXT NOT NULL,
    id        TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    data      TEXT,
    metadata  TEXT,
    vector    BLOB,
    sparse    TEXT,
    given     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, id)
);
CREATE TABLE IF NOT EXISTS namespaces (name TEXT PRIMARY KEY);
"""
#: columns added after the first release: (name, declaration), added to older files when opened
ADDED_COLUMNS = (("sparse", "TEXT"), ("given", "INTEGER NOT NULL DEFAULT 0"))

#: one stored row: (namespace, id, data, metadata, dense vector, sparse vector, given)
Row = tuple[str, str, "str | None", Any, "np.ndarray | None", "tuple[list[int], list[float]] | None", bool]


class IndexStore:
    """The SQLite file ``<directory>/index.sqlite3`` of one index."""

    def __init__(self, directory: str | Path) -> None:
        # the vectors, their text and metadata are the user's data: private, like the sandbox's data
        # directory (created 0600 before SQLite opens it; its WAL and shared-memory files copy the mode)
        self.directory = Path(directory)
        self.path = self.directory / "index.sqlite3"
        with writing(self.path):  # a read-only or full directory says so when the index opens
            private_dir(self.directory)
            create_private_file(self.path)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            have = {row[1] for row in self._db.execute("PRAGMA table_info(vectors)")}
            for name, declaration in ADDED_COLUMNS:
                if name not in have:
                    self._db.execute(f"ALTER TABLE vectors ADD COLUMN {name} {declaration}")
            # a file from before the namespaces table: its namespaces are those its vectors are in
            self._db.execute("INSERT OR IGNORE INTO namespaces SELECT DISTINCT namespace FROM vectors")
        self._lock = threading.Lock()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction: all of it, or nothing when it fails (the connection rolls back, also
        after a failed COMMIT, and takes the next write); a disk that refused it raises DiskError."""
        with self._lock, writing(self.path), self._db:
            self._db.execute("BEGIN")
            yield

    def settings(self) -> dict[str, Any]:
        with self._lock:
            rows = self._db.execute("SELECT key, value FROM settings").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def save_settings(self, values: dict[str, Any]) -> None:
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)",
                                 [(k, json.dumps(v)) for k, v in values.items()])

    def upsert(self, namespace: str, records: Iterable[tuple[str, int, str | None, Any, np.ndarray | None,
                                                            tuple[list[int], list[float]] | None, bool]]) -> None:
        """Insert or replace ``(id, seq, data, metadata, vector, sparse, given)`` rows in one transaction."""
        rows = [
            (namespace, rid, seq, data, None if meta is None else json.dumps(meta),
             None if vec is None else np.asarray(vec, dtype=np.float32).tobytes(),
             None if sparse is None else json.dumps([list(sparse[0]), list(sparse[1])]), int(given))
            for rid, seq, data, meta, vec, sparse, given in records
        ]
        with self._transaction():
            self._db.execute("INSERT OR IGNORE INTO namespaces VALUES (?)", (namespace,))
            self._db.executemany("INSERT OR REPLACE INTO vectors (namespace, id, seq, data, metadata, vector, "
                                 "sparse, given) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def delete(self, namespace: str, ids: Iterable[str]) -> None:
        with self._transaction():
            self._db.executemany("DELETE FROM vectors WHERE namespace = ? AND id = ?",
                                 [(namespace, i) for i in ids])

    def empty(self, namespace: str | None) -> None:
        """Delete every row of a namespace, or of every namespace when ``namespace`` is None; the
        namespaces stay (a reset)."""
        with self._transaction():
            if namespace is None:
                self._db.execute("DELETE FROM vectors")
            else:
                self._db.execute("DELETE FROM vectors WHERE namespace = ?", (namespace,))

    def drop_namespace(self, namespace: str) -> None:
        """Delete a namespace: its rows and its name."""
        with self._transaction():
            self._db.execute("DELETE FROM vectors WHERE namespace = ?", (namespace,))
            self._db.execute("DELETE FROM namespaces WHERE name = ?", (namespace,))

    def namespaces(self) -> list[str]:
        """Every stored namespace, empty ones too, in name order."""
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT name FROM namespaces ORDER BY name")]

    def load(self) -> Iterator[Row]:
        """Every stored record, namespace by namespace, in upsert order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT namespace, id, data, metadata, vector, sparse, given FROM vectors ORDER BY namespace, seq"
            ).fetchall()
        for ns, rid, data, meta, blob, sparse, given in rows:
            yield (ns, rid, data, (None if meta is None else json.loads(meta)),
                   None if blob is None else np.frombuffer(blob, dtype=np.float32).copy(),
                   None if sparse is None else tuple(json.loads(sparse)), bool(given))

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.directory.glob("index.sqlite3*") if p.exists())

    def close(self) -> None:
        with self._lock:
            self._db.close()
