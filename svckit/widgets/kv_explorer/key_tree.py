"""The explorer's key tree: the next-level prefixes (by a delimiter) among the keys found so far, with
their counts; picking one narrows the pattern, Up widens it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import traitlets as T

from svckit.widgets._common import Quiet, muted_html
from svckit.widgets.kv_explorer.browser import GLOB_CHARS


class KeyTree(W.VBox):
    """``matches`` and ``pattern`` come from the browser; ``on_node(prefix)`` is called when a node (a
    prefix ending with the delimiter) is picked."""

    delimiter = T.Unicode(":")
    pattern = T.Unicode("*")
    matches = T.List()

    def __init__(self, **kwargs: Any) -> None:
        self.on_node: Callable[[str], Any] = lambda prefix: None
        self._quiet = Quiet()
        self.delimiter_box = W.Text(value=":", description="Delimiter", layout=W.Layout(width="160px"))
        self.tree_list = W.Select(options=[], rows=14, layout=W.Layout(width="100%"))
        self.tree_list.add_class("svc-tree")
        self.tree_up = W.Button(description="Up", icon="level-up", layout=W.Layout(width="80px"))
        super().__init__([W.HBox([self.delimiter_box, self.tree_up]),
                          W.HTML(muted_html("Prefixes among the keys scanned so far; pick one to narrow the "
                                            "pattern.")), self.tree_list], **kwargs)
        T.link((self.delimiter_box, "value"), (self, "delimiter"))
        self.tree_list.observe(self._on_picked, names="value")
        self.tree_up.on_click(lambda _b: self.tree_up_level())
        self.observe(lambda _c: self.update(), names=["delimiter", "matches"])

    def tree(self) -> list[tuple[str, int]]:
        """Next-level prefixes (by ``delimiter``) among the keys found so far, with counts."""
        plain = self.pattern.endswith("*") and not (set(self.pattern[:-1]) & GLOB_CHARS)
        base = self.pattern[:-1] if plain else ""
        counts: Counter[str] = Counter()
        d = self.delimiter
        for k in self.matches:
            rest = k.removeprefix(base)
            head, sep, _ = rest.partition(d) if d else (rest, "", "")
            counts[base + head + (sep if sep else "")] += 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def update(self) -> None:
        d = self.delimiter
        options = [(f"{prefix}{'*' if d and prefix.endswith(d) else ''}   ({n:,})", prefix)
                   for prefix, n in self.tree()[:500]]
        with self._quiet:
            self.tree_list.options = options
            self.tree_list.value = None

    def tree_up_level(self) -> None:
        base = self.pattern.rstrip("*")
        d = self.delimiter
        if d and base.endswith(d):
            base = base[: -len(d)]
        cut = base.rfind(d) if d else -1
        self.pattern = base[: cut + len(d)] + "*" if cut >= 0 else "*"

    def _on_picked(self, change: Any) -> None:
        if self._quiet or not change["new"]:
            return
        prefix, d = change["new"], self.delimiter
        node = bool(d) and prefix.endswith(d)
        self.pattern = prefix + "*" if node else prefix
        if node:
            self.on_node(prefix)
