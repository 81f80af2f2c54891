"""Vector query options are refused before any request is sent, with an InvalidArgument naming the
argument. Pure: the client's transport fails the test if it is used."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from svckit.errors import InvalidArgument
from svckit.vector import Vector
from svckit.vector.protocol import build_query


def _refuse(request: httpx.Request) -> httpx.Response:
    pytest.fail(f"a request was sent: {request.method} {request.url}")


@pytest.fixture
def vector() -> Iterator[Vector]:
    client = Vector("http://127.0.0.1:9", "test-token-0000", transport=httpx.MockTransport(_refuse))
    yield client
    client.close()


@pytest.mark.parametrize(("kwargs", "argument"), [
    ({"query_mode": "FUZZY"}, "query_mode"),
    ({"query_mode": 1}, "query_mode"),
    ({"fusion_algorithm": "MAX"}, "fusion_algorithm"),
    ({"fusion_algorithm": True}, "fusion_algorithm"),
    ({"weighting_strategy": "BM25"}, "weighting_strategy"),
    ({"include_metadata": "yes"}, "include_metadata"),
    ({"include_vectors": 1}, "include_vectors"),
    ({"include_data": "no"}, "include_data"),
    ({"filter": 5}, "filter"),
    ({"filter": {"animal": "cat"}}, "filter"),
    ({"top_k": 0}, "top_k"),
])
def test_query_options_refused_before_sending(vector: Vector, kwargs: dict[str, Any], argument: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        vector.query_data("cats", **kwargs)
    assert info.value.argument == argument


def test_options_inside_a_query_object_are_checked_too(vector: Vector) -> None:
    with pytest.raises(InvalidArgument) as info:
        vector.query_data([{"data": "a"}, {"data": "b", "queryMode": "NEAREST"}])
    assert info.value.argument == "query_mode"


def test_fetch_booleans_refused_before_sending(vector: Vector) -> None:
    with pytest.raises(InvalidArgument) as info:
        vector.fetch("a", include_vectors="yes")  # type: ignore[arg-type]
    assert info.value.argument == "include_vectors"


@pytest.mark.parametrize(("name", "wire", "given", "sent"), [
    ("query_mode", "queryMode", "DENSE", "DENSE"),
    ("query_mode", "queryMode", "sparse", "SPARSE"),
    ("fusion_algorithm", "fusionAlgorithm", "DBSF", "DBSF"),
    ("fusion_algorithm", "fusionAlgorithm", "rrf", "RRF"),
    ("weighting_strategy", "weightingStrategy", "IDF", "IDF"),
])
def test_valid_enums_are_sent_upper_case(name: str, wire: str, given: str, sent: str) -> None:
    request, _ = build_query("cats", top_k=3, **{name: given})
    assert request.json[wire] == sent
