"""One sandbox per data directory: an exclusive lock, held for the sandbox's life and by its Redis.

Two sandboxes on one data directory would each start a ``redis-server`` on the same socket and
append-only files, and write the same SQLite store and vector indexes. So a sandbox takes an exclusive
``flock`` on ``sandbox.lock`` in its data directory before it reads anything there, and keeps it until
it stops. The ``redis-server`` child it starts inherits that open lock (the same open file
description, :attr:`DataDirLock.fd`), so the directory stays held while either lives: a Redis that
outlived its sandbox still holds it. The kernel lets go of the lock when the last process holding it
exits, so a crash never leaves a stale lock behind, as a pid file would.

A start that finds it held waits a moment (a process just killed lets go as it exits), then refuses
with :class:`~svckit.errors.DataDirectoryInUse`, naming the processes that hold it (found in /proc on
Linux; elsewhere the pid the holding sandbox wrote in the file) and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from pathlib import Path

from svckit._files import FILE_MODE, NOFOLLOW
from svckit.errors import DataDirectoryInUse

try:
    import fcntl
except ImportError:  # Windows: no flock (nor a redis-server child); one sandbox per directory is then the user's care
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "sandbox.lock"
#: how long a start waits for a holder that is exiting (a sandbox just killed, its Redis dying with it)
WAIT = 5.0


class DataDirLock:
    """The exclusive lock of one data directory, held until :meth:`release`."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd: int | None = fd

    @property
    def fd(self) -> int | None:
        """The open lock, for a child process that must hold the directory too (``pass_fds``); None
        once released."""
        return self._fd

    @classmethod
    def acquire(cls, data_dir: Path, wait: float = WAIT) -> DataDirLock:
        path = data_dir / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, FILE_MODE)
        except OSError as exc:  # a read-only file system: the lock is taken on the file as it is, if any
            if exc.errno != errno.EROFS:
                raise
            try:
                fd = os.open(path, os.O_RDONLY | NOFOLLOW)
            except FileNotFoundError:  # nothing to lock; the first write the sandbox tries there says why
                return cls(path, None)
        try:
            deadline = time.monotonic() + wait
            while fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise DataDirectoryInUse(in_use(data_dir, path, fd)) from None
                    time.sleep(0.05)
            with contextlib.suppress(OSError):  # who holds it, for a start that finds it held (a hint only)
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def in_use(data_dir: Path, path: Path, fd: int) -> str:
    """What a start that found ``path`` (open as ``fd``) held says: who holds it and what to do."""
    holders = _holders(os.fstat(fd), fd)
    if holders:
        who = ", ".join(f"pid {pid} ({'this process' if pid == os.getpid() else name})" for pid, name in holders)
        pids = " ".join(str(pid) for pid, _ in holders if pid != os.getpid())
        stop = f"stop it (kill {pids}) and start again" if pids else "stop the other Sandbox in this process"
    else:
        written = os.pread(fd, 32, 0).decode(errors="replace").strip()
        who = f"the sandbox of pid {written}, or a redis-server it started" if written.isdigit() else "another process"
        stop = "stop it and start again"
    return (f"the data directory {data_dir} is in use: {path} is held by {who}. Another sandbox serves it, or a "
            f"redis-server that a sandbox started there outlived it; {stop}, or give this sandbox a data directory "
            "of its own (--data-dir, or Sandbox(data_dir=...))")


def _holders(target: os.stat_result, own_fd: int) -> list[tuple[int, str]]:
    """(pid, name) of the processes with ``target`` open (``own_fd``, this start's, aside), from /proc
    (Linux; others' processes are not readable, nor needed: the data directory is the user's own)."""
    found = []
    me = str(os.getpid())
    with contextlib.suppress(OSError):
        for pid in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    if pid == me and fd == str(own_fd):
                        continue
                    with contextlib.suppress(OSError):
                        st = os.stat(f"/proc/{pid}/fd/{fd}")
                        if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
                            found.append((int(pid), Path(f"/proc/{pid}/comm").read_text().strip()))
                            break
    return found
