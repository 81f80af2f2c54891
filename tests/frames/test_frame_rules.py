"""The conversions frames make, as a notebook user reads them: a TTL in seconds or milliseconds
becomes ``ttl_s`` (whole seconds, rounded up as TTL does) and ``expires`` (a duration); errors and
missing values become NA; stream ids become UTC times; a limit reads as a person writes it."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from svckit import frames
from svckit.errors import CommandError
from svckit.kv import KeyScan
from svckit.kv.keyspace import KeyInfo


def test_a_ttl_in_seconds_is_milliseconds_in_the_frame():
    df = frames.keys_frame([{"key": "a", "ttl": 60}, {"key": "b", "ttl": 1}, {"key": "c", "ttl": 0}])
    assert df["ttl_s"].tolist() == [60, 1, 0]
    assert df["expires"].tolist() == [pd.Timedelta(seconds=60), pd.Timedelta(seconds=1), pd.Timedelta(0)]


def test_a_ttl_of_no_expiry_or_a_missing_key_has_none():
    df = frames.keys_frame([{"key": "a", "ttl": -1}, {"key": "b", "ttl": -2}, {"key": "c", "pttl": -1},
                            {"key": "d", "pttl": -2}, {"key": "e"}, {"key": "f", "ttl": None}])
    assert df["ttl_s"].isna().all() and df["expires"].isna().all()


def test_pttl_is_milliseconds_rounded_up_to_whole_seconds_and_wins_over_ttl():
    df = frames.keys_frame([{"key": "a", "pttl": 1}, {"key": "b", "pttl": 1000}, {"key": "c", "pttl": 1001},
                            {"key": "d", "pttl": 0}, {"key": "e", "pttl": 2500, "ttl": 99}])
    assert df["ttl_s"].tolist() == [1, 1, 2, 0, 3]
    assert df["expires"].tolist() == [pd.Timedelta(milliseconds=m) for m in (1, 1000, 1001, 0, 2500)]


def test_an_error_in_a_slot_is_na_and_a_ttl_stands_in_for_a_failed_pttl():
    df = frames.keys_frame([
        {"key": "a", "pttl": CommandError("boom"), "ttl": 5, "memory": CommandError("no"), "length": 3},
        {"key": "b", "pttl": CommandError("boom"), "ttl": CommandError("also"), "length": CommandError("x")},
    ])
    assert df.loc[0, "ttl_s"] == 5 and df.loc[0, "expires"] == pd.Timedelta(seconds=5)
    assert pd.isna(df.loc[1, "ttl_s"]) and pd.isna(df.loc[1, "expires"])
    assert pd.isna(df.loc[0, "memory_bytes"]) and df.loc[0, "length"] == 3 and pd.isna(df.loc[1, "length"])


def test_memory_and_length_are_integers():
    df = frames.keys_frame([{"key": "a", "memory": "56", "length": 2.0}, {"key": "b", "memory": 0, "length": 0}])
    assert df["memory_bytes"].tolist() == [56, 0] and df["length"].tolist() == [2, 0]
    assert str(df["memory_bytes"].dtype) == "Int64" and str(df["length"].dtype) == "Int64"


def test_key_info_rows_and_mixed_bare_keys():
    df = frames.keys_frame([KeyInfo("k", "hash", 3000, 64, 2), "bare"])
    assert df["key"].tolist() == ["k", "bare"] and df.loc[0, "ttl_s"] == 3 and df.loc[0, "memory_bytes"] == 64
    assert df.loc[0, "type"] == "hash" and pd.isna(df.loc[1, "type"]) and pd.isna(df.loc[1, "ttl_s"])


def test_a_scan_or_bare_keys_give_rows_with_empty_metadata():
    for given in (KeyScan("*", keys=["x", "y"]), ["x", "y"]):
        df = frames.keys_frame(given)
        assert df["key"].tolist() == ["x", "y"] and list(df.columns) == [
            "key", "type", "ttl_s", "expires", "memory_bytes", "length"]
        assert df[["type", "ttl_s", "expires", "memory_bytes", "length"]].isna().all().all()
        assert str(df["ttl_s"].dtype) == "Int64" and df["type"].cat.categories.tolist() == list(frames.KEY_TYPES)


def test_types_are_a_category_of_the_known_types_then_any_other_sorted():
    df = frames.keys_frame([{"key": "a", "type": "zz-module"}, {"key": "b", "type": "string"},
                            {"key": "c", "type": "aa-module"}, {"key": "d"}])
    assert df["type"].cat.categories.tolist() == [*frames.KEY_TYPES, "aa-module", "zz-module"]
    assert df["type"].tolist()[:3] == ["zz-module", "string", "aa-module"] and pd.isna(df.loc[3, "type"])


def test_stream_ids_become_utc_times_and_sequence_numbers():
    s = frames.value_frame("stream", [("1700000000000-7", {"f": "1"}), ("1700000000001", {"f": "2"}),
                                      ("not-an-id", {"f": "3"}), ("12-x", {"f": "4"})])
    assert s["time"].iloc[0] == pd.Timestamp(1700000000000, unit="ms", tz="UTC")
    assert s["time"].iloc[1] == pd.Timestamp(1700000000001, unit="ms", tz="UTC")
    assert s["seq"].tolist()[:2] == [7, 0]
    assert pd.isna(s["time"].iloc[2]) and pd.isna(s["seq"].iloc[2])
    assert pd.isna(s["time"].iloc[3]) and pd.isna(s["seq"].iloc[3])
    assert str(s["time"].dt.tz) == "UTC"


@pytest.mark.parametrize(("value", "unit", "text"), [
    (None, "bytes", "—"), (math.nan, "ms", "—"), (math.nan, "requests", "—"), ("", "", "—"),
    (True, "", "yes"), (False, "bytes", "no"),
    (1536, "bytes", "1.5 KiB"), (500, "ms", "500 ms"), (2500, "ms", "2.5 s"), (90, "s", "1 min 30 s"),
    (0, "unix s", "never"), (1700000000, "unix s", "2023-11-14 22:13 UTC"),
    (12.5, "USD", "$12.50"), (1234567, "USD", "$1,234,567.00"),
    (1234567, "requests", "1,234,567 requests"), (10000, "", "10,000"), (2.5, "GB", "2.5 GB"),
    ("pro", "plan", "pro"),
])
def test_a_limit_reads_as_a_person_writes_it(value, unit, text):
    assert frames.format_limit(value, unit) == text


def test_every_frame_of_keys_has_the_same_column_types_whatever_it_was_made_of():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a notebook shows no warning either
        made = [frames.keys_frame(["x", "y"]), frames.keys_frame(KeyScan("*", keys=["x"])),
                frames.keys_frame([{"key": "x"}, {"key": "y"}]),
                frames.keys_frame([{"key": "x", "pttl": 1500, "memory": 5, "length": 1}]),
                frames.keys_frame([{"key": "x", "ttl": 2}])]
    expected = {"key": "string", "ttl_s": "Int64", "expires": "timedelta64[us]", "memory_bytes": "Int64",
                "length": "Int64"}
    for df in made:
        assert {name: str(df[name].dtype) for name in expected} == expected
        assert isinstance(df["type"].dtype, pd.CategoricalDtype)
    assert made[4].loc[0, "expires"] == pd.Timedelta(seconds=2)


def test_a_limit_in_milliseconds_is_divided_by_a_thousand():
    assert frames.format_limit(1_000_000, "ms") == "16 min 40 s"


def test_run_states_are_a_category_of_their_wire_values():
    runs = frames.runs_frame([{"workflowRunId": "wfr_1", "workflowUrl": "https://x.test/a",
                               "workflowState": "RUN_SUCCESS", "workflowRunCreatedAt": 1700000000000},
                              {"workflowRunId": "wfr_2", "workflowUrl": "https://x.test/a",
                               "workflowState": "RUN_SOMETHING_NEW", "workflowRunCreatedAt": 1700000000001}])
    assert runs["state"].tolist() == ["RUN_SUCCESS", "RUN_SOMETHING_NEW"]
    assert runs["state"].cat.categories.tolist()[-1] == "RUN_SOMETHING_NEW"


def test_a_stream_id_is_its_exact_millisecond_even_beyond_float_precision():
    s = frames.value_frame("stream", [("9007199254740993-0", {"f": "1"}), ("5-1", {"f": "2"})])
    assert s["time"].iloc[0] == pd.Timestamp(9007199254740993, unit="ms", tz="UTC")  # 2**53 + 1 ms
