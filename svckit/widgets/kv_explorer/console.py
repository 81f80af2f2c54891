"""The explorer's console: one command, or one per line as a pipeline or a transaction; the reply as
JSON or a table, and a history to pick from.

What the console keeps and shows (its history, its input once run, its output, and so its widget
state and static view, which a saved notebook keeps) has every secret masked as the monitor masks
it (:mod:`svckit.kv.redact`): ``ACL SETUSER u on >pw`` is kept as ``ACL SETUSER u on ***``, the token
``ACL RESTTOKEN`` mints is shown as ``***`` and its last four characters. The reply itself is still
returned to the caller of :meth:`Console.run_command`.

Typing shows the help of the command the line starts with, and a box of command names completes
a name as it is typed (:mod:`.command_help`: the service's own COMMAND DOCS, read once)."""

from __future__ import annotations

import html
import json
import shlex
from typing import Any

import ipywidgets as W
import traitlets as T

from svckit import frames
from svckit._http import redact as redact_text
from svckit.errors import SvcError, TransactionDiscarded, mask
from svckit.kv.redact import redact, redact_reply, secret_arguments
from svckit.widgets._common import Quiet, badge, error_text, frame_html, message_html
from svckit.widgets.kv_explorer.command_help import CommandHelp


def _quoted(word: str) -> str:
    """``word`` as one word of a console line (quoted only where ``shlex.split`` needs it)."""
    plain = word and not any(c.isspace() or c in "'\"\\" for c in word)
    return word if plain else shlex.quote(word)


def masked_line(line: str) -> str:
    """A console line with its secret arguments masked (the line as typed when it holds none)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return line
    if not secret_arguments(words):
        return line
    return " ".join(_quoted(w) for w in redact(words, mask))


def masked_text(text: str) -> str:
    return "\n".join(masked_line(line) for line in text.splitlines())


class Console(W.VBox):
    history = T.List(T.Unicode())

    def __init__(self, kv: Any, **kwargs: Any) -> None:
        self.kv = kv
        self.last_result: Any = None
        self._quiet = Quiet()
        self.console_input = W.Textarea(placeholder="GET greeting\n(one command per line for pipeline / transaction)",
                                        layout=W.Layout(width="100%", height="80px"))
        self.console_mode = W.ToggleButtons(options=["single", "pipeline", "transaction"], value="single",
                                            style={"button_width": "95px"})
        self.console_run = W.Button(description="Run", icon="play", button_style="primary",
                                    layout=W.Layout(width="90px"))
        self.console_out = W.HTML()
        self.console_history = W.Select(options=[], rows=6, description="History", layout=W.Layout(width="100%"))
        self.command_help = CommandHelp(kv)
        self.console_command = W.Combobox(placeholder="command name: type to complete", options=[],
                                          ensure_option=False, description="Command", layout=W.Layout(width="320px"))
        self.console_help = W.HTML()
        super().__init__([W.HBox([self.console_command]), self.console_input, self.console_help,
                          W.HBox([self.console_mode, self.console_run]), self.console_out, self.console_history],
                         **kwargs)
        self.console_command.observe(self._on_command_typed, names="value")
        self.console_input.observe(self._on_input, names="value")
        self.console_run.on_click(lambda _b: self.run_command(self.console_input.value, self.console_mode.value))
        self.console_history.observe(self._on_history_picked, names="value")

    def run_command(self, text: str, mode: str = "single") -> Any:
        """Run ``text`` (one command, or one per line) and show the reply; returns it."""
        lines = [line for line in (text or "").splitlines() if line.strip()]
        if not lines:
            self.console_out.value = message_html("Type a command, e.g. GET greeting", "info")
            return None
        try:
            commands = [shlex.split(line) for line in lines]
        except ValueError as exc:
            self.console_out.value = message_html(f"Cannot parse the command: {exc}", "error")
            return None
        kept = masked_text(text)
        secrets = tuple(cmd[i] for cmd in commands for i in secret_arguments(cmd))
        self.history = [kept, *[h for h in self.history if h != kept]][:50]
        with self._quiet:
            self.console_history.options = self.history
            self.console_history.value = None
            self.console_input.value = masked_text(self.console_input.value)
        try:
            if mode == "single":
                if len(commands) > 1:
                    self.console_out.value = message_html("Single mode runs one command; choose pipeline.", "error")
                    return None
                result = self.kv.execute(*commands[0])
                self.last_result = result
                shown = json.dumps(redact_reply(commands[0], result, mask), indent=1, ensure_ascii=False, default=str)
                self.console_out.value = f'<pre class="svc-log">{html.escape(redact_text(shown, secrets))}</pre>'
                return result
            batch = self.kv.pipeline() if mode == "pipeline" else self.kv.multi_exec()
            for cmd in commands:
                batch.command(*cmd)
            results = batch.exec()
            frame = frames.pipeline_frame(results, commands)
            self.last_result = frame
            shown = frames.pipeline_frame(
                [r if isinstance(r, BaseException) else redact_reply(cmd, r, mask) for cmd, r in zip(commands, results)],
                [redact(cmd, mask) for cmd in commands])
            shown["error"] = shown["error"].map(lambda e: redact_text(e, secrets), na_action="ignore")
            self.console_out.value = frame_html(shown, formatters={
                "ok": lambda ok: badge("ok", "#16a34a") if ok else badge("error", "#dc2626")})
            return frame
        except TransactionDiscarded as exc:
            self.last_result = exc
            self.console_out.value = message_html(redact_text(
                f"Transaction discarded, nothing ran: {error_text(exc)}", secrets), "error")
        except SvcError as exc:
            self.last_result = exc
            self.console_out.value = message_html(redact_text(f"Error: {error_text(exc)}", secrets), "error")
        return None

    def _on_command_typed(self, change: Any) -> None:
        """Typing in the command box: the names (read once, at the first keystroke) complete it; a
        full name starts the last line of the input, and its help shows."""
        if self._quiet:
            return
        if not self.console_command.options and self.command_help.load():
            self.console_command.options = self.command_help.names
        name = change["new"].strip().upper()
        if name in (self.command_help.docs or {}):
            lines = self.console_input.value.splitlines() or [""]
            rest = lines[-1].split()[len(name.split()):]
            lines[-1] = " ".join([name, *rest]) + ("" if rest else " ")
            with self._quiet:
                self.console_command.value = ""
            self.console_input.value = "\n".join(lines)
        else:
            self.console_help.value = self.command_help.html(change["new"]) if self.command_help.docs else ""

    def _on_input(self, change: Any) -> None:
        """The help of the command the line being typed (the last one) starts with."""
        if self._quiet:
            return
        lines = (change["new"] or "").splitlines()
        self.console_help.value = self.command_help.html(lines[-1]) if lines else ""

    def _on_history_picked(self, change: Any) -> None:
        if not self._quiet and change["new"]:
            self.console_input.value = change["new"]
