"""Persistence of a local index: one SQLite file per index directory.

Each upsert and delete is one transaction, so a crash or restart keeps every acknowledged vector.
Dense vectors are stored as float32 blobs (nothing is re-embedded on restart); sparse vectors are not
stored, because re-tokenising the raw text at load is cheap and their weights depend on the
namespace's current average length anyway.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
    namespace TEXT NOT NULL,
    id        TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    data      TEXT,
    metadata  TEXT,
    vector    BLOB,
    PRIMARY KEY (namespace, id)
);
"""


class IndexStore:
    """The SQLite file ``<directory>/index.sqlite3`` of one index."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "index.sqlite3"
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def settings(self) -> dict[str, Any]:
        with self._lock:
            rows = self._db.execute("SELECT key, value FROM settings").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def save_settings(self, values: dict[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)",
                                 [(k, json.dumps(v)) for k, v in values.items()])

    def upsert(self, namespace: str, records: Iterable[tuple[str, int, str | None, Any, np.ndarray | None]]) -> None:
        rows = [
            (namespace, rid, seq, data, None if meta is None else json.dumps(meta),
             None if vec is None else np.asarray(vec, dtype=np.float32).tobytes())
            for rid, seq, data, meta, vec in records
        ]
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?, ?)", rows)

    def delete(self, namespace: str, ids: Iterable[str]) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM vectors WHERE namespace = ? AND id = ?",
                                 [(namespace, i) for i in ids])

    def load(self) -> Iterator[tuple[str, str, str | None, Any, np.ndarray | None]]:
        """Every stored record, namespace by namespace, in upsert order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT namespace, id, data, metadata, vector FROM vectors ORDER BY namespace, seq"
            ).fetchall()
        for ns, rid, data, meta, blob in rows:
            yield ns, rid, data, (None if meta is None else json.loads(meta)), (
                None if blob is None else np.frombuffer(blob, dtype=np.float32).copy()
            )

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.directory.glob("index.sqlite3*") if p.exists())

    def close(self) -> None:
        with self._lock:
            self._db.close()
