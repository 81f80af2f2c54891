"""The KV explorer's console completes command names and shows each command's help (syntax, summary,
since, complexity) from the service's own COMMAND DOCS, read once, when the console is first typed
in; the help never repeats what was typed after the command name. Against the demo sandbox (a
redis-server child) over real HTTP."""

from __future__ import annotations

import html
import re

from svckit.widgets import KVExplorer


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def test_typing_completes_a_command_name_and_shows_its_help(kv, monkeypatch):
    calls: list[tuple] = []
    execute = kv.execute
    monkeypatch.setattr(kv, "execute", lambda *args: calls.append(args) or execute(*args))
    w = KVExplorer(kv, pattern="console-help:none", autorefresh=False)
    assert w.console.console_command.options == () and not calls  # nothing read before the console is used
    w.console.console_command.value = "hs"  # typing in the command box
    assert {"HSET", "HGETALL", "ACL SETUSER"} <= set(w.console.console_command.options)
    w.console.console_command.value = "hset"  # a whole name: it starts the line
    assert w.console.console_input.value == "HSET " and w.console.console_command.value == ""
    help_text = text_of(w.console.console_help.value)
    assert "HSET key field value [field value ...]" in help_text
    assert "Set the string value of a hash field" in help_text and "since 2.0.0" in help_text
    w.console.console_input.value = "SET greeting hi"
    assert "SET key value [NX | XX] [GET]" in text_of(w.console.console_help.value)
    w.console.console_input.value = "GET a\nZADD z 1 m"  # the line being typed is the last one
    assert "ZADD key" in text_of(w.console.console_help.value)
    w.console.console_input.value = "NOSUCH x"
    assert "NOSUCH is not a command this service documents" in text_of(w.console.console_help.value)
    assert sum(c[:2] == ("COMMAND", "DOCS") for c in calls) == 1  # read once


def test_the_help_never_repeats_a_typed_password(kv):
    w = KVExplorer(kv, pattern="console-help:none", autorefresh=False)
    for line in ("AUTH default pw-s3cret-9137", "ACL SETUSER bob on >pw-s3cret-9137", "HELLO 3 AUTH u pw-s3cret-9137"):
        w.console.console_input.value = line
        assert "pw-s3cret" not in w.console.console_help.value and w.console.console_help.value, line
    assert "AUTH [username] password" in text_of(w.console.console_help.value) or "HELLO" in text_of(w.console.console_help.value)
