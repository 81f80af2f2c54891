"""One progress and cancel protocol for every long run: keyspace walks, bulk actions, keyspace
analysis, retrieval evaluation, paginated listings.

Every long function takes the same two arguments::

    progress=True        a tqdm bar (``tqdm.auto``) per phase
    progress=False       nothing
    progress=hook        ``hook(step)`` after every step, with a :class:`Progress` (what widgets pass)
    cancel=event         a ``threading.Event`` (or a callable returning True), checked between two
                         requests; what a cancelled run returns is said by each function

A function reports through one :class:`Reporter` (``with Reporter(progress) as report:
report("scan", done, total, unit="keys", note="1,234 matching")``), so a progress bar, a widget's
label and a test all read the same :class:`Progress`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

__all__ = ["Cancel", "Progress", "ProgressArg", "ProgressHook", "Reporter", "is_cancelled"]


@dataclass(frozen=True)
class Progress:
    """Where a long run is: ``done`` of ``total`` (None: not known in advance) ``unit`` in ``phase``,
    with an optional ``note`` a person reads beside the count (``"1,234 matching"``)."""

    phase: str
    done: int
    total: int | None = None
    unit: str = ""
    note: str = ""

    @property
    def fraction(self) -> float | None:
        """``done / total`` in 0..1, or None when the total is not known."""
        if not self.total:
            return None
        return min(max(self.done / self.total, 0.0), 1.0)

    def text(self) -> str:
        """One line: ``scan: 12,000 of 50,000 keys · 1,234 matching``."""
        unit = f" {self.unit}" if self.unit else ""
        count = f"{self.done:,} of {self.total:,}{unit}" if self.total is not None else f"{self.done:,}{unit}"
        return f"{self.phase}: {count}" + (f" · {self.note}" if self.note else "")


ProgressHook = Callable[[Progress], None]
#: True: a tqdm bar; False: none; a callable: called with every :class:`Progress`
ProgressArg = bool | ProgressHook
#: a ``threading.Event`` or a callable returning True once the run should stop; None: never
Cancel = threading.Event | Callable[[], bool] | None


def is_cancelled(cancel: Cancel) -> bool:
    """True once ``cancel`` asks the run to stop."""
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


class Reporter:
    """Turns a run's steps into what its caller asked for: tqdm bars (one per phase, the previous
    one closed when the phase changes), hook calls, or nothing. Use it as a context manager, so the
    bars close even when the run fails."""

    def __init__(self, progress: ProgressArg = True, *, desc: str = "") -> None:
        self._hook: ProgressHook | None = progress if callable(progress) else None
        self._bars = progress is True
        self._desc = desc
        self._bar: Any = None
        self._phase: str | None = None
        self.last: Progress | None = None

    def __call__(self, phase: str, done: int, total: int | None = None, *, unit: str = "",
                 note: str = "") -> None:
        step = Progress(phase, done, total, unit, note)
        self.last = step
        if self._hook is not None:
            self._hook(step)
        elif self._bars:
            self._draw(step)

    def _draw(self, step: Progress) -> None:
        if self._bar is None or step.phase != self._phase:
            self.close()
            from tqdm.auto import tqdm

            desc = f"{self._desc} {step.phase}".strip()
            unit = f" {step.unit}" if step.unit else "it"
            self._bar = tqdm(total=step.total, desc=desc, unit=unit, leave=False)
            self._phase = step.phase
        if step.total is not None and self._bar.total != step.total:
            self._bar.total = step.total
        self._bar.n = step.done
        if step.note:
            self._bar.set_postfix_str(step.note, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            self._phase = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
