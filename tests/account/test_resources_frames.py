"""``frames.resources_frame`` and ``frames.resource_usage_frame``: what a person reads of the account's
resources, tokens masked in every shown text, usage against limits with their units."""

from __future__ import annotations

import pandas as pd

from svckit import frames
from svckit._units import READABLE, UNITS
from svckit.account import AccountResources
from svckit.display import readable
from tests.account.devapi_replies import (
    DB_TOKEN,
    QUEUE_TOKEN,
    SECRETS,
    VECTOR_TOKEN,
    VECTORS,
    database,
    database_stats,
    queue_account,
    queue_stats,
    search_index,
    vector_index,
    vector_stats,
)


def resources(**changes) -> AccountResources:
    db = database()
    bundle = {
        "databases": [db], "vector_indexes": [vector_index(*v) for v in VECTORS], "search_indexes": [search_index()],
        "queue_accounts": [queue_account()], "database_stats": {db["database_id"]: database_stats()},
        "vector_stats": {vector_index(*v)["id"]: vector_stats(v[2]) for v in VECTORS},
        "queue_stats": {"queue-account-1": queue_stats()},
    }
    return AccountResources.model_validate({**bundle, **changes})


def shown_texts(frame: pd.DataFrame) -> list[str]:
    return [repr(frame), frame.to_string(), frame.to_html(), frame.to_csv(), readable(frame).to_html()]


def test_resources_frame_has_a_row_per_resource_with_its_url_and_masked_token():
    frame = frames.resources_frame(resources())
    assert list(frame.columns) == ["kind", "name", "id", "plan", "region", "state", "endpoint", "token", "summary",
                                   "storage", "created"]
    assert list(frame["kind"]) == ["Key-value database", *["Vector index"] * 4, "Search index", "Queue account"]
    db, dense, sparse, _, nomodel, search, queue = (frame.iloc[i] for i in range(7))
    assert db["endpoint"] == "http://127.0.0.1:8123/kv" and db["token"] == "***" + DB_TOKEN[-4:]
    assert db["summary"] == "port 8123 · no TLS" and db["storage"] == 1_398_101 and db["state"] == "active"
    assert dense["endpoint"] == "http://127.0.0.1:8123/vector/dense" and dense["token"] == "***" + VECTOR_TOKEN[-4:]
    assert dense["summary"] == "DENSE · 384 dimensions · COSINE · all-MiniLM-L6-v2"
    assert sparse["summary"] == "SPARSE · COSINE · BM25" and nomodel["summary"] == "DENSE · 384 dimensions · COSINE"
    assert pd.isna(search["endpoint"]) and pd.isna(search["token"])  # the sandbox serves no search data API
    assert queue["token"] == "***" + QUEUE_TOKEN[-4:] and queue["plan"] == "free" and queue["summary"] == "Free"
    assert str(db["created"]) == "2025-11-24 16:00:00+00:00"
    assert frame.attrs[READABLE] and frame.attrs[UNITS] == {"storage": "bytes"}


def test_no_token_or_password_in_any_shown_text_of_either_frame():
    res = resources()
    for frame in (frames.resources_frame(res), frames.resource_usage_frame(res)):
        for text in shown_texts(frame):
            assert not any(secret in text for secret in SECRETS)


def test_hidden_credentials_show_no_token_at_all():
    hidden = {k: v for k, v in database().items() if k not in ("rest_token", "read_only_rest_token")}
    frame = frames.resources_frame(resources(databases=[hidden]))
    assert pd.isna(frame.iloc[0]["token"])


def test_resource_usage_frame_is_one_row_per_measured_quantity_against_its_limit():
    frame = frames.resource_usage_frame(resources(), today="2026-12-06")
    assert list(frame.columns) == ["kind", "name", "id", "measure", "used", "limit", "unit", "share", "display"]
    rows = {(r.name, r.measure): r for r in frame.itertuples()}
    assert set(frame["measure"]) == {"Commands today", "Storage", "Keys", "Vectors", "Queries today",
                                     "Updates today", "Messages today", "DLQ"}
    commands = rows[("sandbox", "Commands today")]
    assert (commands.used, commands.limit, commands.unit, commands.share) == (42, 10_000, "count", 42 / 10_000)
    storage = rows[("sandbox", "Storage")]
    assert (storage.used, storage.limit, storage.unit) == (1_398_101, 268_435_456, "bytes")
    assert storage.display == "1.3 MiB of 256.0 MiB"
    keys = rows[("sandbox", "Keys")]
    assert keys.used == 17 and pd.isna(keys.limit) and pd.isna(keys.share) and keys.display == "17"
    queries = rows[("dense", "Queries today")]  # max_daily_queries -1: no limit
    assert queries.used == 5 and pd.isna(queries.limit) and pd.isna(queries.share)
    vectors = rows[("hybrid", "Vectors")]
    assert (vectors.used, vectors.limit, vectors.display) == (300, 10_000, "300 of 10,000")
    messages, dlq = rows[("queue", "Messages today")], rows[("queue", "DLQ")]
    assert (messages.used, messages.limit, messages.share) == (12, 500, 12 / 500)
    assert (dlq.used, dlq.limit) == (3, 1000)
    assert str(frame["used"].dtype) == "Int64" and str(frame["share"].dtype) == "Float64"
    assert frame.attrs[READABLE] and frame.attrs[UNITS] == {"share": "share"}
    assert "2.4%" in readable(frame).to_html()  # 12 of 500, as a share


def test_a_resource_without_stats_has_no_usage_rows():
    res = resources(vector_stats={}, queue_stats={}, errors={"queue-account-1": "HTTP 404"})
    frame = frames.resource_usage_frame(res)
    assert set(frame["kind"]) == {"Key-value database"}


def test_an_empty_account_gives_empty_frames_with_their_columns():
    empty = AccountResources()
    listed = frames.resources_frame(empty)
    assert listed.empty and "token" in listed.columns
    usage = frames.resource_usage_frame(empty)
    assert usage.empty and "share" in usage.columns
