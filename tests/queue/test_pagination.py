"""Cursor pagination of the logs and the DLQ as a property: every row exactly once, newest first,
also when many runs share one creation millisecond (the cursor must break ties)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from svckit.sandbox.queue_reads import list_dlq, list_runs
from svckit.sandbox.store import Store

_counter = itertools.count()


def _fill(store: Store, created: list[int]) -> None:
    with store.transaction() as db:
        db.execute("DELETE FROM dlq")
        db.execute("DELETE FROM steps")
        db.execute("DELETE FROM runs")
        for i, ms in enumerate(created):
            seq = db.execute("INSERT INTO runs (run_id, url, state, created_at, retries) VALUES (?, 'u', "
                             "'RUN_FAILED', ?, 3)", (f"wfr_{next(_counter)}", ms)).lastrowid
            db.execute("INSERT INTO dlq (dlq_id, run_seq, created_at, message_id) VALUES (?, ?, ?, 'm')",
                       (f"dlq_{i:04d}", seq, ms))


@settings(max_examples=60, deadline=None)
@given(created=st.lists(st.integers(1_700_000_000_000, 1_700_000_000_005), max_size=35),
       count=st.integers(1, 10))
def test_logs_pages_cover_every_run_once(tmp_path_factory, created, count):
    store = Store(tmp_path_factory.mktemp("p") / "s.sqlite3")
    try:
        _fill(store, created)
        seen, cursor, pages = [], None, 0
        while True:
            params = {"count": str(count), **({"cursor": cursor} if cursor else {})}
            body = list_runs(store, params)
            pages += 1
            assert len(body["runs"]) <= count
            seen += [(r["workflowRunCreatedAt"], r["workflowRunId"]) for r in body["runs"]]
            cursor = body.get("cursor")
            if cursor is None:
                break
            assert body["runs"]  # a page with a cursor is never empty
        assert len(seen) == len(set(seen)) == len(created)
        assert [c for c, _ in seen] == sorted(created, reverse=True)
        assert pages == max(1, -(-len(created) // count))

        dlq, cursor = [], None
        while True:
            body = list_dlq(store, {"count": str(count), **({"cursor": cursor} if cursor else {})})
            dlq += [m["dlqId"] for m in body["messages"]]
            cursor = body.get("cursor")
            if cursor is None:
                break
        assert sorted(dlq) == sorted(f"dlq_{i:04d}" for i in range(len(created))) and len(set(dlq)) == len(dlq)
    finally:
        store.close()
