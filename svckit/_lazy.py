"""Lazy package exports (PEP 562): a package's public names are imported the first time one is asked for.

So ``import svckit.queue.models`` (what the sandbox needs) loads the models only, not the queue client,
the transport, httpx and aiohttp that ``svckit.queue`` re-exports; ``from svckit.queue import Queue``
works as before. The package writes its exports once, as ordinary imports under ``if TYPE_CHECKING:``
(so type checkers and editors see every name with its type), and hands its file to
:func:`lazy_exports`, which reads those imports from the source instead of running them::

    from typing import TYPE_CHECKING

    from svckit._lazy import lazy_exports

    if TYPE_CHECKING:
        from svckit.queue.client import AsyncQueue, Queue

    __getattr__, __dir__ = lazy_exports(__name__, __file__)
    __all__ = ["AsyncQueue", "Queue"]
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def exports_of(source: str) -> dict[str, tuple[str, str]]:
    """``{exported name: (module, name in that module)}`` from the ``from m import a [as b]``
    statements under the source's ``if TYPE_CHECKING:``."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module and statement.level == 0:
                    for alias in statement.names:
                        found[alias.asname or alias.name] = (statement.module, alias.name)
    return found


def lazy_exports(package: str, file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (its ``__init__.py`` is ``file``).
    A name is imported from its module on first use and kept in the package's namespace, so the
    next lookup is an ordinary attribute read."""
    where = exports_of(Path(file).read_text(encoding="utf-8"))

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = where[name]
        value = getattr(importlib.import_module(module), attribute)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
