"""When a file system refuses a write: the one place where an OSError or sqlite3 error caused by the
disk (full, read-only, over a quota, failing) becomes a :class:`~svckit.errors.DiskError` that names
the file and says what to do; and the probe with which the sandbox's health checks ask whether a
directory takes writes now.

The stores that raise it (the sandbox's SQLite store, a local index's) undo the write first, so the
message can promise that nothing of it was kept, and the next write goes through on the same
connection once space is back or the file system writable again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

from svckit.errors import DiskError

#: why the file system refused -> what the user reads after "could not write <path>: "
_ADVICE = {
    "full": "the file system is full; free space there and retry",
    "quota": "the disk quota there is used up; free space or raise the quota, and retry",
    "read-only": "the file system is read-only; remount it read-write and retry",
    "failing": "the file system failed the write (an I/O error); check the disk and retry",
}
_BY_ERRNO = {errno.ENOSPC: "full", errno.EDQUOT: "quota", errno.EROFS: "read-only", errno.EIO: "failing"}
#: SQLite's primary result codes; an extended one's name starts with its primary's (SQLITE_IOERR_WRITE)
_BY_SQLITE = {"SQLITE_FULL": "full", "SQLITE_READONLY": "read-only", "SQLITE_IOERR": "failing"}


def _cause(exc: BaseException, path: Path) -> str | None:
    """Why the disk refused to write ``path``, or None when ``exc`` is not the disk's doing."""
    if isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", None) or ""
        cause = next((why for code, why in _BY_SQLITE.items() if name.startswith(code)), None)
    elif isinstance(exc, OSError):
        cause = _BY_ERRNO.get(exc.errno or 0)
    else:
        return None
    if cause != "failing":
        return cause
    # SQLite reports some of what the OS called ENOSPC or EROFS as an I/O error: ask the file system
    with contextlib.suppress(OSError):
        fs = os.statvfs(path.parent)
        if fs.f_flag & os.ST_RDONLY:
            return "read-only"
        if fs.f_bavail == 0:
            return "full"
    return cause


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Let through what the block raises, except that the disk's refusal to write ``path`` becomes a
    DiskError naming it (the caller has undone the write by then: "nothing of it was kept")."""
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        cause = None if isinstance(exc, DiskError) else _cause(exc, path)
        if cause is None:
            raise
        raise DiskError(f"could not write {path}: {_ADVICE[cause]} (nothing of this write was kept)",
                        str(path)) from exc


def probe(path: Path) -> tuple[bool, str]:
    """Whether writes to ``path`` (a directory, or a file in one) go through now, and in a few words
    for a person the free space there, or why not. A one-byte file is made there and removed, so a
    full file system shows, not only a read-only one; it waits for the disk, so an event loop calls
    it in a thread."""
    directory = path if path.is_dir() else path.parent
    try:
        fd, name = tempfile.mkstemp(prefix=".probe-", dir=directory)
        try:
            os.write(fd, b"\0")
        finally:
            os.close(fd)
            os.unlink(name)
        fs = os.statvfs(directory)
    except OSError as exc:
        cause = _cause(exc, directory / ".probe")
        return False, _ADVICE[cause] if cause else f"not writable: {exc.strerror or exc}"
    return True, f"writable, {fs.f_bavail * fs.f_frsize / 2**20:,.1f} MiB free"
