"""The sandbox's log: one ``logging`` tree under ``svckit.sandbox`` (each module logs to its own
``logging.getLogger(__name__)``).

Start-up lines are INFO and warnings are WARNING. Python prints nothing below WARNING until someone
configures logging, so a sandbox started inside a notebook kernel is quiet. ``svckit sandbox``,
``svckit demo`` and ``notebook_clients(verbose=True)`` show the log on stderr with :func:`to_stderr`.
:func:`recording` keeps the lines of one start, so the notebook's status line can fold them away.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

LOG = logging.getLogger("svckit.sandbox")
PREFIX = "[svckit sandbox] "


class _ToStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler :func:`to_stderr` adds (a class of its own, so it is added once). Its stream is
    ``sys.stderr`` as it is when a line is written: a stream captured or redirected when the handler
    was added, and closed since, is never written to."""

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass  # StreamHandler.__init__ sets it; the property stands for it


def to_stderr(level: int = logging.INFO) -> None:
    """Show the sandbox's log on stderr, each line prefixed ``[svckit sandbox]`` (idempotent).

    Writes to whatever ``sys.stderr`` is when a line is logged, so a redirected or captured stderr
    gets the lines."""
    if not any(isinstance(h, _ToStderr) for h in LOG.handlers):
        handler = _ToStderr()
        handler.setFormatter(logging.Formatter(PREFIX + "%(message)s"))
        LOG.addHandler(handler)
    LOG.setLevel(level)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def recording() -> Iterator[list[str]]:
    """The INFO and higher lines the sandbox logs inside the ``with`` block, as a list filled as they
    come. The logger's level is lowered to INFO only for the block, so a user's own logging set-up
    does not start showing the sandbox's INFO lines afterwards."""
    handler = _Lines()
    level = LOG.level
    if not LOG.isEnabledFor(logging.INFO):
        LOG.setLevel(logging.INFO)
    LOG.addHandler(handler)
    try:
        yield handler.lines
    finally:
        LOG.removeHandler(handler)
        LOG.setLevel(level)
