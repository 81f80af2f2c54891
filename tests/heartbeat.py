"""A line on the terminal when no test has finished for a while: which tests are running, and for how
long. A browser test that runs a notebook for minutes otherwise looks like a hung run.

A pytest plugin (``pytest_plugins`` in tests/conftest.py), active in the process that reports: the
only process with ``-n 0``, the controller with pytest-xdist, which hears of every test a worker
starts (``pytest_runtest_logstart``) and finishes (``pytest_runtest_logreport``).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

#: seconds without a finished test before the first line, and between lines
QUIET_FOR = 60.0


def describe(running: dict[str, float], now: float) -> str:
    """The heartbeat line: the tests running, the longest first, each with its time so far."""
    longest = sorted(running.items(), key=lambda item: item[1])
    parts = [f"{nodeid} ({_duration(now - started)})" for nodeid, started in longest]
    return "still running: " + "; ".join(parts)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


class Heartbeat:
    def __init__(self, reporter: Any, quiet_for: float = QUIET_FOR) -> None:
        self.reporter, self.quiet_for = reporter, quiet_for
        self.running: dict[str, float] = {}
        self.last = time.monotonic()
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="test-heartbeat", daemon=True)

    @pytest.hookimpl
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        with self.lock:
            self.running[nodeid] = time.monotonic()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            with self.lock:
                self.running.pop(report.nodeid, None)
                self.last = time.monotonic()

    def _beat(self) -> None:
        while not self.done.wait(1.0):
            now = time.monotonic()
            with self.lock:
                if not self.running or now - self.last < self.quiet_for:
                    continue
                self.last = now  # the next line after another quiet spell
                line = describe(self.running, now)
            self.reporter.write_line("")
            self.reporter.write_line(line)
            self.reporter.flush()  # now, not with the next test's dot (a file or a pipe buffers)


def pytest_configure(config: pytest.Config) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or hasattr(config, "workerinput"):  # an xdist worker: its controller reports
        return
    heartbeat = Heartbeat(reporter)
    config.pluginmanager.register(heartbeat, "svckit-heartbeat")
    heartbeat.thread.start()
    config.add_cleanup(heartbeat.done.set)
