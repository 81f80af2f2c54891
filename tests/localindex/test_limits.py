"""The local index's limits, without HTTP: filter length and nesting, topK, batch size, resumable
queries (how many, how long idle); and the same refusals through LocalVector."""

from __future__ import annotations

import pytest

from svckit.errors import BadRequest
from svckit.localindex import FilterSyntaxError, InvalidRequest, LocalIndex, parse_filter
from svckit.localindex.limits import Limits
from svckit.vector import LocalVector

DIM = 4


def unit(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i % DIM] = 1.0
    return v


def index(**limits: int) -> LocalIndex:
    idx = LocalIndex(kind="dense", model=False, dimension=DIM, limits=Limits(**limits))
    idx.upsert([{"id": f"v{i}", "vector": unit(i), "metadata": {"n": i}} for i in range(8)])
    return idx


def nested(depth: int) -> str:
    return "(" * depth + "n = 1" + ")" * depth


def test_parentheses_nested_past_the_limit_are_a_syntax_error_not_a_crash():
    assert parse_filter(nested(64)) is not None
    with pytest.raises(FilterSyntaxError, match="deeper than 64 levels") as info:
        parse_filter(nested(330))  # where Python's recursion limit used to answer 500
    assert info.value.position == 64  # the first parenthesis past the limit
    with pytest.raises(FilterSyntaxError, match="deeper than 3 levels"):
        parse_filter(nested(4), Limits(max_filter_depth=3))


def test_a_filter_over_the_length_limit_is_refused_with_the_limit_and_a_short_message():
    long_filter = "n IN (" + ", ".join(["1"] * 9000) + ")"
    with pytest.raises(FilterSyntaxError, match="over the limit of 16384") as info:
        parse_filter(long_filter)
    assert len(str(info.value)) < 400  # the message shows the filter around the limit, not all of it
    assert parse_filter(long_filter, Limits(max_filter_length=len(long_filter))) is not None


def test_a_number_too_long_to_convert_is_a_syntax_error():
    with pytest.raises(FilterSyntaxError, match="number of 5000 digits"):
        parse_filter("n = " + "9" * 5000)


@pytest.mark.parametrize(("call", "words"), [
    (lambda ix: ix.query({"vector": unit(0), "topK": 6}, text=False), "topK: 6 is over the limit of 5"),
    (lambda ix: ix.query([{"vector": unit(0), "topK": 6}], text=False), "topK: 6 is over the limit of 5"),
    (lambda ix: ix.query([{"vector": unit(0)}] * 4, text=False), "4 is over the limit of 3 (the index's max_batch"),
    (lambda ix: ix.resumable_start({"vector": unit(0), "topK": 6}, text=False), "max_top_k"),
    (lambda ix: ix.resumable_start({"vector": unit(0), "maxIdle": 61}, text=False),
     "maxIdle: 61 is over the limit of 60"),
    (lambda ix: ix.query({"vector": unit(0), "filter": nested(3)}, text=False), "deeper than 2 levels"),
    (lambda ix: ix.delete(filter="n GLOB '" + "x" * 100 + "'"), "over the limit of 50"),
])
def test_requests_over_a_limit_are_refused_before_any_work(call, words):
    idx = index(max_top_k=5, max_batch=3, max_idle=60, max_filter_depth=2, max_filter_length=50)
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        call(idx)
    assert len(idx) == 8  # nothing was deleted
    assert len(idx.query({"vector": unit(0), "topK": 5}, text=False)) == 5  # at the limit is fine
    assert len(idx.query([{"vector": unit(0)}] * 3, text=False)) == 3


def test_additional_k_over_the_limit_is_refused_and_the_query_stays_usable():
    idx = index(max_top_k=5)
    started = idx.resumable_start({"vector": unit(0), "topK": 1}, text=False)
    with pytest.raises(InvalidRequest, match="additionalK: 6 is over the limit of 5"):
        idx.resumable_next({"uuid": started["uuid"], "additionalK": 6})
    assert len(idx.resumable_next({"uuid": started["uuid"], "additionalK": 5})) == 5


def test_resumable_queries_past_the_limit_are_refused_until_one_ends_or_expires():
    idx = index(max_resumable=2)
    now = [0.0]
    idx.clock = lambda: now[0]
    first = idx.resumable_start({"vector": unit(0), "maxIdle": 10}, text=False)
    idx.resumable_start({"vector": unit(1), "maxIdle": 100}, text=False)
    with pytest.raises(InvalidRequest, match="2 are open on this index, the limit of 2 .*resumable-query-end"):
        idx.resumable_start({"vector": unit(2)}, text=False)
    idx.resumable_end({"uuid": first["uuid"]})
    third = idx.resumable_start({"vector": unit(2), "maxIdle": 10}, text=False)
    with pytest.raises(InvalidRequest, match="the limit of 2"):
        idx.resumable_start({"vector": unit(3)}, text=False)
    now[0] += 11  # the third was idle longer than its maxIdle: it no longer counts
    idx.resumable_start({"vector": unit(3)}, text=False)
    with pytest.raises(InvalidRequest, match="not found"):
        idx.resumable_next({"uuid": third["uuid"]})


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="max_batch: must be a positive integer"):
        Limits(max_batch=0)


def test_local_vector_meets_the_same_limits_as_a_bad_request():
    client = LocalVector(index(max_top_k=5))
    with pytest.raises(BadRequest, match="topK: 6 is over the limit of 5"):
        client.query(unit(0), top_k=6)
    with pytest.raises(BadRequest, match="deeper than 64"):
        client.query(unit(0), top_k=5, filter=nested(65))
