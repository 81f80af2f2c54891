"""One error tree: the errors that lived beside their raisers are svckit.errors' own, under SvcError,
still caught as what they were caught as before (ValueError, RuntimeError), by their old names too."""

from __future__ import annotations

import pytest

from svckit import errors
from svckit._http import ApiRequest, StreamRefused, SyncTransport
from svckit.localindex import EmbeddingModelMissing, InvalidRequest
from svckit.localindex.request import UnknownName
from tests.faults import FaultServer


def test_old_names_are_the_tree_s_classes() -> None:
    assert StreamRefused is errors.StreamRefused
    assert InvalidRequest is errors.InvalidRequest
    assert EmbeddingModelMissing is errors.EmbeddingModelMissing


@pytest.mark.parametrize(("raised", "caught_before"), [
    (InvalidRequest("topK: must be a positive integer"), ValueError),
    (UnknownName("namespace 'x' not found"), ValueError),
    (EmbeddingModelMissing(), RuntimeError),
])
def test_local_index_errors_are_caught_as_before_and_as_svc_errors(raised: Exception, caught_before: type) -> None:
    for catch in (caught_before, errors.SvcError):
        with pytest.raises(catch):
            raise raised
    assert (InvalidRequest.status, UnknownName.status) == (400, 404)
    assert "embedding model" in str(EmbeddingModelMissing())


def test_a_refused_stream_is_an_svc_error_carrying_the_response() -> None:
    with FaultServer() as server:
        server.play("500")
        with SyncTransport(server.url) as t, pytest.raises(errors.SvcError) as info:
            t.stream_lines(ApiRequest("POST", "/monitor"))
    assert isinstance(info.value, StreamRefused)
    assert info.value.response.status_code == 500
