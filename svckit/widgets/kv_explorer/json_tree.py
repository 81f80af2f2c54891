"""A JSON document as a collapsible tree, edited at a path as RedisInsight's JSON editor does: set a
leaf (or any node) to a new JSON value, add a key to an object or an item to an array, delete a node:
one ``JSON.SET`` / ``JSON.ARRAPPEND`` / ``JSON.DEL`` at the path, which the editor shows before it runs
(deletes wait for a confirmation).

The tree is HTML ``<details>`` elements: they open and close in the browser with no round trip to the
kernel, and a saved notebook keeps them working. The paths are JSONPath (``$.a.b[0]``,
``$["a key"]``), the syntax of JSON.* (RedisJSON, and the sandbox's svckit_json library)."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterator
from typing import Any

import ipywidgets as W

from svckit._units import plural
from svckit.widgets._common import ConfirmBar, MessageBar, Quiet, message_html
from svckit.widgets.kv_explorer.element_editor import command_text, send_write

#: nodes drawn in the tree and offered in the path list (the rest are said, not drawn)
MAX_NODES = 400
#: the longest node (as JSON text) put in the value box to edit
MAX_EDIT = 20_000
VALUE_HINT = 'a JSON value: 42, "text", {"a": 1}, [1, 2]'
HELP = ("JSON document: open and close the tree's nodes; pick a path to set its value (JSON.SET, the "
        "value as JSON: a string in quotes), add a key to an object or an item to an array, or delete "
        "the node (JSON.DEL).")


def child_path(path: str, key: str | int) -> str:
    """The JSONPath of ``key`` (an object key, or an array index) under ``path``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def walk(doc: Any, path: str = "$", depth: int = 0) -> Iterator[tuple[str, Any, int]]:
    """(path, value, depth) of every node, depth first, the document's order."""
    stack = [(path, doc, depth)]
    while stack:
        path, value, depth = stack.pop()
        yield path, value, depth
        items = (value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else [])
        stack.extend(reversed([(child_path(path, k), v, depth + 1) for k, v in items]))


def _leaf(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return html.escape(text if len(text) <= 120 else text[:119] + "…")


def tree_html(doc: Any, limit: int = MAX_NODES) -> str:
    """The document as nested ``<details>`` (open two levels deep), at most ``limit`` nodes."""
    out: list[str] = []
    count = 0

    def node(name: str, value: Any, depth: int) -> None:
        nonlocal count
        count += 1
        if count > limit:
            return
        label = f'<span style="color:#6b21a8">{html.escape(name)}</span>'
        if isinstance(value, (dict, list)) and value:
            n = len(value)
            kind = (f"{{…}} {plural(n, 'key')}" if isinstance(value, dict)
                    else f"[…] {plural(n, 'item')}")
            out.append(f'<details{" open" if depth < 2 else ""} style="margin-left:{12 if depth else 0}px">'
                       f'<summary>{label} <span class="svc-muted">{kind}</span></summary>')
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                node(json.dumps(k, ensure_ascii=False) if isinstance(k, str) else f"[{k}]", v, depth + 1)
            out.append("</details>")
        else:
            out.append(f'<div style="margin-left:{24 if depth else 0}px">{label}: <code>{_leaf(value)}</code></div>')

    node("$", doc, 0)
    more = f'<div class="svc-muted">… {count - limit:,} more nodes not drawn</div>' if count > limit else ""
    return f'<div class="svc-json-tree" style="font-size:12px">{"".join(out)}{more}</div>'


class JsonTree(W.VBox):
    """``show(key, doc)`` draws the tree; ``set_path()``, ``add_at_path()`` and ``delete_path()``
    write one path (the delete asks first, on ``confirm_bar``)."""

    def __init__(self, kv: Any, messages: MessageBar, confirm_bar: ConfirmBar, **kwargs: Any) -> None:
        self.kv = kv
        self.messages = messages
        self.confirm_bar = confirm_bar
        self.after_write: Callable[[str], Any] = lambda key: None
        self.key, self.readonly = "", False
        self._shown_key = ""
        self._nodes: dict[str, Any] = {}
        self._quiet = Quiet()
        lay = W.Layout
        self.json_help = W.HTML(message_html(HELP, "info"))
        self.json_tree = W.HTML()
        self.json_path = W.Dropdown(options=["$"], value="$", description="Path", layout=lay(width="100%"))
        self.json_value = W.Textarea(description="Value", placeholder=VALUE_HINT,
                                     layout=lay(width="100%", height="52px"))
        self.json_new_key = W.Text(description="New key", placeholder="key to add to the object at the path",
                                   layout=lay(width="320px"))
        self.json_set = W.Button(description="Set", icon="save", button_style="primary", layout=lay(width="80px"))
        self.json_add = W.Button(description="Add", icon="plus", layout=lay(width="80px"))
        self.json_delete = W.Button(description="Delete", icon="trash", button_style="danger",
                                    layout=lay(width="90px"))
        self.json_command = W.HTML()
        super().__init__([self.json_help, W.Box([self.json_tree], layout=lay(max_height="260px", overflow="auto")),
                          self.json_path, self.json_value,
                          W.HBox([self.json_set, self.json_new_key, self.json_add, self.json_delete],
                                 layout=lay(flex_flow="row wrap", align_items="center")), self.json_command],
                         **kwargs)
        self.add_class("svc-json-editor")
        self.json_path.observe(self._on_path, names="value")
        for box in (self.json_value, self.json_new_key):
            box.observe(lambda _c: self._update(), names="value")
        self.json_set.on_click(lambda _b: self.set_path(self.json_path.value, self.json_value.value))
        self.json_add.on_click(lambda _b: self.add_at_path(self.json_path.value, self.json_new_key.value,
                                                           self.json_value.value))
        self.json_delete.on_click(lambda _b: self.delete_path(self.json_path.value))
        self.layout.display = "none"

    def show(self, key: str, doc: Any, readonly: bool) -> None:
        """Draw ``doc`` (None: hide the editor) and list its paths."""
        self.key, self.readonly = key, readonly
        if doc is None:
            self.layout.display = "none"
            return
        self.layout.display = "flex"
        self.json_tree.value = tree_html(doc)
        self._nodes = {path: value for (path, value, _d), _ in zip(walk(doc), range(MAX_NODES))}
        kept = self.json_path.value if key == self._shown_key else "$"  # the path edited stays picked
        self._shown_key = key
        with self._quiet:
            self.json_path.options = list(self._nodes)
            self.json_path.value = kept if kept in self._nodes else "$"
            self.json_new_key.value = ""
        self._on_path()

    def _on_path(self, _change: Any = None) -> None:
        if self._quiet:
            return
        text = json.dumps(self._nodes.get(self.json_path.value), ensure_ascii=False)
        with self._quiet:  # a node of megabytes is not copied into the page: a path inside it is edited
            self.json_value.value = text if len(text) <= MAX_EDIT else ""
        self.json_value.placeholder = (f"this node is {len(text):,} characters: pick a path inside it, or type its "
                                       "new value" if len(text) > MAX_EDIT else VALUE_HINT)
        self._update()

    def _update(self) -> None:
        node = self._nodes.get(self.json_path.value)
        container = isinstance(node, (dict, list))
        self.json_set.disabled = self.readonly
        self.json_add.disabled = self.readonly or not container
        self.json_delete.disabled = self.readonly or self.json_path.value == "$"
        self.json_new_key.disabled = self.readonly or not isinstance(node, dict)
        reason = "this explorer uses a Read Only token: the document is not edited" if self.readonly else ""
        for b in (self.json_set, self.json_add, self.json_delete):
            b.tooltip = reason
        if self.readonly:
            self.json_command.value = message_html("Read Only token: editing the document is disabled.", "info")
            return
        path, value = self.json_path.value, self.json_value.value
        planned = [command_text("JSON.SET", self.key, path, value)]
        if isinstance(node, dict) and self.json_new_key.value:
            planned.append(command_text("JSON.SET", self.key, child_path(path, self.json_new_key.value), value))
        elif isinstance(node, list):
            planned.append(command_text("JSON.ARRAPPEND", self.key, path, value))
        self.json_command.value = ('<span class="svc-muted">Set writes <code>' + html.escape(planned[0]) + "</code>"
                                   + (f"; Add writes <code>{html.escape(planned[1])}</code>" if len(planned) > 1
                                      else "") + "</span>")

    # -- writing -----------------------------------------------------------------------------------
    def _parse(self, text: str) -> tuple[bool, Any]:
        try:
            return True, json.loads(text)
        except ValueError as exc:
            self.messages.say(f"Not valid JSON: {exc} (a string is written in quotes: \"text\").", "error")
            return False, None

    def set_path(self, path: str, text: str) -> bool:
        """JSON.SET the node at ``path`` to ``text`` (a JSON value)."""
        ok, value = self._parse(text)
        return ok and self._write(command_text("JSON.SET", self.key, path, text),
                                 lambda: self.kv.json_set(self.key, path, value))

    def add_at_path(self, path: str, new_key: str, text: str) -> bool:
        """Add ``new_key`` with ``text`` to the object at ``path`` (JSON.SET ... NX: an existing key
        is not overwritten), or append ``text`` to the array at ``path`` (JSON.ARRAPPEND)."""
        node = self._nodes.get(path)
        ok, value = self._parse(text)
        if not ok:
            return False
        if isinstance(node, list):
            return self._write(command_text("JSON.ARRAPPEND", self.key, path, text),
                              lambda: self.kv.json_arrappend(self.key, path, value))
        if not isinstance(node, dict) or not new_key:
            self.messages.say("Pick an object's path and type the new key (or an array's path to append).", "error")
            return False
        target = child_path(path, new_key)
        if new_key in node:
            self.messages.say(f"{target} exists: pick it and press Set to change its value.", "error")
            return False
        return self._write(command_text("JSON.SET", self.key, target, text, "NX"),
                          lambda: self.kv.json_set(self.key, target, value, nx=True))

    def delete_path(self, path: str) -> None:
        """Ask to JSON.DEL the node at ``path``."""
        if path == "$" or path not in self._nodes:
            self.messages.say("Pick a path inside the document to delete (Delete key removes the whole key).",
                              "error")
            return
        text = command_text("JSON.DEL", self.key, path)
        self.confirm_bar.ask(f"Delete {path} of {self.key!r}? Sends {text}",
                             lambda: self._write(text, lambda: self.kv.json_del(self.key, path)), "Delete")

    def _write(self, text: str, call: Callable[[], Any]) -> bool:
        return send_write(self, text, call, "This explorer uses a Read Only token: the document is not edited.",
                          wrote=lambda reply: reply not in (None, False, 0, [0], [None]))
