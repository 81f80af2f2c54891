"""The suite's heartbeat (tests/heartbeat.py): a line naming the running tests once none has finished
for a while, and no line while tests keep finishing."""

from __future__ import annotations

import pytest

from tests.conftest import eventually
from tests.heartbeat import Heartbeat, describe


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_line(self, line: str) -> None:
        self.lines.append(line)

    def flush(self) -> None:
        self.lines.append("<flushed>")


def test_the_line_names_each_running_test_longest_first_with_its_time() -> None:
    line = describe({"tests/a.py::fast": 100.0, "tests/b.py::browser": 10.0, "tests/c.py::new": 195.0}, now=200.0)
    assert line == "still running: tests/b.py::browser (3 min 10 s); tests/a.py::fast (1 min 40 s); tests/c.py::new (5 s)"


def test_a_quiet_spell_prints_the_running_tests_and_a_finished_test_ends_it() -> None:
    reporter = Lines()
    beat = Heartbeat(reporter, quiet_for=0.5)
    beat.thread.start()
    try:
        beat.pytest_runtest_logstart("tests/x.py::slow")
        def said() -> bool:
            last = reporter.lines[-2:]
            return len(last) == 2 and last[0].startswith("still running: tests/x.py::slow (") and last[1] == "<flushed>"

        eventually(said, "the heartbeat line, flushed", 10)
        beat.pytest_runtest_logreport(pytest.TestReport("tests/x.py::slow", ("x", 1, "slow"), {}, "passed",
                                                        None, "teardown"))
        seen = len(reporter.lines)
        beat.done.wait(1.5)
        assert len(reporter.lines) == seen  # nothing running: nothing to say
    finally:
        beat.done.set()
