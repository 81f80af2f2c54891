"""What the vector area's tests over real HTTP share: one-hot vectors of the ``nomodel`` index
(``unit``), a POST to an index (``post``), and a filter held open from the inside (``in_filter``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from svckit.core.filter import Filter
from svckit.sandbox import Sandbox

DIM = 384


def unit(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i % DIM] = 1.0
    return v


def post(sandbox: Sandbox, index: str, path: str, body: Any, timeout: float = 60) -> httpx.Response:
    headers = {"Authorization": f"Bearer {sandbox.env['SVC_VECTOR_TOKEN']}"}
    return httpx.post(f"{sandbox.url}/vector/{index}{path}", json=body, headers=headers, timeout=timeout)


@pytest.fixture
def in_filter(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., dict[str, Any]]]:
    """Hold a filter open from the inside: ``in_filter(text, work, once=False)`` names the filter. Every
    record it judges is counted (``calls``); the first record a request's filter judges sets ``entered``,
    then ``work(original_matches, filter)`` runs over and over until ``release`` is set (``once``: one
    time), before that record is judged. Every other filter is judged as usual."""
    state: dict[str, Any] = {"text": None, "work": None, "once": False, "calls": 0, "held": [],
                             "entered": threading.Semaphore(0), "release": threading.Event()}
    original = Filter.matches

    def matches(self: Filter, metadata: Any) -> bool:
        if self.text != state["text"]:
            return original(self, metadata)
        state["calls"] += 1
        # each request parses its own Filter; `held` keeps those alive, so `is` tells them apart
        if any(f is self for f in state["held"]):
            return original(self, metadata)
        state["held"].append(self)
        state["entered"].release()
        if state["once"]:
            state["work"](original, self)
        while not state["once"] and not state["release"].is_set():
            state["work"](original, self)
        return original(self, metadata)

    def hold(text: str, work: Callable[[Any, Filter], Any] = lambda original, flt: state["release"].wait(60),
             once: bool = False) -> dict[str, Any]:
        state.update(text=text, work=work, once=once)
        return state

    monkeypatch.setattr(Filter, "matches", matches)
    yield hold
    state["release"].set()
