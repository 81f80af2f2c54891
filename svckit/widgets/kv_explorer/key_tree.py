"""The explorer's key tree: the keys of the browser's search as a collapsible namespace tree, split on
a delimiter (``:``) as RedisInsight's tree view does, each namespace with its key count and memory.

It counts what the one keyspace walk found (:func:`svckit.kv.keyspace.walk_keys`): at first the
browser's walk, which stops after a page of matches, so the counts are those of a partial scan and
the tree says so ("scanned 1,000 of ~3,405 keys"); **Scan all** walks the rest of the keyspace for
the same search as a background job (progress bar, Cancel), measuring each key's memory in the same
request as its type (:func:`svckit.kv.keyspace.describe_keys`, one pipeline per SCAN step), and then
counts and memory are of every matching key. A click on a namespace opens or closes it and aims the
Bulk tab at it; **Filter keys** narrows the search to it, **Up** widens it.
"""

from __future__ import annotations

import threading
from bisect import insort
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit._units import mark, plural
from svckit.frames import format_bytes
from svckit.kv.keyspace import KeyScan, describe_keys, walk_keys
from svckit.widgets._common import Quiet, message_html, muted_html
from svckit.widgets._jobs import BackgroundJob
from svckit.widgets.kv_explorer.listing import GLOB_CHARS, natural_key, scan_text

#: keys listed under an open namespace at most (the rest are counted, "… and 1,234 more keys")
LEAVES_SHOWN = 20


@dataclass
class NamespaceTree:
    """Key counts and memory per namespace (a prefix ending with the delimiter; ``""`` is the root).
    ``memory`` is None for a namespace any of whose keys was not measured."""

    delimiter: str = ":"
    keys: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    memory: dict[str, int | None] = field(default_factory=lambda: defaultdict(int))
    children: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    leaves: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))

    def add(self, keys: Iterable[Any], memory: dict[Any, int | None] | None = None) -> None:
        """Count ``keys`` (with their memory in bytes, when measured) in every namespace above them."""
        d = self.delimiter
        for key in keys:
            text = key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)
            used = None if memory is None else memory.get(key)
            parts = text.split(d) if d else [text]
            node = ""
            for depth in range(len(parts)):
                self.keys[node] += 1
                self.memory[node] = None if used is None or self.memory[node] is None else self.memory[node] + used
                if depth == len(parts) - 1:
                    self._leaf(node, key)
                    break
                child = node + parts[depth] + d
                self.children[node].add(child)
                node = child

    def _leaf(self, node: str, key: Any) -> None:
        """Keep the first :data:`LEAVES_SHOWN` keys of ``node`` in natural order (whatever order SCAN
        brought them in)."""
        shown = self.leaves[node]
        if len(shown) >= LEAVES_SHOWN and natural_key(key) >= natural_key(shown[-1]):
            return
        insort(shown, key, key=natural_key)
        del shown[LEAVES_SHOWN:]

    def namespaces(self, node: str = "") -> list[str]:
        """The namespaces right under ``node``, in natural order."""
        return sorted(self.children.get(node, ()), key=natural_key)

    def direct_keys(self, node: str) -> int:
        """Keys right under ``node`` (not in a namespace below it)."""
        return self.keys.get(node, 0) - sum(self.keys[c] for c in self.children.get(node, ()))


class KeyTree(W.VBox):
    """``pattern`` and ``matches`` (the browser's search and the keys its walk found) and
    ``scan_state()`` (that walk, and DBSIZE) come from the explorer; ``on_node(prefix)`` is called when
    a namespace is picked."""

    delimiter = T.Unicode(":")
    pattern = T.Unicode("*")
    matches = T.List()
    expanded = T.List(T.Unicode(), help="namespaces opened by a click")
    closed = T.List(T.Unicode(), help="namespaces on the search's path closed by a click")
    counted = T.Unicode("", help="what the counts are of, as shown")
    scan_count = T.Int(10_000, help="COUNT hint per SCAN call of the tree's Scan all")

    def __init__(self, kv: Any = None, **kwargs: Any) -> None:
        self.kv = kv
        self.on_node: Callable[[str], Any] = lambda prefix: None
        self.scan_state: Callable[[], tuple[KeyScan, int]] = lambda: (KeyScan(), 0)
        self.model = NamespaceTree()
        self._full: NamespaceTree | None = None  # the tree's own walk of every matching key, with memory
        self._full_of: tuple[Any, ...] = ()
        self._quiet = Quiet()
        self._picked = ""  # the namespace last picked: what Filter keys searches
        self.delimiter_box = W.Text(value=":", description="Delimiter", layout=W.Layout(width="160px"))
        self.tree_list = W.Select(options=[], rows=16, layout=W.Layout(width="auto"))
        self.tree_list.add_class("svc-tree")
        self.tree_up = W.Button(description="Up", icon="level-up", layout=W.Layout(width="80px"))
        self.tree_filter = W.Button(description="Filter keys", icon="filter", disabled=True,
                                    tooltip="search the keys of the namespace picked", layout=W.Layout(width="120px"))
        self.tree_scan_button = W.Button(description="Scan all", icon="fast-forward", layout=W.Layout(width="110px"),
                                         tooltip="count every matching key and measure its memory")
        self.tree_cancel_button = W.Button(description="Cancel", icon="stop", disabled=True, layout=W.Layout(width="90px"))
        self.tree_progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="200px"))
        self.tree_progress_label = W.HTML()
        self.tree_status = W.HTML()
        self.tree_status.add_class("svc-tree-status")
        self.job = BackgroundJob(self.tree_progress, self.tree_progress_label, name="svckit-key-tree")
        row = W.Layout(flex_flow="row wrap", align_items="center")
        super().__init__([W.HBox([self.delimiter_box, self.tree_up, self.tree_filter, self.tree_scan_button,
                                  self.tree_cancel_button, self.tree_progress, self.tree_progress_label], layout=row),
                          self.tree_status, self.tree_list], **kwargs)
        T.link((self.delimiter_box, "value"), (self, "delimiter"))
        self.tree_list.observe(self._on_picked, names="value")
        self.tree_up.on_click(lambda _b: self.tree_up_level())
        self.tree_filter.on_click(lambda _b: self.filter_node())
        self.tree_scan_button.on_click(lambda _b: self.scan_all(background=True))
        self.tree_cancel_button.on_click(lambda _b: self.job.cancel())
        self.observe(lambda _c: self.update(), names=["delimiter", "matches", "expanded", "closed"])

    # -- what is counted -------------------------------------------------------------------------------
    def _walk_of(self) -> tuple[Any, ...]:
        scan, _ = self.scan_state()
        return (scan.match, scan.type)

    def _current(self) -> NamespaceTree:
        if self._full is not None and self._full_of == (*self._walk_of(), self.delimiter):
            return self._full
        model = NamespaceTree(self.delimiter)
        model.add(self.matches)
        return model

    def _status(self, model: NamespaceTree) -> str:
        scan, total = self.scan_state()
        pattern = scan.match or "*"
        if model is self._full:
            return scan_text(model.keys.get("", 0), pattern, total, total, True) + " · memory of every key measured"
        if scan.complete:
            return (scan_text(len(self.matches), pattern, total, total, True)
                    + " · Scan all to measure their memory")
        walked = scan.walked(total) if total else scan.scanned
        return (f"Counts from a partial scan: {scan_text(len(self.matches), pattern, walked, total, False)}. "
                "Scan all to count every key and measure memory.")

    def scan_all(self, background: bool = False) -> None:
        """Walk the whole keyspace for the browser's search (a background job with progress and
        Cancel when ``background``), measuring each key's memory, and show the complete counts."""
        if self.kv is None or self.job.running:
            return
        scan, total = self.scan_state()
        of = (scan.match, scan.type, self.delimiter)
        model = NamespaceTree(self.delimiter)
        self.tree_cancel_button.disabled, self.tree_scan_button.disabled = False, True

        def work(progress: Any, cancel: threading.Event) -> NamespaceTree | None:
            walk = KeyScan(scan.match, scan.type, self.scan_count)
            for _state, new in walk_keys(self.kv, walk, total=total or None, cancel=cancel, progress=progress,
                                         keep=False):
                infos = describe_keys(self.kv, new, lengths=False) if new else []
                model.add(new, {i.key: i.memory for i in infos})
            return model if walk.complete else None

        def done(result: NamespaceTree | None) -> None:
            self.tree_cancel_button.disabled, self.tree_scan_button.disabled = True, False
            if result is None:
                self.tree_status.value = message_html("Scan all was cancelled: the counts are still those of the "
                                                      "partial scan.", "info")
                return
            self._full, self._full_of = result, of
            self.update()

        def failed(exc: BaseException) -> None:
            self.tree_cancel_button.disabled, self.tree_scan_button.disabled = True, False
            self.tree_status.value = message_html(f"Scan all failed: {exc}", "error")

        self.job.start(work, on_done=done, on_error=failed, background=background)

    def wait(self, timeout: float | None = None) -> bool:
        return self.job.wait(timeout)

    # -- what is shown ---------------------------------------------------------------------------------
    def _base(self) -> str:
        plain = self.pattern.endswith("*") and not (set(self.pattern[:-1]) & GLOB_CHARS)
        return self.pattern[:-1] if plain else ""

    def _open(self) -> set[str]:
        """The namespaces shown open: those opened by a click, and those on the way to the search's
        prefix (``demo:user:*`` opens ``demo:`` and ``demo:user:``) unless closed by a click."""
        d, base = self.delimiter, self._base()
        path = set()
        if d:
            parts = base.split(d)[:-1]
            path = {d.join(parts[:i + 1]) + d for i in range(len(parts))}
        return (set(self.expanded) | path) - set(self.closed)

    def tree(self) -> list[tuple[str, int]]:
        """The namespaces (and keys) right under the search's prefix, with their key counts, largest first."""
        model, base = self._current(), self._base()
        node = base if base in model.keys else ""
        rows = [(child, model.keys[child]) for child in model.namespaces(node)]
        rows += [(str(k), 1) for k in model.leaves.get(node, [])]
        return sorted(rows, key=lambda r: (-r[1], natural_key(r[0])))

    def tree_frame(self) -> pd.DataFrame:
        """The namespaces right under the search's prefix: ``namespace``, ``keys``, ``memory`` (bytes,
        missing until the tree's Scan all measured every key), most keys first."""
        model, base = self._current(), self._base()
        node = base if base in model.keys else ""
        names = sorted(model.namespaces(node), key=lambda n: (-model.keys[n], natural_key(n)))
        return mark(pd.DataFrame({
            "namespace": pd.array(names, dtype="string"),
            "keys": pd.array([model.keys[n] for n in names], dtype="Int64"),
            "memory": pd.array([model.memory.get(n) for n in names], dtype="Int64"),
        }), keys="count", memory="bytes")

    def rows(self) -> list[tuple[str, str]]:
        """The tree as shown: (label, value) per line, open namespaces followed by what they hold."""
        model = self._current()
        self.model = model
        out: list[tuple[str, str]] = []

        def memory(node: str) -> str:
            used = model.memory.get(node)
            return "memory —" if used is None else format_bytes(used)

        def walk(node: str, depth: int) -> None:
            pad = "    " * depth
            for child in model.namespaces(node):
                mark = "▼" if child in opened else "►"
                label = child[len(node):]
                out.append((f"{pad}{mark} {label}   {plural(model.keys[child], 'key')} · {memory(child)}", child))
                if child in opened:
                    walk(child, depth + 1)
            shown = model.leaves.get(node, [])
            for key in shown:
                out.append((f"{pad}  {str(key)[len(node):]}", f"key\0{key}"))
            rest = model.direct_keys(node) - len(shown)
            if rest > 0:
                out.append((f"{pad}  … and {plural(rest, 'more key')} (pick to list them)",
                            f"more\0{node}"))

        opened = self._open()
        walk("", 0)
        return out[:2000]

    def update(self) -> None:
        model = self._current()
        with self._quiet:
            self.tree_list.options = self.rows()
            self.tree_list.value = None
        self.counted = self._status(model)
        total = model.keys.get("", 0)
        self.tree_status.value = muted_html(f"{plural(total, 'key')} in {plural(len(model.namespaces('')), 'namespace')}"
                                            f" at the top · {self.counted}")

    def tree_up_level(self) -> None:
        base = self.pattern.rstrip("*")
        d = self.delimiter
        if d and base.endswith(d):
            base = base[: -len(d)]
        cut = base.rfind(d) if d else -1
        self.pattern = base[: cut + len(d)] + "*" if cut >= 0 else "*"

    def filter_node(self, prefix: str | None = None) -> None:
        """Search the keys of a namespace (the one picked when not given)."""
        prefix = prefix or self._picked
        if prefix:
            self.pattern = prefix + "*"

    def _on_picked(self, change: Any) -> None:
        if self._quiet or not change["new"]:
            return
        value = change["new"]
        if value.startswith("more\0"):
            self.filter_node(value.split("\0", 1)[1])
            return
        if value.startswith("key\0"):
            self.pattern = value.split("\0", 1)[1]
            return
        self._picked = value
        self.tree_filter.disabled = False
        self.on_node(value)
        if value in self._open():
            with self._quiet:
                self.expanded = [p for p in self.expanded if p != value]
            self.closed = [*self.closed, value]
        else:
            with self._quiet:
                self.closed = [p for p in self.closed if p != value]
            self.expanded = [*self.expanded, value]
