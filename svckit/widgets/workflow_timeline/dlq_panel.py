"""The timeline's dead-letter queue panel: every DLQ entry, ticked ones deleted, resumed or restarted
in one request each, behind a confirmation."""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit._http import paginate
from svckit.errors import SvcError
from svckit.queue.client import WorkflowRuns
from svckit.queue.protocol import MAX_DLQ_COUNT
from svckit.widgets._common import ConfirmBar, message_html

#: what the panel can do to the ticked entries, and the past tense its messages use
DLQ_ACTIONS = {"delete": "deleted", "resume": "resumed", "restart": "restarted"}
CONSEQUENCES = {"delete": "They are removed for good; their runs stay failed and can no longer be resumed.",
                "resume": "Each failed run continues as a fresh run; steps that succeeded are not run again.",
                "restart": "Each failed run starts again from its first step; nothing is kept."}


def entry_text(m: Any) -> str:
    entered = f"{m.created:%Y-%m-%d %H:%M:%S}" if getattr(m, "created_at", None) is not None else "?"
    return (f"{m.workflow_run_id or m.message_id} · {m.workflow_url or m.url} · entered {entered}"
            + (f" · {m.label}" if m.label else ""))


class DlqPanel(W.VBox):
    """``load_dlq()`` lists the entries; ``dlq_action(action)`` acts on the ticked ones (its buttons
    ask first); ``on_changed()`` is called after an action, so the runs are reloaded."""

    dlq_count = T.Int(0)
    dlq_selected = T.Tuple()  # the DLQ ids ticked in the list
    dlq_pending = T.Unicode(None, allow_none=True)  # the action waiting for its confirmation

    def __init__(self, queue: WorkflowRuns, **kwargs: Any) -> None:
        self.queue = queue
        self.dlq_entries: list[Any] = []
        self.last_dlq_result: Any = None
        self.on_changed: Callable[[], Any] = lambda: None
        self.w_dlq_load = W.Button(description="Load DLQ", icon="inbox")
        self.w_dlq = W.SelectMultiple(options=[], rows=6, description="DLQ", layout=W.Layout(width="720px"))
        self.w_dlq_buttons = {
            action: W.Button(description=f"{action.capitalize()} selected…", disabled=True,
                             button_style="danger" if action == "delete" else "",
                             tooltip=f"{action} the ticked DLQ entries")
            for action in DLQ_ACTIONS}
        self.dlq_confirm_box = ConfirmBar(cancel_label="Back")
        self.w_dlq_confirm = self.dlq_confirm_box.confirm_button
        self.w_dlq_back = self.dlq_confirm_box.cancel_button
        self.w_dlq_confirm_text = self.dlq_confirm_box.question
        self.w_dlq_msg = W.HTML("")
        for w, css in ((self.w_dlq, "svckit-dlq-list"), (self.dlq_confirm_box, "svckit-dlq-confirm"),
                       (self.w_dlq_msg, "svckit-dlq-msg")):
            w.add_class(css)
        super().__init__([W.HTML("<b>Dead-letter queue</b>"), W.HBox([self.w_dlq_load, *self.w_dlq_buttons.values()]),
                          self.w_dlq, self.dlq_confirm_box, self.w_dlq_msg], **kwargs)
        T.link((self.w_dlq, "value"), (self, "dlq_selected"))
        self.observe(self._on_selected, names="dlq_selected")
        self.w_dlq_load.on_click(lambda _b: self.load_dlq())
        for action, button in self.w_dlq_buttons.items():
            button.on_click(lambda _b, action=action: self._ask(action))
        self.dlq_confirm_box.layout.observe(self._on_confirm_shown, names="display")

    def iter_dlq(self) -> Iterator[Any]:
        """Every DLQ entry, in pages of the most the service takes: one round trip per 100 entries."""
        return paginate(lambda cursor: self.queue.dlq(cursor=cursor, count=MAX_DLQ_COUNT), "messages")

    def load_dlq(self) -> pd.DataFrame:
        """Fetch every DLQ entry (page by page) into the list; ticked entries that are still there stay
        ticked. Returns :func:`svckit.frames.dlq_frame` of them. Errors are shown, not raised."""
        try:
            self.dlq_entries = list(self.iter_dlq())
        except SvcError as exc:
            self.w_dlq_msg.value = message_html(str(exc), "error")
        self.dlq_count = len(self.dlq_entries)
        present = {m.dlq_id for m in self.dlq_entries}
        keep = tuple(d for d in self.dlq_selected if d in present)
        self.w_dlq.options = [(entry_text(m), m.dlq_id) for m in self.dlq_entries]
        self.dlq_selected = keep
        self._on_selected()
        return frames.dlq_frame(self.dlq_entries)

    def dlq_action(self, action: str, dlq_ids: Sequence[str] | None = None) -> Any:
        """Delete, resume or restart DLQ entries (``dlq_ids``, default: the ticked ones) in one request
        (no confirmation: calling this IS the confirmation), then reload the runs and the DLQ. Returns
        the service's answer: the number deleted, or the fresh runs."""
        if action not in DLQ_ACTIONS:
            raise ValueError(f"action must be one of {', '.join(DLQ_ACTIONS)}, got {action!r}")
        ids = list(self.dlq_selected if dlq_ids is None else dlq_ids)
        if not ids:
            raise LookupError("tick at least one DLQ entry first")
        if action == "delete":
            result = self.queue.delete_dlq_many(ids)
            text = f"deleted {result} DLQ entr{'y' if result == 1 else 'ies'}"
        else:
            result = getattr(self.queue, f"{action}_many")(ids)
            runs = ", ".join(html.escape(r.workflow_run_id) for r in result)
            text = f"{DLQ_ACTIONS[action]} {len(result)} run(s): <b>{runs}</b>"
        self.last_dlq_result = result
        self.on_changed()
        self.load_dlq()
        self.w_dlq_msg.value = message_html(text, "ok", markup=True)
        return result

    def _ask(self, action: str) -> None:
        if not self.dlq_selected:
            return
        n = len(self.dlq_selected)
        self.dlq_confirm_box.ask(f"{action.capitalize()} <b>{n}</b> DLQ entr{'y' if n == 1 else 'ies'}? "
                                 f"{CONSEQUENCES[action]}", lambda: self._confirmed(action), f"Confirm {action}",
                                 html_question=True)
        self.dlq_pending = action

    def _confirmed(self, action: str) -> None:
        try:
            self.dlq_action(action)
        except (SvcError, LookupError, ValueError) as exc:
            self.w_dlq_msg.value = message_html(f"{action} failed: {exc}", "error")

    def _on_confirm_shown(self, change: Any) -> None:
        if change["new"] == "none":
            self.dlq_pending = None

    def _on_selected(self, _change: Any = None) -> None:
        for button in self.w_dlq_buttons.values():
            button.disabled = not self.dlq_selected
        self.dlq_confirm_box.cancel()
