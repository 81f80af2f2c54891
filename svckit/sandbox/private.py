"""The data directory is private: the directory 0700 and everything in it 0600 (directories 0700).

It holds every secret of the sandbox (``credentials.json``, the queue token and signing password in
``state.sqlite3``, the key-value ACL tokens) and every stored value. Files are *created* private, with
an explicit mode (:mod:`svckit._files`), rather than fixed afterwards, and without touching the
process umask: a
:class:`~svckit.sandbox.Sandbox` runs inside a user's notebook kernel, where a umask change would
reach every other file the kernel writes. (``svckit sandbox``, a process of its own, also sets umask
077, so what other code in it creates, such as the redis child's files, is private too.)

A directory made by an older version, or by hand, is tightened when a sandbox starts: :func:`tighten`
removes group and other access from it and from everything below it.
"""

from __future__ import annotations

import stat
from pathlib import Path

_OTHERS = stat.S_IRWXG | stat.S_IRWXO


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
