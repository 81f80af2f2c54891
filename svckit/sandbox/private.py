"""The data directory is private: the directory 0700 and everything in it 0600 (directories 0700).

It holds every secret of the sandbox (``credentials.json``, the queue token and signing password in
``state.sqlite3``, the key-value ACL tokens) and every stored value. Files are *created* private, with
an explicit mode (:mod:`svckit._files`), rather than fixed afterwards, and without touching the
process umask: a
:class:`~svckit.sandbox.Sandbox` runs inside a user's notebook kernel, where a umask change would
reach every other file the kernel writes. (``svckit sandbox``, a process of its own, also sets umask
077, so what other code in it creates, such as the redis child's files, is private too.)

A data directory another user could have written is refused before anything in it is read
(:func:`refuse_unsafe`): one under /tmp made by someone else, or left open to others' writes, may hold
a planted ``credentials.json`` (whose tokens the sandbox would serve) or a symbolic link where the
sandbox writes (every token would go where it points). Nothing is fixed for the user there, since what
was planted would stay: the message says why and what to do.

A directory of the user's own that others could only read (made by an older version, or by hand) is
tightened when a sandbox starts: :func:`tighten` removes group and other access from it and from
everything below it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from svckit import _files
from svckit.errors import UnsafePath

_OTHERS = stat.S_IRWXG | stat.S_IRWXO


def refuse_unsafe(root: Path) -> None:
    """Raise :class:`~svckit.errors.UnsafePath` when ``root``, or anything below it, belongs to another
    user or may be written by group or others (:func:`svckit._files.not_own`); symbolic links are not
    followed (one of another user's is refused, one of the user's own is the user's choice)."""
    for path in _walk(root):
        try:
            st = path.lstat()
        except FileNotFoundError:  # gone meanwhile (a live sandbox's temporary file): nothing to read
            continue
        why = _files.not_own(path, st)
        if why is None:
            continue
        where = "" if path == root else f"{path.relative_to(root)}, in it: "
        if _files.owner_uid() != -1 and st.st_uid != _files.owner_uid():  # the user cannot change another's: only another directory helps
            fix = "use a directory of your own instead (--data-dir, or Sandbox(data_dir=...))"
        else:
            fix = (f"use a directory of your own instead, or, if everything in it is yours, remove the others' "
                   f"write access (chmod -R go-w {root})")
        raise UnsafePath(f"refusing the data directory {root}: {where}{why}, so another user may have planted "
                         f"or changed what the sandbox would read there (its tokens among them); {fix}", str(path))


def _walk(root: Path) -> list[Path]:
    """``root`` and every path below it, without following symbolic links."""
    found = [root]
    for top, dirs, files in os.walk(root):
        found += [Path(top, name) for name in (*dirs, *files)]
    return found


def tighten(root: Path) -> list[Path]:
    """Remove group and other access from ``root`` and everything below it (symbolic links are left
    alone, and not followed); returns the paths changed. Run after :func:`refuse_unsafe`, so every path
    is the user's own; one that cannot be changed meanwhile is skipped (the 0700 directory above it
    still keeps others out)."""
    changed = []
    for path in _walk(root):
        try:
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) or not mode & _OTHERS:
                continue
            path.chmod(stat.S_IMODE(mode) & ~_OTHERS)
        except OSError:
            continue
        changed.append(path)
    return changed
