"""Command names and help for the console, from the server's own documentation: ``COMMAND DOCS``
(Redis 7 and later; redis-py ships no command docs), read once, when the console is first typed in,
and kept for the console's life. Each command's syntax is written from its argument tree as the
Redis documentation writes it (``SET key value [NX | XX] [GET] [EX seconds | ...]``).

Only the docs are shown: never a word the user typed, so a password typed after ``AUTH`` is not
repeated by the help (the console masks it as :mod:`svckit.kv.redact` says)."""

from __future__ import annotations

import html
from typing import Any

from svckit.errors import SvcError
from svckit.widgets._common import error_text, message_html


def _pairs(flat: Any) -> dict[str, Any]:
    """A RESP2 map (a flat list of name, value, name, value ...) as a dict."""
    if isinstance(flat, dict):
        return {str(k): v for k, v in flat.items()}
    items = list(flat or [])
    return {str(k): v for k, v in zip(items[0::2], items[1::2])}


def parse_docs(reply: Any) -> dict[str, dict[str, Any]]:
    """``COMMAND DOCS`` as ``{"SET": {...}, "ACL SETUSER": {...}}``, each doc a dict whose
    ``arguments`` are dicts too."""
    docs: dict[str, dict[str, Any]] = {}
    for name, raw in _pairs(reply).items():
        doc = _pairs(raw)
        doc["arguments"] = [_argument(a) for a in doc.get("arguments") or []]
        docs[name.replace("|", " ").upper()] = doc
        docs.update(parse_docs(doc.pop("subcommands", None) or []))
    return docs


def _argument(raw: Any) -> dict[str, Any]:
    arg = _pairs(raw)
    arg["arguments"] = [_argument(a) for a in arg.get("arguments") or []]
    arg["flags"] = [str(f) for f in arg.get("flags") or []]
    return arg


def argument_text(arg: dict[str, Any]) -> str:
    """One argument as the Redis documentation writes it: ``[NX | XX]``, ``field value [field value ...]``."""
    kind, token = arg.get("type"), arg.get("token")
    if kind == "pure-token":
        text = str(token)
    elif kind == "oneof":
        text = " | ".join(argument_text(a) for a in arg["arguments"])
    elif kind == "block":
        text = " ".join(argument_text(a) for a in arg["arguments"])
        text = f"{token} {text}" if token else text
    else:
        text = f"{token} {arg.get('name')}" if token else str(arg.get("name"))
    flags = arg["flags"]
    if "multiple" in flags:
        text = f"{text} [{text} ...]"
    if "optional" in flags:
        return f"[{text}]"
    return f"<{text}>" if kind == "oneof" else text


def syntax(name: str, doc: dict[str, Any]) -> str:
    return " ".join([name, *(argument_text(a) for a in doc.get("arguments", []))])


class CommandHelp:
    """The docs of one service, read on first use: ``names`` for the autocomplete, ``html(line)``
    for the help of the command a line starts with."""

    def __init__(self, kv: Any) -> None:
        self.kv = kv
        self.docs: dict[str, dict[str, Any]] | None = None
        self.error = ""

    def load(self) -> bool:
        """Read COMMAND DOCS once (a failure is kept and said, not retried on every keystroke)."""
        if self.docs is None and not self.error:
            try:
                self.docs = parse_docs(self.kv.execute("COMMAND", "DOCS"))
            except SvcError as exc:
                self.error = error_text(exc)
        return self.docs is not None

    @property
    def names(self) -> list[str]:
        return sorted(self.docs or ())

    def find(self, line: str) -> str | None:
        """The documented command ``line`` starts with (``ACL SETUSER`` before ``ACL``)."""
        words = line.split()[:2]
        if not words or not self.load():
            return None
        two = " ".join(words).upper()
        return two if len(words) == 2 and two in self.docs else (words[0].upper() if words[0].upper() in self.docs
                                                                 else None)

    def html(self, line: str) -> str:
        """Syntax, summary, since, complexity of the command ``line`` starts with ("" for none)."""
        if not line.strip():
            return ""
        name = self.find(line)
        if self.error:
            return message_html(f"Command help is not available: COMMAND DOCS was refused ({self.error}).", "info")
        if name is None:
            return message_html(f"{line.split()[0].upper()[:40]} is not a command this service documents.", "info")
        doc = self.docs[name]
        facts = " · ".join(f"{k} {doc[k]}" for k in ("since", "complexity") if doc.get(k))
        group = f" ({html.escape(str(doc['group']))})" if doc.get("group") else ""
        return (f'<div class="svc-command-help" style="font-size:12px"><code>{html.escape(syntax(name, doc))}</code>'
                f'<div>{html.escape(str(doc.get("summary", "")))}{group}</div>'
                f'<div class="svc-muted">{html.escape(facts)}</div></div>')
