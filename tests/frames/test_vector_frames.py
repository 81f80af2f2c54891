"""svckit.frames over every vector data API result: range pages, fetch lists, resumable first pages
and per-namespace info (models as the clients return them, and wire dicts as the local index does)."""

from __future__ import annotations

import pandas as pd

from svckit import frames
from svckit.vector import IndexInfo, RangeResult, ResumableQueryResult, VectorRecord


def test_records_frame_from_a_range_page_and_from_fetch_with_missing_ids():
    page = RangeResult.model_validate({"nextCursor": "c", "vectors": [
        {"id": "a", "vector": [0.1, 0.2], "metadata": {"genre": "news", "info": {"lang": "en"}}, "data": "text a"},
        {"id": "b", "sparseVector": {"indices": [3], "values": [0.5]}},
    ]})
    df = frames.records_frame(page)
    assert df.columns[:5].tolist() == ["id", "data", "vector", "sparse_indices", "sparse_values"]
    assert df["id"].tolist() == ["a", "b"] and df["data"].iloc[0] == "text a"
    assert df["metadata.info.lang"].iloc[0] == "en" and pd.isna(df["metadata.genre"].iloc[1])
    assert df["sparse_values"].iloc[1] == [0.5] and df["vector"].iloc[0] == [0.1, 0.2]
    fetched = [VectorRecord(id="x"), None, {"id": "y", "metadata": {"k": 1}}]
    assert frames.records_frame(fetched)["id"].tolist() == ["x", "y"]
    assert frames.records_frame(iter([])).empty


def test_query_frame_of_a_resumable_query_first_page():
    first = ResumableQueryResult.model_validate({"uuid": "u", "scores": [{"id": "a", "score": 0.9},
                                                                          {"id": "b", "score": 0.4}]})
    df = frames.query_frame(first)
    assert df[["rank", "id", "score"]].values.tolist() == [[1, "a", 0.9], [2, "b", 0.4]]  # ranks from 1, as the widgets


def test_namespaces_frame_lists_the_default_namespace_first():
    info = IndexInfo.model_validate({"vectorCount": 5, "namespaces": {
        "news": {"vectorCount": 3, "pendingVectorCount": 1}, "": {"vectorCount": 2, "pendingVectorCount": 0}}})
    df = frames.namespaces_frame(info)
    assert df.values.tolist() == [["", 2, 0], ["news", 3, 1]]
    assert str(df["vector_count"].dtype) == "Int64"
    wire = frames.namespaces_frame({"namespaces": {"a": {"vectorCount": 1}}})
    assert wire.values.tolist() == [["a", 1, 0]]
