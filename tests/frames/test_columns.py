"""The one column-spec builder: every area's frames of empty input have the columns and dtypes of the
same frame with rows; every public name of svckit.frames is in its one ``__all__``; the units a frame
shows with come from its columns."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import pandas as pd
import pytest

from svckit import frames
from svckit._units import UNITS
from svckit.account import AccountResources
from svckit.frames._columns import Column, build
from tests.account.test_resources_frames import resources
from tests.frames.test_frames import RUN

T = 1_700_000_000_000
EVENT = {"time": T, "state": "ERROR", "messageId": "m1", "url": "http://127.0.0.1/a", "responseStatus": 503,
         "error": "503", "nextDeliveryTime": T + 1000, "topicName": "g", "queueName": "q", "label": "l"}
DLQ = {"dlqId": "d1", "messageId": "m1", "url": "http://127.0.0.1/a", "createdAt": T, "notBefore": T,
       "responseStatus": 500, "maxRetries": 3, "workflowRunId": "wfr_1", "workflowCreatedAt": T}
MESSAGE = {"messageId": "m1", "url": "http://127.0.0.1/a", "notBefore": T, "createdAt": T, "maxRetries": 3}
QUEUE = {"name": "q", "parallelism": 2, "lag": 5, "paused": False, "createdAt": T, "updatedAt": T}
GROUP = {"name": "g", "endpoints": [{"url": "http://127.0.0.1/a", "name": "a"}], "createdAt": T}
SCHEDULE = {"scheduleId": "s1", "destination": "http://127.0.0.1/a", "cron": "* * * * *", "createdAt": T,
            "lastScheduleTime": T, "nextScheduleTime": T + 60_000, "lastScheduleStates": {"m1": "SUCCESS"}}
HIT = {"id": "a", "score": 0.5, "data": "text", "vector": [0.1], "sparseVector": {"indices": [1], "values": [0.2]}}
TERM = SimpleNamespace(word="red", term="red", dimension=7, query_weight=0.5, doc_weight=0.4, contribution=0.2,
                       tf=1, doc_len=3, idf=1.1)
EXPLAINED = SimpleNamespace(
    hits=[SimpleNamespace(rank=1, id="a", score=0.5, recomputed=0.5, dense_rank=1, dense_score=0.9, sparse_rank=None,
                          sparse_score=None, dense_part=0.5, sparse_part=None, terms=[TERM], formula="0.5")],
    stats=[SimpleNamespace(side="dense", candidates=3, mean=None, std=None, low=None, high=None)])
ACCOUNT = {"type": "paid", "max_requests_per_day_hard": 1000, "max_message_size": 1_048_576, "max_dlq_size": 10,
           "reserved_type": "queue_enterprise_1m", "last_plan_upgrade_time": 0}
STATS = SimpleNamespace(requests_on=lambda day: 12, dlq_message_count=1, messages_by_state=lambda: {"DELIVERED": 3})


def cases() -> dict[str, list[tuple[str, pd.DataFrame, pd.DataFrame]]]:
    """Per area: (what is built, the frame of empty input, the frame with rows); built inside the
    test, so a mutation test run sees the builder called by it."""
    return {
        "kv": [
            ("keys", frames.keys_frame([]), frames.keys_frame([{"key": "a", "type": "hash", "pttl": 5, "memory": 1,
                                                                "length": 2}])),
            ("keys (bare names)", frames.keys_frame([]), frames.keys_frame(["a"])),
            ("pipeline", frames.pipeline_frame([]), frames.pipeline_frame(["OK"], [("SET", "a", 1)])),
            *((f"value {t}", frames.value_frame(t, empty), frames.value_frame(t, full)) for t, empty, full in (
                ("hash", {}, {"f": "v"}), ("list", [], ["x"]), ("set", set(), {"m"}), ("zset", [], [("m", 1.0)]),
                ("stream", [], [("1700000000000-0", {})]))),
        ],
        "vector": [
            ("query", frames.query_frame([]), frames.query_frame([HIT])),
            ("records", frames.records_frame([]), frames.records_frame([{k: v for k, v in HIT.items() if k != "score"}])),
            ("hits", frames.hits_frame([]), frames.hits_frame([HIT])),
            ("namespaces", frames.namespaces_frame({"namespaces": {}}),
             frames.namespaces_frame({"namespaces": {"": {"vectorCount": 1, "pendingVectorCount": 0}}})),
            ("explain", frames.explain_frame(SimpleNamespace(hits=[])), frames.explain_frame(EXPLAINED)),
            ("explain terms", frames.explain_terms_frame(SimpleNamespace(hits=[])), frames.explain_terms_frame(EXPLAINED)),
            ("fusion stats", frames.fusion_stats_frame(SimpleNamespace(stats=[])), frames.fusion_stats_frame(EXPLAINED)),
        ],
        "queue": [
            ("runs", frames.runs_frame([]), frames.runs_frame([RUN])),
            ("steps", frames.steps_frame([]), frames.steps_frame(RUN)),
            ("dlq", frames.dlq_frame([]), frames.dlq_frame([DLQ])),
            ("events", frames.events_frame([]), frames.events_frame([EVENT])),
            ("deliveries", frames.deliveries_frame([]), frames.deliveries_frame([EVENT])),
            ("messages", frames.messages_frame([]), frames.messages_frame([MESSAGE])),
            ("queues", frames.queues_frame([]), frames.queues_frame([QUEUE])),
            ("url groups", frames.url_groups_frame([]), frames.url_groups_frame([GROUP])),
            ("schedules", frames.schedules_frame([]), frames.schedules_frame([SCHEDULE])),
        ],
        "account": [
            ("limits", frames.account_limits_frame({}), frames.account_limits_frame(ACCOUNT)),
            ("limits compared", frames.account_limits_frame({}, compare={}),
             frames.account_limits_frame(ACCOUNT, compare=ACCOUNT)),
            ("usage", frames.account_usage_frame({}, SimpleNamespace(requests_on=lambda day: 0, dlq_message_count=0,
                                                                      messages_by_state=dict)).iloc[:0],
             frames.account_usage_frame(ACCOUNT, STATS)),
            ("resources", frames.resources_frame(AccountResources()), frames.resources_frame(resources())),
            ("resource usage", frames.resource_usage_frame(AccountResources()), frames.resource_usage_frame(resources())),
        ],
    }


@pytest.mark.parametrize("area", ["kv", "vector", "queue", "account"])
def test_a_frame_of_empty_input_has_the_columns_and_dtypes_of_one_with_rows(area: str) -> None:
    for what, empty, full in cases()[area]:
        assert empty.empty and not full.empty, what
        assert list(empty.columns) == list(full.columns), what
        assert empty.dtypes.astype(str).tolist() == full.dtypes.astype(str).tolist(), what
        assert empty.attrs[UNITS] == full.attrs[UNITS] if UNITS in full.attrs else UNITS not in empty.attrs, what


def test_every_public_name_of_frames_is_in_its_one_all() -> None:
    public = {name for name, value in vars(frames).items()
              if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"}
    assert public == set(frames.__all__)
    assert all(callable(getattr(frames, name)) or name.isupper() for name in frames.__all__)


def test_the_builder_makes_the_columns_in_order_with_their_dtypes_and_units() -> None:
    columns = (Column("id", "string"), Column("size", "Int64", "bytes_", unit="bytes"),
               Column("at", "utc_ms", lambda row: row["t"]), Column("took", "duration_ms", "t"),
               Column("kind", "category", categories=("a", "b")), Column("day", "utc_s", "t"))
    rows = [{"id": "x", "bytes_": 10, "t": 1500, "kind": "c"}, {"id": "y", "bytes_": None, "t": None, "kind": "a"}]
    df = build(columns, rows)
    assert list(df.columns) == ["id", "size", "at", "took", "kind", "day"]
    assert df["day"].iloc[0] == pd.Timestamp(1500, unit="s", tz="UTC")
    assert df["size"].tolist()[0] == 10 and pd.isna(df["size"].iloc[1])
    assert df["at"].iloc[0] == pd.Timestamp(1500, unit="ms", tz="UTC") and pd.isna(df["at"].iloc[1])
    assert df["took"].iloc[0] == pd.Timedelta(milliseconds=1500)
    assert df["kind"].cat.categories.tolist() == ["a", "b", "c"]  # the listed ones first, then the others
    assert df.attrs[UNITS] == {"size": "bytes"}
    assert build(columns, [], id=[]).dtypes.astype(str).tolist() == df.dtypes.astype(str).tolist()
    assert build(columns[:1], [{"id": "ignored"}], id=["given"])["id"].tolist() == ["given"]
