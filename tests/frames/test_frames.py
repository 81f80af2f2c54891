"""svckit.frames: every client result as a DataFrame with the documented columns and dtypes."""

from __future__ import annotations

from typing import ClassVar

import pandas as pd
import pytest

from svckit import frames
from svckit.errors import CommandError


def test_keys_frame_types_ttl_memory_length():
    df = frames.keys_frame([
        {"key": "a", "type": "string", "pttl": -1, "memory": 56, "length": 5},
        {"key": "b", "type": "hash", "pttl": 1500, "memory": 120, "length": 2},
        {"key": "gone", "type": "none", "pttl": -2, "memory": None},
        "bare",
        {"key": "err", "type": "zset", "pttl": CommandError("boom"), "memory": CommandError("no")},
    ])
    assert list(df.columns) == ["key", "type", "ttl_s", "expires", "memory_bytes", "length"]
    assert isinstance(df["type"].dtype, pd.CategoricalDtype)
    assert str(df["ttl_s"].dtype) == "Int64" and str(df["memory_bytes"].dtype) == "Int64"
    # no expiry and missing keys have no TTL; 1.5 s rounds up to 2 s like TTL does
    assert df["ttl_s"].isna().tolist() == [True, False, True, True, True]
    assert df.loc[1, "ttl_s"] == 2
    assert df.loc[1, "expires"] == pd.Timedelta(milliseconds=1500)
    assert pd.isna(df.loc[0, "expires"])
    assert df.loc[0, "memory_bytes"] == 56 and pd.isna(df.loc[4, "memory_bytes"])
    assert df.loc[3, "key"] == "bare" and pd.isna(df.loc[3, "type"])


def test_value_frame_every_type():
    assert frames.value_frame("string", "hi")["value"].tolist() == ["hi"]
    h = frames.value_frame("hash", {"b": "2", "a": "1"})
    assert h["field"].tolist() == ["a", "b"] and h["value"].tolist() == ["1", "2"]
    lst = frames.value_frame("list", ["x", "y"])
    assert lst["index"].tolist() == [0, 1] and str(lst["index"].dtype) == "Int64"
    assert frames.value_frame("set", {"b", "a"})["member"].tolist() == ["a", "b"]
    z = frames.value_frame("zset", [("ada", 30.0), ("bob", 20)])
    assert z["member"].tolist() == ["ada", "bob"] and z["score"].tolist() == [30.0, 20.0]
    assert str(z["score"].dtype) == "Float64"


def test_value_frame_stream_ids_become_utc_times_and_fields_columns():
    s = frames.value_frame("stream", [("1700000000000-0", {"kind": "view"}), ("1700000000500-3", {"kind": "buy", "n": "2"})])
    assert s["id"].tolist() == ["1700000000000-0", "1700000000500-3"]
    assert s["time"].dt.tz is not None
    assert s["time"].iloc[1] == pd.Timestamp("2023-11-14 22:13:20.500", tz="UTC")
    assert s["seq"].tolist() == [0, 3]
    assert s["kind"].tolist() == ["view", "buy"] and pd.isna(s["n"].iloc[0])


def test_value_frame_json_is_flattened_by_path():
    doc = [{"name": "Lamp", "tags": ["home", "light"], "stock": {"berlin": 12}, "empty": {}}]  # JSON.GET $ shape
    j = frames.value_frame("ReJSON-RL", doc)
    assert dict(zip(j["path"], j["value"])) == {
        "$.name": "Lamp", "$.tags[0]": "home", "$.tags[1]": "light", "$.stock.berlin": 12, "$.empty": {}}
    assert dict(zip(j["path"], j["json_type"]))["$.stock.berlin"] == "integer"
    assert frames.value_frame("json", '{"a b": true}')["path"].tolist() == ['$["a b"]']


def test_value_frame_unknown_type_is_refused():
    with pytest.raises(ValueError, match="unknown key type"):
        frames.value_frame("bitfield", 1)


def test_pipeline_frame_keeps_errors_as_rows():
    df = frames.pipeline_frame([1, CommandError("WRONGTYPE Operation against a key"), "OK"],
                               [("INCR", "a"), ("LPUSH", "a", "x"), ("SET", "b", 1)])
    assert df["command"].tolist() == ["INCR a", "LPUSH a x", "SET b 1"]
    assert df["ok"].tolist() == [True, False, True]
    assert df["error"].iloc[1].startswith("WRONGTYPE") and pd.isna(df["error"].iloc[0])
    assert df["result"].tolist() == [1, None, "OK"]
    with pytest.raises(ValueError):
        frames.pipeline_frame([1], [("A",), ("B",)])


class Hit:  # the shape of svckit.vector.QueryResult (attributes)
    def __init__(self, id, score, metadata=None, data=None, vector=None, sparse_vector=None):
        self.id, self.score, self.metadata, self.data = id, score, metadata, data
        self.vector, self.sparse_vector = vector, sparse_vector


def test_query_frame_expands_metadata_and_accepts_models_or_wire_dicts():
    hits = [Hit("a", 0.9, {"genre": "sci-fi", "year": 1999, "info": {"lang": "en"}}, data="text a", vector=[0.1, 0.2]),
            {"id": "b", "score": 0.5, "metadata": {"genre": "drama"}, "sparseVector": {"indices": [1], "values": [0.3]}}]
    df = frames.query_frame(hits)
    assert df["id"].tolist() == ["a", "b"] and df["rank"].tolist() == [1, 2]  # as a person counts, and as the widgets show them
    assert "query" not in df.columns
    assert df["metadata.genre"].tolist() == ["sci-fi", "drama"]
    assert df["metadata.info.lang"].iloc[0] == "en"
    assert df["metadata.year"].iloc[0] == 1999 and pd.isna(df["metadata.year"].iloc[1])
    assert df["sparse_indices"].iloc[1] == [1] and df["vector"].iloc[0] == [0.1, 0.2]
    assert str(df["score"].dtype) == "Float64"


def test_query_frame_batch_has_query_column():
    df = frames.query_frame([[Hit("a", 1.0)], [Hit("b", 0.7), Hit("c", 0.2)]])
    assert df["query"].tolist() == [0, 1, 1] and df["rank"].tolist() == [1, 1, 2]
    assert frames.query_frame([]).empty


RUN = {
    "workflowRunId": "wfr_1", "workflowUrl": "http://127.0.0.1/wf", "workflowState": "RUN_SUCCESS",
    "workflowRunCreatedAt": 1_700_000_000_000, "workflowRunCompletedAt": 1_700_000_010_000,
    "steps": [
        {"type": "sequential", "steps": [{"stepName": "init", "stepType": "Initial", "callType": "step",
                                          "messageId": "m0", "concurrent": 1, "state": "STEP_SUCCESS",
                                          "createdAt": 1_700_000_000_000}]},
        {"type": "parallel", "steps": [
            {"stepId": 1, "stepName": "fetch-a", "stepType": "Run", "callType": "step", "messageId": "m1",
             "concurrent": 2, "state": "STEP_SUCCESS", "out": "\"a\"", "createdAt": 1_700_000_001_000},
            {"stepId": 2, "stepName": "fetch-b", "stepType": "Run", "callType": "step", "messageId": "m2",
             "concurrent": 2, "state": "STEP_FAILED", "createdAt": 1_700_000_001_200}]},
        {"type": "sequential", "steps": [{"stepId": 3, "stepName": "merge", "stepType": "Run", "callType": "step",
                                          "messageId": "m3", "concurrent": 1, "state": "STEP_SUCCESS",
                                          "createdAt": 1_700_000_004_000}]},
    ],
}


def test_runs_frame_one_row_per_run():
    running = {**RUN, "workflowRunId": "wfr_2", "workflowState": "RUN_STARTED", "workflowRunCompletedAt": None}
    df = frames.runs_frame([RUN, running])
    assert df["workflow_run_id"].tolist() == ["wfr_1", "wfr_2"]
    assert isinstance(df["state"].dtype, pd.CategoricalDtype) and "RUN_FAILED" in df["state"].cat.categories
    assert df["created_at"].iloc[0] == pd.Timestamp(1_700_000_000_000, unit="ms", tz="UTC")
    assert df["duration"].iloc[0] == pd.Timedelta(seconds=10) and pd.isna(df["duration"].iloc[1])
    assert df[["groups", "steps", "failed_steps"]].iloc[0].tolist() == [3, 4, 1]
    assert df["last_step"].iloc[0] == "merge"


def test_runs_frame_accepts_a_logs_page():
    class Page:
        cursor = None
        runs: ClassVar[list] = [RUN]

    assert frames.runs_frame(Page())["workflow_run_id"].tolist() == ["wfr_1"]


def test_steps_frame_groups_lanes_and_durations():
    df = frames.steps_frame(RUN)
    assert df["step_name"].tolist() == ["init", "fetch-a", "fetch-b", "merge"]
    assert df["group"].tolist() == [0, 1, 1, 2]
    assert df["lane"].tolist() == [0, 0, 1, 0]
    assert df["group_type"].tolist() == ["sequential", "parallel", "parallel", "sequential"]
    assert pd.isna(df["step_id"].iloc[0]) and df["step_id"].iloc[1] == 1
    # duration = time to the next event: the next group's start, or the run's completion at the end
    assert df["duration"].tolist() == [pd.Timedelta(seconds=1), pd.Timedelta(seconds=3),
                                       pd.Timedelta(milliseconds=2800), pd.Timedelta(seconds=6)]
    assert df["out"].iloc[1] == '"a"' and pd.isna(df["out"].iloc[0])
    assert isinstance(df["state"].dtype, pd.CategoricalDtype)


def test_steps_frame_of_a_running_run_has_no_last_duration():
    df = frames.steps_frame({**RUN, "workflowRunCompletedAt": None})
    assert pd.isna(df["duration"].iloc[-1]) and df["duration"].iloc[0] == pd.Timedelta(seconds=1)


def test_steps_frame_of_a_resumed_run_has_no_negative_duration():
    # a resumed run: its Initial step is new, the step it kept has the older time of the failed run
    resumed = {"workflowRunId": "wfr_r", "workflowUrl": "http://127.0.0.1/wf", "workflowRunCreatedAt": 10_000,
               "workflowState": "RUN_STARTED", "steps": [
        {"type": "sequential", "steps": [{"stepName": "init", "stepType": "Initial", "state": "STEP_SUCCESS",
                                          "createdAt": 10_000}]},
        {"type": "sequential", "steps": [{"stepId": 1, "stepName": "kept", "stepType": "Run",
                                          "state": "STEP_SUCCESS", "createdAt": 2_000}]},
        {"type": "sequential", "steps": [{"stepId": 2, "stepName": "again", "stepType": "Run",
                                          "state": "STEP_PROGRESS", "createdAt": 10_500}]}]}
    df = frames.steps_frame(resumed)
    assert df["duration"].tolist()[:2] == [pd.Timedelta(milliseconds=500), pd.Timedelta(milliseconds=8500)]
    assert pd.isna(df["duration"].iloc[2])


def test_runs_frame_keys_runs_that_share_an_id_and_orders_newest_first():
    resumed = {**RUN, "workflowRunCreatedAt": RUN["workflowRunCreatedAt"] + 60_000, "label": "again",
               "workflowState": "RUN_STARTED", "workflowRunCompletedAt": None}
    df = frames.runs_frame([RUN, resumed], newest_first=True)
    assert df["key"].tolist() == ["wfr_1@1700000060000", "wfr_1@1700000000000"]
    assert df["label"].tolist()[0] == "again" and pd.isna(df["label"].iloc[1])
    assert frames.runs_frame([RUN, resumed])["key"].iloc[0] == "wfr_1@1700000000000"


def test_frames_reject_a_run_that_is_not_a_run():
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        frames.runs_frame([{"workflowRunId": "wfr_x"}])  # no url, no state, no creation time


def test_steps_frame_bars_end_at_the_next_event_or_now():
    seq = {**RUN, "workflowState": "RUN_STARTED", "workflowRunCompletedAt": None, "steps": [
        {"type": "sequential", "steps": [
            {"stepName": "init", "stepType": "Initial", "state": "STEP_SUCCESS", "createdAt": 1_000},
            {"stepId": 1, "stepName": "call", "stepType": "Run", "state": "STEP_RETRY", "createdAt": 3_000},
            {"stepId": 1, "stepName": "call", "stepType": "Run", "state": "STEP_PROGRESS", "createdAt": 7_000}]}]}
    now = pd.Timestamp(20_000, unit="ms", tz="UTC")
    df = frames.steps_frame(seq, now=now.to_pydatetime())
    # inside a sequential group a bar ends where the following step starts; the last one runs until now
    assert df["end"].tolist() == [pd.Timestamp(3_000, unit="ms", tz="UTC"), pd.Timestamp(7_000, unit="ms", tz="UTC"),
                                  now]
    assert df["running"].tolist() == [False, False, True]
    assert df["position"].tolist() == [0, 1, 2] and df["retries"].tolist() == [0, 0, 1]
    # a failed run without a completion time: the last bar ends where it started, nothing runs
    failed = frames.steps_frame({**seq, "workflowState": "RUN_FAILED"}, now=now.to_pydatetime())
    assert failed["end"].iloc[-1] == failed["start"].iloc[-1] and not failed["running"].any()
    assert frames.steps_frame([]).empty and "end" in frames.steps_frame([]).columns


def test_comparison_frame_puts_both_plans_on_one_scale():
    other = {**ACCOUNT, "max_retries": 12, "max_message_size": 4 * 1048576}
    cmp = frames.comparison_frame(frames.account_limits_frame(ACCOUNT, compare=other)).set_index("limit")
    assert cmp.loc["max_retries", "current_pct"] == 25.0 and cmp.loc["max_retries", "compare_pct"] == 100.0
    assert cmp.loc["max_message_size", "current_pct"] == 25.0
    assert cmp.loc["max_topics", "current_pct"] == cmp.loc["max_topics", "compare_pct"] == 100.0
    assert "prod_pack_enabled" not in cmp.index  # not a number: not on the chart


ACCOUNT = {
    "customer_id": "me@example.com", "id": "u-1", "token": "secret-token-value-1234", "password": "pw-secret",
    "active": True, "state": "active", "last_plan_upgrade_time": 0, "max_message_size": 1048576,
    "max_requests_per_day": 1000, "max_requests_per_day_hard": 1500, "max_endpoints_per_topic": 100,
    "max_requests_per_second": 100, "max_dlq_size": 1000, "max_retries": 3, "max_topics": 10, "max_schedules": 10,
    "max_events_size": 1000, "max_dlq_retention_time_milis": 259_200_000, "max_delay": 604_800,
    "max_parallelism": 10, "max_global_parallelism": 10, "max_queues": 10, "prod_pack_enabled": False,
    "timeout": 900, "type": "free", "reserved_type": "", "reserved_price": 0.0, "created_by": "me@example.com",
    "creation_time": 1_700_000_000,
}


def test_account_limits_frame_groups_units_and_display():
    df = frames.account_limits_frame(ACCOUNT)
    assert list(df["group"].cat.categories) == ["throughput", "sizes", "dlq", "scheduling", "parallelism", "plan"]
    by = df.set_index("limit")
    assert by.loc["max_message_size", "unit"] == "bytes" and by.loc["max_message_size", "display"] == "1.0 MiB"
    assert by.loc["max_dlq_retention_time_milis", "display"] == "3 d"
    assert by.loc["max_delay", "display"] == "7 d" and by.loc["timeout", "display"] == "15 min"
    assert by.loc["max_requests_per_second", "group"] == "throughput"
    assert by.loc["prod_pack_enabled", "display"] == "no" and pd.isna(by.loc["prod_pack_enabled", "numeric"])
    assert by.loc["max_retries", "numeric"] == 3.0
    # secrets never appear
    text = df.to_string()
    assert "secret-token" not in text and "pw-secret" not in text


def test_account_limits_frame_compare_columns():
    other = {**ACCOUNT, "max_retries": 20, "max_message_size": 50 * 1048576}
    df = frames.account_limits_frame(ACCOUNT, compare=other).set_index("limit")
    assert df.loc["max_retries", "compare"] == 20 and df.loc["max_message_size", "compare_display"] == "50.0 MiB"


def test_account_limits_frame_from_the_pydantic_model():
    account = pytest.importorskip("svckit.account").QueueAccount.model_validate(ACCOUNT)
    df = frames.account_limits_frame(account).set_index("limit")
    assert df.loc["type", "value"] == "free"  # the enum member's value, not "PlanType.FREE"
    assert "secret-token" not in df.to_string()


def test_frames_of_models_hold_wire_values_not_enum_members():
    """Models parse states into enums; the frame must show (and group by) the wire value."""
    from svckit.queue import WorkflowRun

    run = WorkflowRun.model_validate(RUN)
    steps = frames.steps_frame(run)
    assert set(steps["state"].astype(str)) <= {"STEP_SUCCESS", "STEP_FAILED", "STEP_RETRY", "STEP_PROGRESS"}
    assert "STEP_SUCCESS" in steps["state"].cat.categories
    assert frames.runs_frame([run])["state"].tolist() == [RUN["workflowState"]]
