"""Editing one element of a hash, list, set, sorted set or stream, as RedisInsight does: add, edit or
delete a hash field, a list item, a set member, a sorted-set member (with its score) or a stream
entry, each with one command whose text the editor shows before it runs (``HSET k f v``,
``LREM k 1 v``, ``XDEL k id`` ...); deletes wait for a confirmation.

The elements to pick from are those of the page the value view shows, so what the table shows and
what an edit writes come from one page; after a write the same page is read again."""

from __future__ import annotations

import html
import json
import shlex
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import pandas as pd

from svckit.errors import SvcError
from svckit.widgets._common import ConfirmBar, MessageBar, Quiet, error_text, message_html

#: the key types whose elements are edited one by one
ELEMENT_TYPES = ("hash", "list", "set", "zset", "stream")

#: per type: what the element is, what the two boxes hold, and the commands each action sends
HELP = {
    "hash": ("field", "value", ("Hash fields: pick a field to edit its value (HSET) or delete it (HDEL); "
                                "type a new field name and value to add it (HSET).")),
    "list": ("index", "item", ("List items: pick an item to replace it (LSET) or remove it (LREM); "
                               "add an item at the tail (RPUSH) or the head (LPUSH).")),
    "set": ("member", None, ("Set members: add a member (SADD) or remove one (SREM); a member is not "
                             "edited in place: remove it and add the new one.")),
    "zset": ("member", "score", ("Sorted-set members with their scores: pick a member to change its score "
                                 "(ZADD XX) or remove it (ZREM); type a new member and score to add it (ZADD).")),
    "stream": ("id", "fields", ("Stream entries are append-only: add an entry (XADD, id * for the next "
                                "one; its fields as a JSON object) or delete an entry by id (XDEL).")),
}
NEW = "(new)"
#: elements of a page offered to pick (a page may hold 100,000: the widget's state stays kilobytes)
MAX_PICK = 1000


def _short(value: Any, width: int = 40) -> str:
    text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _quoted(word: Any) -> str:
    """One word of a command as redis-cli reads it (quoted only where it must be)."""
    text = str(word)
    return text if text and not any(c.isspace() or c in "'\"\\" for c in text) else shlex.quote(text)


def _score(value: Any) -> str:
    """A score as the shortest text that reads back as the same float (1234567, 2.5, 0.1, inf)."""
    text = repr(float(value))
    return text.removesuffix(".0")


def _outcome(text: str, reply: Any) -> str:
    """What a write's reply means, where it says more than "done": a field added or updated."""
    verb = text.split(" ", 1)[0]
    if verb in ("HSET", "SADD", "ZADD") and isinstance(reply, int):
        what = {"HSET": "field", "SADD": "member", "ZADD": "member"}[verb]
        return f" ({what} added)" if reply else (f" ({what} updated)" if verb != "SADD" else f" ({what} was there)")
    if verb == "XADD":
        return f" (entry {reply})"
    return ""


def send_write(view: Any, text: str, call: Callable[[], Any], readonly_note: str,
               outcome: Callable[[Any], str] = lambda _reply: "",
               wrote: Callable[[Any], bool] = lambda _reply: True) -> bool:
    """The editors' one way to send a write: refused under a Read Only token (``readonly_note``), else
    ``call()``; the command's ``text`` and what came of it in ``view.messages``, and the key read again
    (``view.after_write``) when it wrote. ``view`` has ``readonly``, ``messages``, ``key``, ``after_write``."""
    if view.readonly:
        view.messages.say(readonly_note, "error")
        return False
    try:
        reply = call()
    except SvcError as exc:
        view.messages.say(f"{text} was refused: {error_text(exc)}", "error")
        return False
    if not wrote(reply):
        view.messages.say(f"{text}: nothing was written (reply {reply!r}).", "error")
        return False
    view.messages.say(f"{text}: done{outcome(reply)}.", "ok")
    view.after_write(view.key)
    return True


def command_text(*words: Any) -> str:
    """A command as the editor shows it (values over 60 characters cut)."""
    return " ".join(_quoted(_short(w, 60)) for w in words)


class ElementEditor(W.VBox):
    """``show(key, type, frame)`` lists the page's elements; ``add_element()``, ``update_element()``
    and ``delete_element()`` write one element (a delete asks first, on ``confirm_bar``)."""

    def __init__(self, kv: Any, messages: MessageBar, confirm_bar: ConfirmBar, **kwargs: Any) -> None:
        self.kv = kv
        self.messages = messages
        self.confirm_bar = confirm_bar
        self.after_write: Callable[[str], Any] = lambda key: None
        self.key, self.key_type, self.readonly = "", "", False
        self._shown_key = ""
        self._elements: dict[str, Any] = {}  # option label -> the element (field, index, member, id)
        self._values: dict[str, Any] = {}  # option label -> its current value (or score, or fields)
        self._quiet = Quiet()
        lay = W.Layout
        self.element_help = W.HTML()
        self.element_pick = W.Dropdown(options=[NEW], value=NEW, description="Element", layout=lay(width="320px"))
        self.element_name = W.Text(description="Field", layout=lay(width="320px"))
        self.element_value = W.Textarea(description="Value", layout=lay(width="100%", height="52px"))
        self.list_end = W.ToggleButtons(options=["tail", "head"], value="tail", style={"button_width": "60px"},
                                        tooltip="where Add puts a new list item (RPUSH / LPUSH)")
        self.element_add = W.Button(description="Add", icon="plus", layout=lay(width="80px"))
        self.element_save = W.Button(description="Save", icon="save", button_style="primary", layout=lay(width="80px"))
        self.element_delete = W.Button(description="Delete", icon="trash", button_style="danger",
                                       layout=lay(width="90px"))
        self.element_command = W.HTML()
        self.element_help.add_class("svc-element-help")
        super().__init__([self.element_help, W.HBox([self.element_pick, self.element_name],
                                                     layout=lay(flex_flow="row wrap")),
                          self.element_value,
                          W.HBox([self.element_add, self.list_end, self.element_save, self.element_delete,
                                  self.element_command], layout=lay(flex_flow="row wrap", align_items="center"))],
                         **kwargs)
        self.add_class("svc-element-editor")
        self.element_pick.observe(self._on_pick, names="value")
        for box in (self.element_name, self.element_value, self.list_end):
            box.observe(lambda _c: self._update(), names="value")
        self.element_add.on_click(lambda _b: self.add_element(self.element_name.value, self.element_value.value,
                                                              head=self.list_end.value == "head"))
        self.element_save.on_click(lambda _b: self.update_element(self.element_pick.value, self.element_value.value))
        self.element_delete.on_click(lambda _b: self.delete_element(self.element_pick.value))
        self.layout.display = "none"

    # -- showing ----------------------------------------------------------------------------------
    def show(self, key: str, key_type: str, frame: pd.DataFrame, readonly: bool) -> None:
        """The elements of the page ``frame`` of ``key`` (hidden for types edited otherwise)."""
        self.key, self.key_type, self.readonly = key, key_type, readonly
        if key_type not in ELEMENT_TYPES:
            self.layout.display = "none"
            return
        self.layout.display = "flex"
        name, value, text = HELP[key_type]
        more = (f" The list holds the first {MAX_PICK:,} of the {len(frame):,} elements of this page: a smaller "
                "page size reaches the others." if len(frame) > MAX_PICK else "")
        self.element_help.value = message_html(text + more, "info")
        kept = self._elements.get(self.element_pick.value) if key == self._shown_key else None
        self._shown_key = key
        self._elements, self._values = {}, {}
        for row in frame.head(MAX_PICK).to_dict("records"):
            element, current, label = self._row(key_type, row)
            label = f"{label} ({len(self._elements)})" if label in self._elements else label
            self._elements[label], self._values[label] = element, current
        with self._quiet:
            self.element_pick.options = [NEW, *self._elements]
            self.element_pick.value = NEW
            self.element_name.value = "*" if key_type == "stream" else ""
            self.element_value.value = ""
        self.element_name.description = {"list": "Index", "stream": "New id"}.get(key_type, name.capitalize())
        self.element_name.layout.display = "none" if key_type == "list" else "flex"
        self.element_value.description = (value or "").capitalize()
        self.element_value.layout.display = "none" if value is None else "flex"
        self.element_value.placeholder = '{"field": "value"}' if key_type == "stream" else ""
        self.list_end.layout.display = "flex" if key_type == "list" else "none"
        label = next((lb for lb, element in self._elements.items() if kept is not None and element == kept), None)
        if label is not None:
            self.element_pick.value = label  # the element edited stays picked, with its value as read now
        self._update()

    @staticmethod
    def _row(key_type: str, row: dict[str, Any]) -> tuple[Any, Any, str]:
        """(the element, its current value, its label in the pick list) of one row of the page."""
        if key_type == "hash":
            return row["field"], row["value"], str(row["field"])
        if key_type == "list":
            return int(row["index"]), row["value"], f"#{int(row['index'])} · {_short(row['value'])}"
        if key_type == "set":
            return row["member"], None, str(row["member"])
        if key_type == "zset":
            return row["member"], row["score"], f"{row['member']} · {_score(row['score'])}"
        fields = {k: v for k, v in row.items() if k not in ("id", "time", "seq") and not pd.isna(v)}
        return row["id"], fields, str(row["id"])

    def _on_pick(self, _change: Any = None) -> None:
        if self._quiet:
            return
        label = self.element_pick.value
        with self._quiet:
            if label == NEW:
                self.element_name.value = "*" if self.key_type == "stream" else ""
                self.element_value.value = ""
            else:
                current = self._values.get(label)
                self.element_name.value = str(self._elements[label])
                self.element_value.value = ("" if current is None else json.dumps(current, ensure_ascii=False)
                                            if self.key_type == "stream" else _score(current)
                                            if self.key_type == "zset" else str(current))
        self._update()

    def _update(self) -> None:
        """Which buttons apply, and the commands they send, said beside them."""
        picked = self.element_pick.value != NEW
        t = self.key_type
        reason = "this explorer uses a Read Only token: elements are not edited" if self.readonly else ""
        self.element_add.disabled = self.readonly or picked
        self.element_save.disabled = self.readonly or not picked or t in ("set", "stream")
        self.element_delete.disabled = self.readonly or not picked
        self.element_name.disabled = self.readonly or picked  # a picked element is edited, not renamed
        for b in (self.element_add, self.element_save, self.element_delete):
            b.tooltip = reason
        if not self.readonly and t in ("set", "stream"):
            self.element_save.tooltip = ("stream entries are append-only" if t == "stream"
                                         else "a set member is removed and added, not edited")
        if self.readonly:
            self.element_command.value = message_html("Read Only token: adding, editing and deleting elements "
                                                      "is disabled.", "info")
            return
        planned = self._planned()
        self.element_command.value = (f'<span class="svc-muted">{"Writes" if planned else ""} '
                                      f'<code>{html.escape(planned)}</code></span>' if planned else "")

    def _planned(self) -> str:
        label = self.element_pick.value
        if label == NEW:
            return self._add_command(self.element_name.value, self.element_value.value,
                                     self.list_end.value == "head")[0]
        element = self._elements.get(label)
        t, value = self.key_type, self.element_value.value
        if t == "hash":
            return command_text("HSET", self.key, element, value)
        if t == "list":
            return command_text("LSET", self.key, element, value)
        if t == "zset":
            return command_text("ZADD", self.key, "XX", value, element)
        return ""

    # -- writing ------------------------------------------------------------------------------------
    def _add_command(self, name: str, value: str, head: bool) -> tuple[str, Callable[[], Any] | None, str]:
        """(the command's text, the call that sends it, or None and why not) of Add."""
        key, t = self.key, self.key_type
        if t == "list":
            verb = "LPUSH" if head else "RPUSH"
            call = (lambda: self.kv.lpush(key, value)) if head else (lambda: self.kv.rpush(key, value))
            return command_text(verb, key, value), call, ""
        if not name:
            return "", None, f"Type the {HELP[t][0]} to add."
        if t == "hash":
            return command_text("HSET", key, name, value), lambda: self.kv.hset(key, name, value), ""
        if t == "set":
            return command_text("SADD", key, name), lambda: self.kv.sadd(key, name), ""
        if t == "zset":
            try:
                score = float(value)
            except ValueError:
                return "", None, "A sorted-set member needs a score (a number)."
            return command_text("ZADD", key, _score(score), name), lambda: self.kv.zadd(key, {name: score}), ""
        try:
            fields = json.loads(value or "{}")
        except ValueError:
            fields = None
        if not isinstance(fields, dict) or not fields:
            return "", None, 'A stream entry needs its fields as a JSON object, e.g. {"event": "login"}.'
        fields = {str(f): v if isinstance(v, str) else json.dumps(v) for f, v in fields.items()}
        words = [w for pair in fields.items() for w in pair]
        return command_text("XADD", key, name, *words), lambda: self.kv.xadd(key, fields, id=name), ""

    def add_element(self, name: str = "", value: str = "", *, head: bool = False) -> bool:
        """Add a hash field (HSET), a list item (RPUSH, or LPUSH with ``head``), a set member (SADD),
        a sorted-set member with its score in ``value`` (ZADD) or a stream entry (XADD, ``name`` the id
        or ``*``, ``value`` its fields as a JSON object)."""
        text, call, why = self._add_command(name, value, head)
        return self._write(text, call, why)

    def update_element(self, label: str, value: str) -> bool:
        """Write ``value`` to the picked element: HSET (hash), LSET (list), ZADD XX (a member's score)."""
        element, t, key = self._elements.get(label), self.key_type, self.key
        if element is None:
            return self._write("", None, "Pick an element of the page to edit.")
        if t == "hash":
            return self._write(command_text("HSET", key, element, value), lambda: self.kv.hset(key, element, value))
        if t == "list":
            return self._write(command_text("LSET", key, element, value), lambda: self.kv.lset(key, element, value))
        if t == "zset":
            try:
                score = float(value)
            except ValueError:
                return self._write("", None, "A score is a number.")
            return self._write(command_text("ZADD", key, "XX", _score(score), element),
                              lambda: self.kv.zadd(key, {element: score}, xx=True))
        why = ("Stream entries are append-only: add a new entry or delete this one." if t == "stream"
               else "A set member is not edited in place: remove it and add the new member.")
        return self._write("", None, why)

    def delete_element(self, label: str) -> None:
        """Ask to delete the picked element: HDEL, LREM (the first item equal to it), SREM, ZREM, XDEL."""
        element, t, key = self._elements.get(label), self.key_type, self.key
        if element is None:
            self._write("", None, "Pick an element of the page to delete.")
            return
        if self.readonly:
            self._write("", None, "")
            return
        if t == "list":
            item = self._values[label]
            text, call = command_text("LREM", key, 1, item), lambda: self.kv.lrem(key, 1, item)
            question = f"Remove the first item equal to #{element} from {key!r}? Sends {text}"
        else:
            verb = {"hash": "HDEL", "set": "SREM", "zset": "ZREM", "stream": "XDEL"}[t]
            method = getattr(self.kv, verb.lower())
            text, call = command_text(verb, key, element), lambda: method(key, element)
            question = f"Delete {HELP[t][0]} {str(element)!r} of {key!r}? Sends {text}"
        self.confirm_bar.ask(question, lambda: self._write(text, call), "Delete")

    def _write(self, text: str, call: Callable[[], Any] | None, why: str = "") -> bool:
        if call is None and not self.readonly:
            self.messages.say(why, "error")
            return False
        return send_write(self, text, call or (lambda: None),
                          "This explorer uses a Read Only token: elements are not added, edited or deleted.",
                          outcome=lambda reply: _outcome(text, reply))
