"""The explorer's console: one command, or one per line as a pipeline or a transaction; the reply as
JSON or a table, and a history to pick from."""

from __future__ import annotations

import html
import json
import shlex
from typing import Any

import ipywidgets as W
import traitlets as T

from svckit import frames
from svckit.errors import SvcError, TransactionDiscarded
from svckit.widgets._common import Quiet, badge, error_text, frame_html, message_html


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
        super().__init__([self.console_input, W.HBox([self.console_mode, self.console_run]), self.console_out,
                          self.console_history], **kwargs)
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
        self.history = [text, *[h for h in self.history if h != text]][:50]
        with self._quiet:
            self.console_history.options = self.history
            self.console_history.value = None
        try:
            if mode == "single":
                if len(commands) > 1:
                    self.console_out.value = message_html("Single mode runs one command; choose pipeline.", "error")
                    return None
                result = self.kv.execute(*commands[0])
                self.last_result = result
                shown = json.dumps(result, indent=1, ensure_ascii=False, default=str)
                self.console_out.value = f'<pre class="svc-log">{html.escape(shown)}</pre>'
                return result
            batch = self.kv.pipeline() if mode == "pipeline" else self.kv.multi_exec()
            for cmd in commands:
                batch.command(*cmd)
            frame = frames.pipeline_frame(batch.exec(), commands)
            self.last_result = frame
            self.console_out.value = frame_html(frame, formatters={
                "ok": lambda ok: badge("ok", "#16a34a") if ok else badge("error", "#dc2626")})
            return frame
        except TransactionDiscarded as exc:
            self.last_result = exc
            self.console_out.value = message_html(f"Transaction discarded, nothing ran: {error_text(exc)}", "error")
        except SvcError as exc:
            self.last_result = exc
            self.console_out.value = message_html(f"Error: {error_text(exc)}", "error")
        return None

    def _on_history_picked(self, change: Any) -> None:
        if not self._quiet and change["new"]:
            self.console_input.value = change["new"]
