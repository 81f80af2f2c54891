"""The timeline's dead-letter queue panel: a table of the failures of the runs shown (loaded with
them), the selected run's entry ticked and highlighted, and the ticked entries deleted, resumed or
restarted in one request each, behind a confirmation. A selected failed run whose entry is not among
those loaded is looked up on a :class:`~svckit.widgets._jobs.BackgroundJob` (:meth:`DlqPanel.look_up`),
with its progress shown, so the click that selected it returns at once."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit.errors import SvcError
from svckit.queue.client import WorkflowRuns
from svckit.queue.protocol import MAX_DLQ_COUNT
from svckit.widgets._common import ConfirmBar, MessageBar, Quiet, frame_html, muted_html
from svckit.widgets._jobs import BackgroundJob

#: what the panel can do to the ticked entries, and the past tense its messages use
DLQ_ACTIONS = {"delete": "deleted", "resume": "resumed", "restart": "restarted"}
CONSEQUENCES = {"delete": "They are removed for good; their runs stay failed and can no longer be resumed.",
                "resume": "Each failed run continues as a fresh run; steps that succeeded are not run again.",
                "restart": "Each failed run starts again from its first step; nothing is kept."}
#: the table's columns, as the panel shows them
DLQ_COLUMNS = ("run", "failed step", "status", "response", "attempts", "entered")
#: a response body's characters in its cell (the whole body is the cell's tooltip)
RESPONSE_CHARS = 160
#: the table fits the output's width: fixed columns, every cell cut with an ellipsis
TABLE_STYLE = """<style>
.svckit-dlq-table .svc-table { table-layout: fixed; width: 100%; }
.svckit-dlq-table .svc-table td { max-width: none; }
.svckit-dlq-table th:nth-child(1) { width: 30%; } .svckit-dlq-table th:nth-child(2) { width: 14%; }
.svckit-dlq-table th:nth-child(3) { width: 7%; } .svckit-dlq-table th:nth-child(5) { width: 8%; }
.svckit-dlq-table th:nth-child(6) { width: 17%; }
.svckit-dlq-table tr.svckit-dlq-ticked td { background: rgba(255, 200, 0, 0.35); }
.svckit-dlq-table tr.svckit-dlq-current td { font-weight: 600; }
</style>"""


def entry_key(m: Any) -> str:
    """The key (:func:`svckit.frames.run_key`) of the run a DLQ entry holds."""
    return f"{m.workflow_run_id}@{m.workflow_created_at}"


def same_run(entry: str, key: str | None) -> bool:
    """Whether an entry's key (:func:`entry_key`) is the run ``key``'s: the same, or the same run id
    where the entry does not say when its run was created."""
    return key is not None and (entry == key or (entry.endswith("@None") and entry[:-5] == key.rsplit("@", 1)[0]))


def holds(m: Any, run: Any) -> bool:
    """Whether DLQ entry ``m`` holds ``run`` (an entry without the run's creation time: by id)."""
    return m.workflow_run_id == run.workflow_run_id and m.workflow_created_at in (None, run.workflow_run_created_at)


def dlq_table_frame(entries: Sequence[Any], runs: pd.DataFrame, dlq: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per DLQ entry as the panel shows it: ``dlq_id, key`` and :data:`DLQ_COLUMNS`, from
    ``dlq`` (:func:`svckit.frames.dlq_frame` of ``entries``; built when not given). The run is named as
    the Gantt names it (``run_name`` of ``runs``, a :func:`svckit.frames.runs_frame`) and its failed
    step given when the run is among ``runs``; else :func:`svckit.frames.run_name` (workflow, label and
    short id). ``attempts`` is the failed message's retries plus its first attempt."""
    dlq = frames.dlq_frame(entries) if dlq is None else dlq
    names = dict(zip(runs["key"], runs["run_name"]))
    failed = dict(zip(runs["key"], runs["failed_step"]))
    keys = [entry_key(m) for m in entries]

    def name(m: Any, key: str) -> str:
        if key in names:
            return str(names[key])
        return frames.run_name(m.workflow_url or m.url, m.label, m.workflow_run_id or m.message_id)

    return pd.DataFrame({
        "dlq_id": dlq["dlq_id"],
        "key": pd.array(keys, dtype="string"),
        "run": pd.array([name(m, k) for m, k in zip(entries, keys)], dtype="string"),
        "failed step": pd.array([failed.get(k) for k in keys], dtype="string"),
        "status": dlq["response_status"],
        "response": dlq["response_body"],
        "attempts": dlq["max_retries"] + 1,
        "entered": dlq["entered_at"],
    })


def _titled(text: str, chars: int | None = None, title: str | None = None) -> str:
    """A cell cut to ``chars`` (and by the column's width), the whole text (or ``title``) its tooltip."""
    cut = text if chars is None or len(text) <= chars else text[:chars] + "…"
    return f"<span title='{html.escape(title or text, quote=True)}'>{html.escape(cut)}</span>"


def dlq_table_html(table: pd.DataFrame, *, ticked: Sequence[str] = (), current: str | None = None) -> str:
    """``table`` (:func:`dlq_table_frame`) as an HTML table that fits its output: ticked entries
    highlighted, the selected run's (``current``, a run key) in bold."""
    if table.empty:
        return muted_html("no DLQ entry for the runs shown")
    ids, keys, ticked = list(table["dlq_id"]), list(table["key"]), set(ticked)
    shown = table[list(DLQ_COLUMNS)].copy()
    shown["run"] = [_titled(name, title=f"{name}: run {key.split('@')[0]}") for name, key in zip(shown["run"], keys)]

    def attrs(i: int) -> str:
        marks = ["svckit-dlq-ticked"] * (ids[i] in ticked) + ["svckit-dlq-current"] * same_run(keys[i], current)
        return f" class='{' '.join(marks)}'" if marks else ""

    def response(body: Any) -> str:
        return '<span class="svc-muted">—</span>' if pd.isna(body) else _titled(str(body), RESPONSE_CHARS)

    table_html = frame_html(shown, formatters={"run": str, "response": response}, row_attrs=attrs)
    return f"<div class='svckit-dlq-table'>{TABLE_STYLE}{table_html}</div>"


class DlqPanel(W.VBox):
    """``load_dlq()`` lists the entries matching ``filters`` (the app fetches them beside the runs:
    ``fetch()``, then ``show()``); ``follow(key)`` ticks the selected run's entry; ``dlq_action(action)``
    acts on the ticked ones (its buttons ask first); ``on_changed()`` is called after an action."""

    dlq_count = T.Int(0)
    dlq_selected = T.Tuple()  # the DLQ ids ticked
    dlq_pending = T.Unicode(None, allow_none=True)  # the action waiting for its confirmation

    def __init__(self, queue: WorkflowRuns, **kwargs: Any) -> None:
        self.queue = queue
        self.filters: dict[str, Any] = {}  # the DLQ filters of the runs shown (url, run id, label)
        self.limit = 100_000
        self.dlq_entries: list[Any] = []
        self.complete = False  # every entry matching the filters is loaded
        self.runs = frames.runs_frame([])
        self.table = dlq_table_frame([], self.runs)
        self.current: str | None = None  # the selected run's key
        self._quiet = Quiet()  # while show() sets the options and ticks: it draws once, after
        self.last_dlq_result: Any = None
        self.found: dict[str, str] = {}  # run key -> the DLQ id a look-up found beyond the entries loaded
        self.w_lookup_bar = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="160px"))
        self.w_lookup_label = W.HTML("")
        self.w_lookup = W.HBox([self.w_lookup_bar, self.w_lookup_label], layout=W.Layout(display="none"))
        self.lookup_job = BackgroundJob(self.w_lookup_bar, self.w_lookup_label, name="svckit-dlq-lookup")
        self.on_changed: Callable[[], Any] = self.load_dlq
        self.w_title = W.HTML("<b>Dead-letter queue</b>")
        self.w_table = W.HTML("", layout=W.Layout(width="100%", margin="0"))  # as wide as the panel, no wider
        self.w_dlq = W.SelectMultiple(options=[], rows=3, description="tick", layout=W.Layout(
            width="auto", min_width="240px", max_width="460px", flex="1 1 auto"),
            tooltip="the entries the buttons act on (selecting a run ticks its entry)")
        self.w_dlq_buttons = {action: W.Button(description=f"{action.capitalize()} selected…", disabled=True,
                                               tooltip=f"{action} the ticked DLQ entries")
                              for action in DLQ_ACTIONS}
        self.dlq_confirm_box = ConfirmBar(cancel_label="Back")
        self.w_dlq_confirm = self.dlq_confirm_box.confirm_button
        self.w_dlq_back = self.dlq_confirm_box.cancel_button
        self.w_dlq_confirm_text = self.dlq_confirm_box.question
        self.w_dlq_msg = MessageBar()
        for w, css in ((self.w_table, "svckit-dlq"), (self.w_dlq, "svckit-dlq-list"),
                       (self.dlq_confirm_box, "svckit-dlq-confirm"), (self.w_dlq_msg, "svckit-dlq-msg")):
            w.add_class(css)
        super().__init__([self.w_title, self.w_table,
                          W.HBox([self.w_dlq, *self.w_dlq_buttons.values()], layout=W.Layout(flex_flow="row wrap")),
                          self.dlq_confirm_box, self.w_dlq_msg, self.w_lookup], **kwargs)
        T.link((self.w_dlq, "value"), (self, "dlq_selected"))
        self.observe(self._on_selected, names="dlq_selected")
        for action, button in self.w_dlq_buttons.items():
            button.on_click(lambda _b, action=action: self._ask(action))
        self.dlq_confirm_box.layout.observe(self._on_confirm_shown, names="display")
        self.w_table.value = muted_html("loaded with the runs")
        self.w_dlq.layout.display = "none"

    # -- loading ----------------------------------------------------------------------------------
    def fetch(self) -> tuple[list[Any], bool, str]:
        """The entries matching ``filters``, in pages of the most the service takes (a round trip per
        100), up to ``limit`` (``Queue.iter_dlq``): (entries, complete, error). A refusal is returned,
        not raised, so the app can fetch this on a worker beside the runs."""
        entries: list[Any] = []
        listed = self.queue.iter_dlq(count=MAX_DLQ_COUNT, limit=self.limit, **self.filters)
        try:
            entries.extend(listed)  # what was read before a refusal stays in ``entries``
        except SvcError as exc:
            return entries, False, str(exc)
        return entries, listed.complete, ""

    def show(self, entries: list[Any], complete: bool, error: str = "", runs: pd.DataFrame | None = None
             ) -> pd.DataFrame:
        """Show ``entries`` (``runs``: the runs frame that names them); ticked entries still there stay
        ticked. Returns :func:`svckit.frames.dlq_frame` of them."""
        self.dlq_entries, self.complete = entries, complete and not error
        self.runs = self.runs if runs is None else runs
        dlq = frames.dlq_frame(entries)
        self.table = dlq_table_frame(entries, self.runs, dlq)
        self.dlq_count = len(entries)
        present = {m.dlq_id for m in entries}
        keep = tuple(d for d in self.dlq_selected if d in present)
        with self._quiet:  # new options untick every entry: drawn once, below
            self.w_dlq.options = [(f"{run} · {'' if pd.isna(status) else status}", dlq_id)
                                  for run, status, dlq_id in zip(self.table["run"], self.table["status"],
                                                                 self.table["dlq_id"])]
            self.dlq_selected = keep
        self.w_dlq.layout.display = "flex" if entries else "none"
        more = "" if complete else " (more not loaded: narrow the filters)"
        said = f"{len(entries):,} entr{'y' if len(entries) == 1 else 'ies'} of the runs shown{more}"
        self.w_title.value = f"<b>Dead-letter queue</b> {muted_html(said)}"
        self.w_dlq_msg.say(error, "error" if error else "info")
        self._on_selected()
        return dlq

    def load_dlq(self) -> pd.DataFrame:
        """Fetch the entries matching ``filters`` and show them. Errors are shown, not raised."""
        return self.show(*self.fetch())

    def follow(self, key: str | None, *, tick: bool = True) -> None:
        """Highlight the entry of the selected run (its key, or None); ``tick`` it (only it)."""
        self.current = key
        ticked = self.dlq_selected
        if tick and key is not None:
            self.dlq_selected = tuple(m.dlq_id for m in self.dlq_entries if same_run(entry_key(m), key))
        if self.dlq_selected == ticked:  # else _on_selected drew it
            self._draw()

    def known_dlq_id(self, run: Any) -> str | None:
        """The DLQ id holding a failed run, without a request: the run's own ``dlq_id`` when the
        service sends one, the loaded entry that holds it, or the one a look-up found; else None."""
        if getattr(run, "dlq_id", None):
            return run.dlq_id
        found = [m.dlq_id for m in self.dlq_entries if holds(m, run)]
        return found[0] if found else self.found.get(frames.run_key(run))

    def search(self, run: Any, progress: Any = False, cancel: Any = None) -> str | None:
        """Ask the service for the entries of the run's id (``Queue.iter_dlq``) until one holds it."""
        entries = self.queue.iter_dlq(progress, MAX_DLQ_COUNT, cancel=cancel, workflow_run_id=run.workflow_run_id)
        dlq_id = next((m.dlq_id for m in entries if holds(m, run)), None)
        if dlq_id is not None:
            self.found[frames.run_key(run)] = dlq_id
        return dlq_id

    def dlq_id_of(self, run: Any) -> str:
        """The DLQ id holding a failed run (:meth:`known_dlq_id`); only when not every entry was
        loaded, the service is asked for the entries of the run's id (:meth:`search`)."""
        dlq_id = self.known_dlq_id(run)
        if dlq_id is None and not self.complete:
            dlq_id = self.search(run)
        if dlq_id is None:
            raise LookupError(f"no DLQ entry holds run {run.workflow_run_id} (already resumed, or expired)")
        return dlq_id

    def look_up(self, run: Any, then: Callable[[str | None, str], Any], *, background: bool = True) -> None:
        """:meth:`search` on a background job, its progress under the table (a look-up still running
        for another run is dropped: its ``then`` is never called), then ``then(dlq_id or None, error)``."""
        self.lookup_job.close()
        self.lookup_job = BackgroundJob(self.w_lookup_bar, self.w_lookup_label, name="svckit-dlq-lookup")
        self.w_lookup.layout.display = "flex"

        def done(dlq_id: str | None, error: str = "") -> None:
            self.w_lookup.layout.display = "none"
            then(dlq_id, error)

        self.lookup_job.start(lambda progress, cancel: self.search(run, progress, cancel), on_done=done,
                              on_error=lambda exc: done(None, str(exc)), background=background)

    # -- acting -----------------------------------------------------------------------------------
    def dlq_action(self, action: str, dlq_ids: Sequence[str] | None = None) -> Any:
        """Delete, resume or restart DLQ entries (``dlq_ids``, default: the ticked ones) in one request
        (no confirmation: calling this IS the confirmation), then reload (``on_changed``). Returns the
        service's answer: the number deleted, or the fresh runs."""
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
            runs = ", ".join(r.workflow_run_id for r in result)
            text = f"{DLQ_ACTIONS[action]} {len(result)} run(s): {runs}"
        self.last_dlq_result = result
        self.on_changed()
        self.w_dlq_msg.say(text, "ok")
        return result

    # -- drawing and handlers -----------------------------------------------------------------------
    def _draw(self) -> None:
        self.w_table.value = dlq_table_html(self.table, ticked=self.dlq_selected, current=self.current)

    def _ask(self, action: str) -> None:
        if not self.dlq_selected:
            return
        n = len(self.dlq_selected)
        which = f"<b>{n}</b> DLQ entr{'y' if n == 1 else 'ies'}"
        if n == 1:
            (name,) = self.table.loc[self.table["dlq_id"] == self.dlq_selected[0], "run"].tolist() or ["?"]
            which += f" (run <b>{html.escape(str(name))}</b>)"
        self.dlq_confirm_box.ask(f"{action.capitalize()} {which}? {CONSEQUENCES[action]}",
                                 lambda: self._confirmed(action), f"Confirm {action}", html_question=True)
        self.dlq_pending = action

    def _confirmed(self, action: str) -> None:
        try:
            self.dlq_action(action)
        except (SvcError, LookupError, ValueError) as exc:
            self.w_dlq_msg.say(f"{action} failed: {exc}", "error")

    def _on_confirm_shown(self, change: Any) -> None:
        if change["new"] == "none":
            self.dlq_pending = None

    def _on_selected(self, _change: Any = None) -> None:
        if self._quiet:
            return
        for action, button in self.w_dlq_buttons.items():
            button.disabled = not self.dlq_selected
            # red only where a click does something: a disabled button is drawn plain
            button.button_style = "danger" if action == "delete" and self.dlq_selected else ""
        self.dlq_confirm_box.cancel()
        self._draw()
