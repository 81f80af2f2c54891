"""The sandbox's log on stderr (``svckit sandbox``, ``svckit demo``, ``verbose=True``)."""

from __future__ import annotations

import io
import logging
import sys

import pytest

from svckit.sandbox import logs


@pytest.fixture
def restored():
    """The sandbox logger as it was: handlers and level."""
    handlers, level = list(logs.LOG.handlers), logs.LOG.level
    yield
    logs.LOG.handlers[:] = handlers
    logs.LOG.setLevel(level)


def test_lines_go_to_stderr_as_it_is_when_written_not_to_a_closed_one(restored, monkeypatch):
    # a notebook cell, or a test, whose stderr was captured when the log was switched on: that stream
    # is closed afterwards, and the sandbox's next line (from its own thread) goes to today's stderr
    then, now = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", then)
    logs.to_stderr()
    logs.to_stderr()  # idempotent: one handler, one copy of each line
    then.close()
    monkeypatch.setattr(sys, "stderr", now)
    logging.getLogger("svckit.sandbox.kv").warning("redis-server child pid %s exited", 42)
    assert now.getvalue() == "[svckit sandbox] redis-server child pid 42 exited\n"
