"""Files only their owner may read: created private (an explicit mode, never fixed afterwards, the
process umask left alone), for the sandbox's data directory (:mod:`svckit.sandbox.private`) and the
local index's store, which hold secrets and the user's data."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


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


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file beside it, on disk before a rename),
    created 0600. When the disk refuses (full, read-only) the OSError is raised, ``path`` keeps what
    it held and no temporary file is left behind."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
