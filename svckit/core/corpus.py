"""The demo corpus: real English text that ships with every Python, so it is available offline.

Two sources:
- ``pydoc_data.topics``: the language reference topics behind ``help("with")`` and friends, split into
  passages of at most :data:`PASSAGE_CHARS` characters at paragraph boundaries;
- the docstrings of a fixed list of standard-library modules and of the public functions and classes
  they define (:data:`MODULES`).

Each item is ``{"id", "data", "metadata"}`` ready for ``upsert_data``; the order and ids are
deterministic for a given Python version. :func:`docstring_pairs` gives (summary line, body) pairs
from the same docstrings, which bench/vector_bench.py uses as labelled queries.
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PASSAGE_CHARS = 1200
DOCSTRING_CHARS = 2000

#: Standard-library modules whose docstrings make up the corpus (importing them has no side effects).
MODULES = (
    "abc", "argparse", "array", "ast", "asyncio", "base64", "bisect", "bz2", "calendar", "cmath",
    "codecs", "collections", "colorsys", "concurrent.futures", "configparser", "contextlib", "copy",
    "csv", "dataclasses", "datetime", "decimal", "difflib", "dis", "email.message", "enum",
    "filecmp", "fnmatch", "fractions", "ftplib", "functools", "getpass", "gettext", "glob", "graphlib",
    "gzip", "hashlib", "heapq", "hmac", "html", "html.parser", "http.client", "http.cookies",
    "http.server", "imaplib", "inspect", "io", "ipaddress", "itertools", "json", "keyword",
    "linecache", "locale", "logging", "logging.handlers", "lzma", "mailbox", "math", "mimetypes",
    "multiprocessing", "numbers", "operator", "os", "os.path", "pathlib", "pickle", "pkgutil",
    "platform", "plistlib", "poplib", "pprint", "profile", "pstats", "queue", "quopri", "random",
    "re", "reprlib", "sched", "secrets", "selectors", "shelve", "shlex", "shutil", "signal",
    "smtplib", "socket", "socketserver", "sqlite3", "ssl", "statistics", "string", "struct",
    "subprocess", "symtable", "sysconfig", "tarfile", "tempfile", "textwrap", "threading", "time",
    "timeit", "token", "tokenize", "trace", "traceback", "types", "typing", "unicodedata",
    "unittest", "urllib.parse", "urllib.request", "uuid", "warnings", "wave", "weakref",
    "xml.dom.minidom", "xml.etree.ElementTree", "zipfile", "zlib", "zoneinfo",
)


@dataclass(frozen=True)
class DocEntry:
    """One documented object of the standard library."""

    id: str
    module: str
    name: str
    kind: str  # module, class, function
    doc: str


def _clean(doc: str | None) -> str:
    return inspect.cleandoc(doc) if doc else ""


def iter_docstrings(modules: tuple[str, ...] = MODULES, min_chars: int = 80) -> Iterator[DocEntry]:
    """Docstrings of ``modules`` and of the public functions and classes each one defines."""
    seen: set[str] = set()
    for modname in modules:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(modname)
        except Exception:  # noqa: BLE001, S112 - a module missing from this build of Python is skipped
            continue
        doc = _clean(module.__doc__)
        if len(doc) >= min_chars and f"module:{modname}" not in seen:
            seen.add(f"module:{modname}")
            yield DocEntry(f"module:{modname}", modname, modname, "module", doc)
        names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        for name in sorted(set(names)):
            obj = getattr(module, name, None)
            if not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj)):
                continue
            if getattr(obj, "__module__", None) not in (modname, "_" + modname.rsplit(".", 1)[-1], None):
                continue
            doc = _clean(getattr(obj, "__doc__", None))
            key = f"{modname}.{name}"
            if len(doc) < min_chars or key in seen:
                continue
            seen.add(key)
            yield DocEntry(key, modname, name, "class" if inspect.isclass(obj) else "function", doc)


def _passages(text: str, limit: int) -> list[str]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    out: list[str] = []
    current = ""
    for para in paragraphs:
        if len(para) > limit:
            para = para[:limit]
        if current and len(current) + len(para) + 2 > limit:
            out.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    if current:
        out.append(current)
    return out


def iter_topics() -> Iterator[dict[str, Any]]:
    """Passages of the language reference topics in ``pydoc_data.topics``."""
    from pydoc_data.topics import topics

    for topic in sorted(topics):
        for n, passage in enumerate(_passages(topics[topic], PASSAGE_CHARS)):
            yield {"id": f"topic:{topic}:{n}", "data": passage,
                   "metadata": {"source": "pydoc_topics", "kind": "topic", "topic": topic, "part": n,
                                "chars": len(passage)}}


def load_demo_corpus(limit: int | None = None) -> list[dict[str, Any]]:
    """The demo corpus as ``[{"id", "data", "metadata"}, ...]`` (deterministic order)."""
    items: list[dict[str, Any]] = []
    for entry in iter_docstrings():
        text = entry.doc[:DOCSTRING_CHARS]
        items.append({"id": entry.id, "data": text,
                      "metadata": {"source": "docstring", "kind": entry.kind, "module": entry.module,
                                   "name": entry.name, "package": entry.module.split(".")[0],
                                   "chars": len(text)}})
    items.extend(iter_topics())
    return items[:limit] if limit is not None else items


def docstring_pairs(min_summary_words: int = 4, min_body_words: int = 25) -> list[tuple[str, str, str]]:
    """``(id, summary line, body without the summary)`` for docstrings whose first line is a summary.

    The summary is a natural-language description of what the body documents, written by the same
    author, so it makes a fair query whose one relevant answer is that body.
    """
    pairs = []
    for entry in iter_docstrings():
        first, _, rest = entry.doc.partition("\n")
        summary, body = first.strip(), rest.strip()
        if len(summary.split()) < min_summary_words or len(body.split()) < min_body_words:
            continue
        if summary.rstrip(".").endswith(")") and "(" in summary.split()[0]:  # a signature, not prose
            continue
        pairs.append((entry.id, summary, body[:DOCSTRING_CHARS]))
    return pairs
