"""The data directory is private: the directory 0700 and everything in it 0600 (directories 0700).

It holds every secret of the sandbox (``credentials.json``, the queue token and signing password in
``state.sqlite3``, the key-value ACL tokens) and every stored value. Files are *created* private, with
an explicit mode, rather than fixed afterwards, and without touching the process umask: a
:class:`~svckit.sandbox.Sandbox` runs inside a user's notebook kernel, where a umask change would
reach every other file the kernel writes. (``svckit sandbox``, a process of its own, also sets umask
077, so what other code in it creates, such as the redis child's files, is private too.)

A directory made by an older version, or by hand, is tightened when a sandbox starts: :func:`tighten`
removes group and other access from it and from everything below it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


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


def tighten(root: Path) -> list[Path]:
    """Remove group and other access from ``root`` and everything below it (symbolic links are left
    alone, and not followed); returns the paths changed. A path that cannot be changed (another
    owner) is skipped: the 0700 directory above it still keeps others out."""
    changed = []
    for path in [root, *root.rglob("*")]:
        try:
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) or not mode & _OTHERS:
                continue
            path.chmod(stat.S_IMODE(mode) & ~_OTHERS)
        except OSError:
            continue
        changed.append(path)
    return changed
