"""A data directory made by an earlier svckit opens with every row it held, under today's tables."""

from __future__ import annotations

import sqlite3

from svckit.sandbox.store import Store

#: ``state.sqlite3`` as svckit made it before messages were kept (events and DLQ rows of runs only)
BEFORE_MESSAGES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE queue_account (id TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE search_indexes (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE runs (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, url TEXT NOT NULL,
    state TEXT NOT NULL, created_at INTEGER NOT NULL, completed_at INTEGER, label TEXT, body TEXT,
    retries INTEGER NOT NULL, flow_control_key TEXT, flow_control_value TEXT, resumed_from TEXT, dlq_id TEXT,
    UNIQUE (run_id, created_at));
CREATE TABLE steps (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_seq INTEGER NOT NULL REFERENCES runs (seq),
    group_no INTEGER NOT NULL, group_type TEXT NOT NULL, step_id INTEGER, step_name TEXT NOT NULL,
    step_type TEXT NOT NULL, call_type TEXT NOT NULL, message_id TEXT, out TEXT, concurrent INTEGER NOT NULL,
    state TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE dlq (dlq_id TEXT PRIMARY KEY, run_seq INTEGER NOT NULL REFERENCES runs (seq),
    created_at INTEGER NOT NULL, message_id TEXT NOT NULL, response_status INTEGER, response_body TEXT);
CREATE INDEX dlq_newest ON dlq (created_at DESC, dlq_id DESC);
CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_seq INTEGER NOT NULL REFERENCES runs (seq),
    time INTEGER NOT NULL, message_id TEXT NOT NULL, state TEXT NOT NULL, step_name TEXT, error TEXT,
    response_status INTEGER, next_delivery_time INTEGER);
CREATE INDEX events_newest ON events (time DESC, seq DESC);
INSERT INTO runs (seq, run_id, url, state, created_at, retries, dlq_id)
    VALUES (1, 'wfr_old', 'http://127.0.0.1/wf', 'RUN_FAILED', 1000, 3, 'dlq_old');
INSERT INTO steps (run_seq, group_no, group_type, step_name, step_type, call_type, concurrent, state, created_at)
    VALUES (1, 0, 'sequential', 'init', 'Initial', 'step', 1, 'STEP_SUCCESS', 1000);
INSERT INTO events (run_seq, time, message_id, state) VALUES (1, 1000, 'msg_a', 'DELIVERED'), (1, 1001, 'msg_b', 'FAILED');
INSERT INTO dlq (dlq_id, run_seq, created_at, message_id, response_status) VALUES ('dlq_old', 1, 1001, 'msg_b', 500);
"""


def test_an_earlier_data_directory_keeps_its_runs_events_and_dlq_and_takes_messages(tmp_path):
    path = tmp_path / "state.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(BEFORE_MESSAGES)
    db.close()
    for _ in range(2):  # a second start finds nothing to change
        store = Store(path)
        assert [tuple(r) for r in store.query("SELECT run_seq, message_id, state FROM events ORDER BY seq")] == \
            [(1, "msg_a", "DELIVERED"), (1, "msg_b", "FAILED")]
        [entry] = store.query("SELECT dlq_id, run_seq, message_seq, response_status, not_before FROM dlq")
        assert tuple(entry) == ("dlq_old", 1, None, 500, None)
        assert store.query("SELECT caller_ip FROM runs")[0]["caller_ip"] is None  # a column added on the way
        store.close()
    store = Store(path)
    with store.transaction() as db:  # an event and a DLQ entry of a message, which belong to no run
        db.execute("INSERT INTO messages (message_id, kind, url, method, headers, body, options, max_retries, "
                   "not_before, created_at, state) VALUES ('msg_c', 'message', 'http://127.0.0.1/h', 'POST', "
                   "'[]', x'', '{}', 3, 5, 5, 'FAILED')")
        db.execute("INSERT INTO events (message_seq, time, message_id, state) VALUES (1, 5, 'msg_c', 'FAILED')")
        db.execute("INSERT INTO dlq (dlq_id, message_seq, created_at, message_id) VALUES ('dlq_c', 1, 5, 'msg_c')")
    assert len(store.query("SELECT * FROM events")) == 3 and len(store.query("SELECT * FROM dlq")) == 2
    names = {r["name"] for r in store.query("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"events_newest", "events_of_message", "dlq_newest", "dlq_of_message"} <= names
    store.close()
