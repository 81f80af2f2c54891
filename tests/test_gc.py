"""svckit._gc: the collector is paused while large replies are decoded, for every decode running at
once, and left as the user had it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from svckit._gc import collector_paused


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_paused_for_the_block_and_running_again_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("a decode that fails")
    assert gc.isenabled()


def test_decodes_side_by_side_keep_it_paused_until_the_last_ends() -> None:
    entered, release = threading.Event(), threading.Event()

    def long_decode() -> None:
        with collector_paused():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=long_decode)
    thread.start()
    assert entered.wait(10)
    with collector_paused():  # a second decode, begun and ended while the first runs
        assert not gc.isenabled()
    assert not gc.isenabled()
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()
