"""Files only their owner may read: created private (an explicit mode, never fixed afterwards, the
process umask left alone), for the sandbox's data directory (:mod:`svckit.sandbox.private`) and the
local index's store, which hold secrets and the user's data.

What is read back as a secret must be the user's own alone: a directory under /tmp may have been made
by another user, who could plant a ``credentials.json`` (its tokens would become the sandbox's) or a
symbolic link where a file is written (every token would go to the file it points at). So secrets are
read without following a symbolic link and only from a regular file the user owns that nobody else
may write (:func:`read_private`), and written through a temporary file of a random name, created new
(``O_EXCL``, no link followed), then renamed over the target (:func:`write_private`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from svckit.errors import UnsafePath

DIR_MODE = 0o700
FILE_MODE = 0o600
#: group or others may write: what another user could have changed
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
#: open flags that follow no symbolic link (none on Windows, whose files have no POSIX owner either)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def owner_uid() -> int:
    """The user whose files svckit trusts: this process's real user (a test makes it someone else);
    -1 where files have no POSIX owner (Windows), when no owner is checked."""
    return os.getuid() if hasattr(os, "getuid") else -1


def not_own(path: Path, st: os.stat_result) -> str | None:
    """Why ``path`` (its ``lstat``) is not the user's own alone, or None: another user owns it, group or
    others may write it (a symbolic link's own mode means nothing, its owner does)."""
    if owner_uid() != -1 and st.st_uid != owner_uid():
        return f"it belongs to another user (uid {st.st_uid}, not {owner_uid()})"
    if not stat.S_ISLNK(st.st_mode) and st.st_mode & OTHERS_WRITE:
        who = " and ".join(w for w, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if st.st_mode & bit)
        return f"{who} may write it (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) if needed; ``path`` itself is created 0700."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir(mode=DIR_MODE, exist_ok=True)
    return path


def create_private_file(path: Path) -> Path:
    """Create ``path`` empty with mode 0600 unless it exists (an empty file is a valid new SQLite
    database, so SQLite opens it instead of creating a file with the umask's mode; SQLite gives its
    WAL and shared-memory files the database file's mode)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    return path


def read_private(path: Path) -> str | None:
    """The text of ``path``, None when there is none. :class:`~svckit.errors.UnsafePath` when it is a
    symbolic link, not a regular file, or not the user's own alone (:func:`not_own`): what another user
    could have planted or changed is never taken for the user's secrets."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0))  # a planted FIFO never blocks
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise UnsafePath(f"refusing to read {path}: it is a symbolic link, where svckit keeps a file of "
                             f"its own; remove it (rm {path}), and check who made it", str(path)) from exc
        raise
    with os.fdopen(fd, encoding="utf-8") as fh:
        st = os.fstat(fh.fileno())
        why = "it is not a regular file" if not stat.S_ISREG(st.st_mode) else not_own(path, st)
        if why is not None:
            raise UnsafePath(f"refusing to read {path}: {why}; another user may have planted or changed it. "
                             f"Remove it if it is not yours, or make it yours alone (chmod 600 {path})", str(path))
        return fh.read()


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file beside it, on disk before a rename),
    created 0600. The temporary file has a random name and is created new, following no symbolic link
    (``tempfile.mkstemp``: ``O_CREAT | O_EXCL | O_NOFOLLOW``), so nothing planted beside ``path`` is
    written through; the rename replaces a link at ``path`` itself, never its target. When the disk
    refuses (full, read-only) the OSError is raised, ``path`` keeps what it held and no temporary file
    is left behind."""
    fd, name = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
