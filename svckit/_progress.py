"""One progress and cancel protocol for every long run: keyspace walks, bulk actions, keyspace
analysis, retrieval evaluation, the MONITOR profile, and every listing that follows cursors (the
one cursor loop, :mod:`svckit._cursor`).

Every long function takes the same two arguments::

    progress=True        a tqdm bar (``tqdm.auto``) per phase
    progress=False       nothing
    progress=hook        ``hook(step)`` after every step, with a :class:`Progress` (what widgets pass)
    cancel=event         a ``threading.Event`` (or a callable returning True), checked between two
                         requests

One outcome for a cancelled run, so nothing it did is lost: it stops at its next check (the requests
already sent finish), raises nothing, and returns what it has, marked ``cancelled``:

- an ``iter_*`` listing or :func:`~svckit.kv.walk_keys` simply stops; the :class:`~svckit._cursor.Run`
  it returned says ``run.cancelled`` (``KeyScan.cancelled`` too, for a walk);
- a bulk action's ``BulkSummary.cancelled``; a keyspace analysis' ``KeyspaceReport.cancelled`` (its
  figures cover the keys reached before the cancel); a MONITOR profile's ``MonitorProfile.cancelled``;
- a function that returns a DataFrame (a retrieval evaluation) says it in ``frame.attrs["cancelled"]``.

A function reports through one :class:`Reporter` (``with Reporter(progress) as report:
report("scan", done, total, unit="keys", note="1,234 matching", round_trips=12)``), so a progress
bar, a widget's label and a test all read the same :class:`Progress`. Far from the service what a
long run costs is its requests, so a run says how many it has made (``round_trips``), and the
reporter adds the time left at the rate so far (``eta``) once the total is known.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from svckit._units import duration_text, plural

__all__ = ["Cancel", "Progress", "ProgressArg", "ProgressHook", "Reporter", "is_cancelled"]


@dataclass(frozen=True)
class Progress:
    """Where a long run is: ``done`` of ``total`` (None: not known in advance) ``unit`` in ``phase``,
    with an optional ``note`` a person reads beside the count (``"1,234 matching"``), the requests
    the run has made (``round_trips``, None: not counted) and the seconds it should still take at
    its rate so far (``eta``, None until there is a total and a rate)."""

    phase: str
    done: int
    total: int | None = None
    unit: str = ""
    note: str = ""
    round_trips: int | None = None
    eta: float | None = field(default=None, compare=False)  # a clock's reading, not the run's state

    @property
    def fraction(self) -> float | None:
        """``done / total`` in 0..1, or None when the total is not known."""
        if not self.total:
            return None
        return min(max(self.done / self.total, 0.0), 1.0)

    def text(self) -> str:
        """One line: ``scan: 12,000 of 50,000 keys · 1,234 matching · 13 round trips · 4 s left``."""
        unit = f" {self.unit}" if self.unit else ""
        count = f"{self.done:,} of {self.total:,}{unit}" if self.total is not None else f"{self.done:,}{unit}"
        return f"{self.phase}: {count}" + "".join(f" · {part}" for part in self.notes())

    def notes(self, *, time_left: bool = True) -> list[str]:
        """What a bar shows beside its count: the note, the round trips, the time left (unless
        ``time_left=False``: a tqdm bar draws its own)."""
        parts = [self.note] if self.note else []
        if self.round_trips is not None:
            parts.append(plural(self.round_trips, "round trip"))
        if self.eta is not None and time_left:
            parts.append(f"{duration_text(max(self.eta, 0.0))} left")
        return parts


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


def _finished_text(bar: Any) -> str:
    """What a closed progress bar leaves in a notebook: ``evaluate: 8 of 8 batches in 2.4 s``."""
    done = f"{bar.n:,}" + (f" of {bar.total:,}" if bar.total else "")
    return f"{bar.desc}: {done}{bar.unit if bar.unit != 'it' else ''} in {duration_text(bar.format_dict['elapsed'])}"


class Reporter:
    """Turns a run's steps into what its caller asked for: tqdm bars (one per phase, the previous
    one closed when the phase changes), hook calls, or nothing. Use it as a context manager, so the
    bars close even when the run fails."""

    def __init__(self, progress: ProgressArg = True, *, desc: str = "") -> None:
        self._hook: ProgressHook | None = progress if callable(progress) else None
        self._bars = progress is True
        self._desc = desc
        self._bar: Any = None
        self._shown: Any = None  # the notebook output of a widget bar (an IPython DisplayHandle)
        self._phase: str | None = None
        self._started = time.monotonic()
        self.last: Progress | None = None

    def __call__(self, phase: str, done: int, total: int | None = None, *, unit: str = "",
                 note: str = "", round_trips: int | None = None) -> None:
        if self.last is None or phase != self.last.phase:
            self._started = time.monotonic()  # each phase has its own rate
        step = Progress(phase, done, total, unit, note, round_trips, self._eta(done, total))
        self.last = step
        if self._hook is not None:
            self._hook(step)
        elif self._bars:
            self._draw(step)

    def _eta(self, done: int, total: int | None) -> float | None:
        if total is None or done <= 0:
            return None
        return (time.monotonic() - self._started) / done * max(total - done, 0)

    def _draw(self, step: Progress) -> None:
        if self._bar is None or step.phase != self._phase:
            self.close()
            from tqdm.auto import tqdm
            from tqdm.notebook import tqdm as notebook_tqdm

            desc = f"{self._desc} {step.phase}".strip()
            unit = f" {step.unit}" if step.unit else "it"
            if issubclass(tqdm, notebook_tqdm):  # a widget: shown here, to be replaced by a line of text
                from IPython.display import display

                self._bar = tqdm(total=step.total, desc=desc, unit=unit, leave=False, display=False)
                self._shown = display(self._bar.container, display_id=True)
            else:
                self._bar = tqdm(total=step.total, desc=desc, unit=unit, leave=False)
            self._phase = step.phase
        if step.total is not None and self._bar.total != step.total:
            self._bar.total = step.total
        self._bar.n = step.done
        if notes := step.notes(time_left=False):
            self._bar.set_postfix_str(" · ".join(notes), refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            bar, self._bar, self._phase = self._bar, None, None
            bar.close()
            if self._shown is not None:
                # a closed widget would read "Loading widget..." in the saved notebook: a line instead
                self._shown.update({"text/plain": _finished_text(bar)}, raw=True)
                self._shown = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
