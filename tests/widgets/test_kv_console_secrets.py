"""The KV explorer's console keeps no secret: a password given to ACL SETUSER / ACL RESTTOKEN (and the
other commands that carry one) and the token ACL RESTTOKEN mints are masked in the console's history,
its input once run, its output and its static view, so in no widget's state and in no saved notebook,
against the demo sandbox (a redis-server child) over real HTTP; the reply itself still reaches the
caller. The rule is the monitor's (svckit/kv/redact.py)."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import ipywidgets as W
import nbformat
import pytest

from svckit import demo
from svckit.kv.redact import redact, redact_reply
from svckit.widgets import KVExplorer
from svckit.widgets.kv_explorer.console import masked_text
from tests.conftest import Haystack


def widget_states(widget: W.Widget, seen: set[str] | None = None) -> list[dict[str, Any]]:
    """``get_state()`` of ``widget`` and of every widget it holds (children, layouts, styles), recursively:
    what the browser and a saved notebook get."""
    seen = set() if seen is None else seen
    if widget.model_id in seen:
        return []
    seen.add(widget.model_id)
    states = [widget.get_state()]
    for name in widget.keys:
        value = getattr(widget, name)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, W.Widget):
                states += widget_states(item, seen)
    return states


@pytest.fixture
def acl_user(kv):
    """A user of this test's own with a password, deleted after."""
    user, password = f"console-{uuid.uuid4().hex[:8]}", "pw-" + uuid.uuid4().hex
    yield user, password
    kv.execute("ACL", "DELUSER", user)


def test_the_console_masks_passwords_and_minted_tokens_everywhere_it_keeps_them(kv, acl_user):
    user, password = acl_user
    w = KVExplorer(kv, pattern="console:none", autorefresh=False)
    kept = Haystack()  # what the widget holds, labelled with after which command, after every command

    def run(text: str, mode: str = "single") -> Any:
        result = w.run_command(text, mode)
        for place, value in {
                "widget state": json.dumps(widget_states(w)), "static view": w.static_html(),
                "history trait": json.dumps(w.history), "console history": json.dumps(w.console.history)}.items():
            kept.add(f"{place} after {text.split()[1]!r}", value)
        return result

    w.console.console_input.value = f"ACL SETUSER {user} on >{password} ~console:* +get"
    w.console.console_mode.value = "single"
    w.console.console_run.click()  # as a person runs it: typed into the box
    assert "OK" in w.console.console_out.value
    kept.add("widget state after the Run button", json.dumps(widget_states(w)))
    token = run(f"ACL RESTTOKEN {user} {password}")
    assert isinstance(token, str) and len(token) > 20  # the caller gets the token itself
    assert f"***{token[-4:]}" in w.console.console_out.value  # shown: *** and at most the last four characters
    hashed = run(f"ACL GETUSER {user}")
    digest = hashlib.sha256(password.encode()).hexdigest()
    assert digest in json.dumps(hashed)  # the reply holds the password's hash: the console masks it too
    assert digest[-4:] in w.console.console_out.value
    run("ACL LIST")
    frame = run(f"ACL SETUSER {user} >{password}\nACL RESTTOKEN {user} {password}\nECHO done", "pipeline")
    piped = frame["result"].iloc[1]
    assert f"***{piped[-4:]}" in w.console.console_out.value and "done" in w.console.console_out.value  # the rest as is
    run(f"ACL SETUSER {user} >{password}\nECHO x", "transaction")  # refused in a transaction
    run(f"AUTH {user} {password}")  # refused by the gateway: the error masks it too
    run(f"CONFIG SET requirepass {password}")
    run(f'HELLO 3 AUTH {user} "{password}"')
    w.console.console_history.value = w.history[-1]  # a pick from the history fills the input with it
    assert w.console.console_input.value.startswith(f"ACL SETUSER {user} on ***")
    assert f"ACL SETUSER {user} on ***" in w.static_html()  # the history, as the static view shows it

    secrets = {"password": password, "token": token, "pipeline's token": piped, "password hash": digest}
    assert kept.leaks(secrets) == []


def test_the_rule_is_the_monitors():
    argv = ["ACL", "SETUSER", "u", "on", ">long-password-1234", "#" + "ab" * 32, "~*", "+get"]
    assert redact(argv, lambda a: "(redacted)") == ["ACL", "SETUSER", "u", "on", "(redacted)", "(redacted)", "~*",
                                                   "+get"]
    assert redact([a.encode() for a in argv], lambda a: b"-")[4:6] == [b"-", b"-"]
    assert redact_reply(["acl", "resttoken", "u", "pw"], "tok-0123456789abcdef", lambda s: "***" + s[-4:]) == "***cdef"
    assert redact_reply(["GET", "k"], "tok-0123456789abcdef", lambda s: "***") == "tok-0123456789abcdef"


def test_replies_of_a_client_that_does_not_decode_are_masked_too():
    # KV(decode=False) hands the console bytes: a token, a password and hashes are credentials still
    hide = lambda s: "***" + s[-4:]
    assert redact_reply([b"ACL", b"RESTTOKEN", b"u", b"pw"], b"tok-0123456789abcdef", hide) == "***cdef"
    assert redact_reply(["ACL", "GENPASS"], b"0123456789abcdef9876", hide) == "***9876"
    getuser = [b"flags", [b"on"], b"passwords", [b"ab" * 32], b"commands", b"+get"]
    assert redact_reply(["ACL", "GETUSER", "u"], getuser, hide) == [
        b"flags", [b"on"], b"passwords", ["***abab"], b"commands", b"+get"]
    listed = redact_reply(["ACL", "LIST"], [b"user u on #" + b"cd" * 32 + b" ~* +get"], hide)
    assert listed == ["user u on ***cdcd ~* +get"]
    assert masked_text("SET a 'b c'\nAUTH u 'p w'") == "SET a 'b c'\nAUTH *** ***"


NOTEBOOK = """\
import json, pathlib, uuid
from svckit.connect import connect
from svckit.widgets import KVExplorer
kv = connect().kv
password = "pw-" + uuid.uuid4().hex  # made here: the cell's source is saved too
explorer = KVExplorer(kv, pattern="console:none", autorefresh=False)
explorer.run_command(f"ACL SETUSER {user} on >{{password}} ~console:* +get")
token = explorer.run_command(f"ACL RESTTOKEN {user} {{password}}")
pathlib.Path({secret_file!r}).write_text(json.dumps([password, token]))  # for the test, never shown
explorer
"""


@pytest.mark.slow
def test_a_saved_and_an_exported_notebook_keep_no_secret_of_the_console(demo_kv_sandbox, acl_user, tmp_path):
    user, _ = acl_user
    secret_file = tmp_path / "secrets.json"
    source = NOTEBOOK.format(user=user, secret_file=str(secret_file))
    path = tmp_path / "console.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), path)
    run = demo.execute_notebook(path, tmp_path / "out", demo.kernel_env(demo_kv_sandbox.env), timeout=180)
    assert run.ok, run.error
    password, token = json.loads(secret_file.read_text())
    saved_text = (tmp_path / "out" / "console.ipynb").read_text()
    saved = nbformat.reads(saved_text, as_version=4)
    assert "widgets" in saved.metadata  # the widget state is saved with it
    page = (tmp_path / "out" / "console.html").read_text()
    for name, secret in {"password": password, "token": token}.items():
        assert secret not in saved_text, f"the {name} is in the saved notebook"
        assert secret not in page, f"the {name} is in the exported page"
    assert f"***{token[-4:]}" in page  # the console's static view, masked
