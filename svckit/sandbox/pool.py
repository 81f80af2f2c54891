"""The workflow runner's bounded pool: at most ``size`` tasks run at once, each on a worker thread;
the others wait their turn, first in, first out.

Why not ``concurrent.futures.ThreadPoolExecutor``: its workers are not daemon threads, and the
interpreter joins them at exit. A workflow step is user code that cannot be interrupted, so one
blocked step would keep a notebook kernel, or ``svckit sandbox``, from exiting. These workers are
daemon threads, as the runner's threads have always been.

Two queues: *urgent* tasks (the branches of a parallel group, whose run already holds a worker)
start before the runs that wait, so a run that has started finishes before new ones start. A task
that waits for another (a run for its branches) calls :meth:`Task.join`, which runs that task on the
waiting thread itself when no worker has taken it yet. So a run never waits for a worker that it
holds itself, and the pool cannot deadlock however busy it is.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

WAITING, RUNNING, DROPPED = "waiting", "running", "dropped"


class Task:
    """One call waiting for, or running on, a :class:`WorkerPool`."""

    def __init__(self, pool: WorkerPool, fn: Callable[[], Any], urgent: bool) -> None:
        self._pool, self._fn, self.urgent = pool, fn, urgent
        self.state = WAITING
        self._done = threading.Event()

    def cancel(self) -> bool:
        """Drop the task if no worker has started it; True when dropped (it will never run)."""
        if not self._pool._take(self, DROPPED):
            return False
        self._done.set()
        return True

    def join(self) -> None:
        """Wait until the task has run: run it on this thread if no worker has started it yet."""
        if self._pool._take(self, RUNNING):
            self._run()
        else:
            self._done.wait()

    def _run(self) -> None:
        try:
            self._fn()
        finally:
            self._done.set()


class WorkerPool:
    """At most ``size`` daemon worker threads, started as tasks arrive (module docstring)."""

    def __init__(self, size: int, name: str) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least 1 worker, got {size}")
        self.size, self.name = size, name
        self._cond = threading.Condition()
        self._queues: dict[bool, deque[Task]] = {True: deque(), False: deque()}  # urgent -> tasks
        self._threads = 0
        self._idle = 0
        self._closed = False

    @property
    def threads(self) -> int:
        """Worker threads started and not yet ended (never more than ``size``)."""
        return self._threads

    def submit(self, fn: Callable[[], Any], *, urgent: bool = False) -> Task:
        """Queue ``fn`` (``urgent``: before every non-urgent task); a worker runs it when one is free."""
        task = Task(self, fn, urgent)
        with self._cond:
            self._queues[urgent].append(task)
            waiting = len(self._queues[True]) + len(self._queues[False])
            if waiting > self._idle and self._threads < self.size:
                self._threads += 1
                threading.Thread(target=self._work, name=f"{self.name}-{self._threads}", daemon=True).start()
            self._cond.notify()
        return task

    def close(self) -> None:
        """Start no more threads once the queues are empty; workers finish their task and exit. Does
        not wait (a task may block). Tasks submitted later still run (:meth:`Task.join` takes them)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _take(self, task: Task, state: str) -> bool:
        with self._cond:
            if task.state != WAITING:
                return False
            self._queues[task.urgent].remove(task)
            task.state = state
            return True

    def _work(self) -> None:
        while True:
            with self._cond:
                while not (self._queues[True] or self._queues[False]):
                    if self._closed:
                        self._threads -= 1
                        return
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                task = (self._queues[True] or self._queues[False]).popleft()
                task.state = RUNNING
            try:
                task._run()
            except BaseException as exc:  # noqa: BLE001 - a task's own error handling failed; the worker carries on
                log.warning("%s: a task failed: %s: %s", self.name, type(exc).__name__, exc)
