"""The tables of ``state.sqlite3`` (:mod:`svckit.sandbox.store`), and how a data directory made by an
earlier svckit is brought up to them.

- The account (C): ``queue_account``, ``search_indexes``, ``meta``.
- Workflow runs (D): ``runs``, ``steps``, ``failure_callbacks``; a run served by a ``serve()`` app
  (:mod:`svckit.sandbox.workflow`) also has its ``history`` (the step messages its app published, in
  order) and ``waiters`` (its ``waitForEvent`` steps); its messages are ``messages`` rows with its ``run_seq``.
- Messages (D, the local QStash: :mod:`svckit.sandbox.delivery`): ``messages`` (every delivery the
  sandbox makes or will make, with its state), ``dedup`` (deduplication ids, ten minutes), ``queues``,
  ``topics`` and ``topic_endpoints`` (URL groups), ``schedules``, ``usage`` (messages accepted per UTC day).
- Shared by both: ``events`` (one row per state a delivery went through) and ``dlq``; each row belongs
  to a run (``run_seq``) or to a message (``message_seq``).

Data directories outlive svckit versions, so :func:`migrate` is idempotent and keeps every row: a
missing table is created, a missing column added (:data:`ADDED_COLUMNS`), and a table whose definition
changed in a way SQLite cannot ALTER (a NOT NULL dropped) is rebuilt under its new definition with its
rows copied (:data:`REBUILT`), all in one transaction.
"""

from __future__ import annotations

import sqlite3

TABLES: dict[str, str] = {
    "meta": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "queue_account": "CREATE TABLE queue_account (id TEXT PRIMARY KEY, record TEXT NOT NULL)",
    "search_indexes": "CREATE TABLE search_indexes (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL)",
    "runs": """CREATE TABLE runs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL, url TEXT NOT NULL, state TEXT NOT NULL,
        created_at INTEGER NOT NULL, completed_at INTEGER,
        label TEXT, body TEXT, retries INTEGER NOT NULL,
        flow_control_key TEXT, flow_control_value TEXT,
        resumed_from TEXT, dlq_id TEXT, caller_ip TEXT,
        kind TEXT, config TEXT, initial BLOB, response TEXT,
        UNIQUE (run_id, created_at))""",
    "steps": """CREATE TABLE steps (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_seq INTEGER NOT NULL REFERENCES runs (seq),
        group_no INTEGER NOT NULL, group_type TEXT NOT NULL,
        step_id INTEGER, step_name TEXT NOT NULL, step_type TEXT NOT NULL, call_type TEXT NOT NULL,
        message_id TEXT, out TEXT, concurrent INTEGER NOT NULL, state TEXT NOT NULL,
        created_at INTEGER NOT NULL)""",
    "failure_callbacks": """CREATE TABLE failure_callbacks (
        run_seq INTEGER PRIMARY KEY REFERENCES runs (seq),
        message_id TEXT NOT NULL, state TEXT NOT NULL, fail_status INTEGER NOT NULL, fail_response TEXT,
        response_status INTEGER, response_body TEXT, updated_at INTEGER NOT NULL)""",
    "messages": """CREATE TABLE messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        source_seq INTEGER REFERENCES messages (seq),
        url TEXT NOT NULL, method TEXT NOT NULL,
        topic_name TEXT, endpoint_name TEXT, queue_name TEXT, schedule_id TEXT,
        headers TEXT NOT NULL, body BLOB NOT NULL, options TEXT NOT NULL,
        max_retries INTEGER NOT NULL, retried INTEGER NOT NULL DEFAULT 0,
        not_before INTEGER NOT NULL, created_at INTEGER NOT NULL,
        caller_ip TEXT, label TEXT, flow_control_key TEXT, flow_control_value TEXT,
        state TEXT NOT NULL, due_at INTEGER,
        response_status INTEGER, response_headers TEXT, response_body BLOB,
        run_seq INTEGER REFERENCES runs (seq), history_no INTEGER, call_type TEXT, step_name TEXT)""",
    "history": """CREATE TABLE history (
        run_seq INTEGER NOT NULL REFERENCES runs (seq), no INTEGER NOT NULL,
        message_id TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (run_seq, no))""",
    "waiters": """CREATE TABLE waiters (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL, run_seq INTEGER NOT NULL REFERENCES runs (seq),
        url TEXT NOT NULL, deadline INTEGER NOT NULL, timeout_url TEXT NOT NULL,
        headers TEXT NOT NULL, timeout_headers TEXT NOT NULL, step TEXT NOT NULL,
        timeout_seq INTEGER REFERENCES messages (seq), created_at INTEGER NOT NULL)""",
    "dedup": "CREATE TABLE dedup (key TEXT PRIMARY KEY, result TEXT NOT NULL, expires_at INTEGER NOT NULL)",
    "queues": """CREATE TABLE queues (
        name TEXT PRIMARY KEY, parallelism INTEGER NOT NULL, paused INTEGER NOT NULL,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)""",
    "topics": "CREATE TABLE topics (name TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
    "topic_endpoints": """CREATE TABLE topic_endpoints (
        topic TEXT NOT NULL REFERENCES topics (name) ON DELETE CASCADE,
        url TEXT NOT NULL, name TEXT, PRIMARY KEY (topic, url))""",
    "schedules": """CREATE TABLE schedules (
        schedule_id TEXT PRIMARY KEY, destination TEXT NOT NULL, cron TEXT NOT NULL,
        headers TEXT NOT NULL, body BLOB NOT NULL, created_at INTEGER NOT NULL,
        paused INTEGER NOT NULL DEFAULT 0, caller_ip TEXT,
        last_at INTEGER, next_at INTEGER, error TEXT)""",
    "usage": "CREATE TABLE usage (day TEXT PRIMARY KEY, messages INTEGER NOT NULL DEFAULT 0)",
    "events": """CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_seq INTEGER REFERENCES runs (seq), message_seq INTEGER REFERENCES messages (seq),
        time INTEGER NOT NULL, message_id TEXT NOT NULL, state TEXT NOT NULL, step_name TEXT,
        error TEXT, response_status INTEGER, next_delivery_time INTEGER)""",
    "dlq": """CREATE TABLE dlq (
        dlq_id TEXT PRIMARY KEY,
        run_seq INTEGER REFERENCES runs (seq), message_seq INTEGER REFERENCES messages (seq),
        created_at INTEGER NOT NULL, message_id TEXT NOT NULL,
        response_status INTEGER, response_body TEXT, not_before INTEGER)""",
}

INDEXES = (
    "CREATE INDEX IF NOT EXISTS runs_newest ON runs (created_at DESC, seq DESC)",
    "CREATE INDEX IF NOT EXISTS steps_of_run ON steps (run_seq, group_no, step_id, seq)",
    "CREATE INDEX IF NOT EXISTS messages_due ON messages (due_at) WHERE due_at IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS messages_newest ON messages (created_at DESC, seq DESC)",
    "CREATE INDEX IF NOT EXISTS dlq_newest ON dlq (created_at DESC, dlq_id DESC)",
    "CREATE INDEX IF NOT EXISTS dlq_of_message ON dlq (message_seq)",
    "CREATE INDEX IF NOT EXISTS events_newest ON events (time DESC, seq DESC)",
    "CREATE INDEX IF NOT EXISTS events_of_message ON events (message_seq)",
    "CREATE INDEX IF NOT EXISTS messages_of_run ON messages (run_seq) WHERE run_seq IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS waiters_of_event ON waiters (event_id)",
)

#: columns added after a data directory may have been created: (table, column, declaration).
ADDED_COLUMNS = (("runs", "caller_ip", "TEXT"), ("dlq", "not_before", "INTEGER"),
                 *(("runs", c, d) for c, d in (("kind", "TEXT"), ("config", "TEXT"), ("initial", "BLOB"),
                                               ("response", "TEXT"))),
                 *(("messages", c, d) for c, d in (("run_seq", "INTEGER"), ("history_no", "INTEGER"),
                                                   ("call_type", "TEXT"), ("step_name", "TEXT"))))

#: tables rebuilt when an earlier definition is found, each told by a column it lacks: events and dlq
#: rows once all belonged to a run (run_seq NOT NULL); now a row belongs to a run or to a message.
REBUILT = (("events", "message_seq"), ("dlq", "message_seq"))


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def migrate(db: sqlite3.Connection) -> None:
    """Bring ``db`` (autocommit mode) to the tables above, keeping every row (module docstring)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for table, create in TABLES.items():
            if not _columns(db, table):
                db.execute(create)
        for table, column, declaration in ADDED_COLUMNS:
            if column not in _columns(db, table):
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        for table, marker in REBUILT:
            have = _columns(db, table)
            if marker not in have:
                db.execute(f"ALTER TABLE {table} RENAME TO {table}_before")
                db.execute(TABLES[table])
                kept = ", ".join(c for c in _columns(db, table) if c in have)
                db.execute(f"INSERT INTO {table} ({kept}) SELECT {kept} FROM {table}_before")
                db.execute(f"DROP TABLE {table}_before")  # its indexes go with it; made again below
        for index in INDEXES:
            db.execute(index)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
