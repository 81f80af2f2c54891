"""Pieces every svckit widget draws with: HTML tables from frames, badges, one message style, a
confirmation bar and a re-entry guard. Threads (background jobs, event streams) are in ``_jobs``.

Kept free of protocol logic (docs/architecture.md): these only draw and run callbacks.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Self

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit._units import duration_text, timestamp_text
from svckit.display import ipython_shell, is_url, url_html
from svckit.errors import SvcError

#: One small stylesheet, injected once per widget (an HTML widget with a <style> tag), so tables and
#: badges look the same in JupyterLab, in exported HTML and in screenshots.
STYLE = """
<style>
.svc-table { border-collapse: collapse; font: 12px/1.4 var(--jp-code-font-family, monospace); width: 100%; }
.svc-table th { text-align: left; background: #f3f4f6; color: #374151; padding: 3px 8px;
  border-bottom: 1px solid #d1d5db; position: sticky; top: 0; }
.svc-table td { padding: 2px 8px; border-bottom: 1px solid #eef0f3; vertical-align: top;
  max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.svc-table tr:hover td { background: #f9fafb; }
.svc-badge { display: inline-block; padding: 1px 8px; margin-right: 6px; border-radius: 10px;
  font: 600 11px/1.6 var(--jp-ui-font-family, sans-serif); color: white; }
.svc-muted { color: #6b7280; font: 12px var(--jp-ui-font-family, sans-serif); }
.svc-msg { font: 12px var(--jp-ui-font-family, sans-serif); padding: 2px 0; }
.svc-msg.error, .svc-error { color: #b91c1c; } .svc-msg.ok { color: #15803d; } .svc-msg.info { color: #374151; }
.svc-caret { background: #b91c1c; color: white; }
.svc-card { border: 1px solid #e5e7eb; border-radius: 6px; padding: 6px 10px; background: white; }
.svc-card .svc-table td { white-space: normal; }
.svc-card h4 { margin: 0 0 4px 0; font: 600 13px var(--jp-ui-font-family, sans-serif); color: #111827; }
.svc-kv-explorer .widget-hbox, .svc-account-dashboard .widget-hbox { gap: 6px; }
.svc-meter { display: inline-block; width: 120px; height: 8px; background: #e5e7eb; border-radius: 4px;
  overflow: hidden; vertical-align: middle; } .svc-meter > span { display: block; height: 100%; }
.svc-confirm { background: #fef2f2; border-radius: 4px; }
.svc-log { font: 11px/1.45 var(--jp-code-font-family, monospace); white-space: pre-wrap;
  max-height: 260px; overflow-y: auto; background: #111827; color: #e5e7eb; padding: 6px 8px;
  border-radius: 4px; }
</style>
"""

BADGE_COLORS: dict[str, str] = {
    "string": "#2563eb", "hash": "#7c3aed", "list": "#0891b2", "set": "#059669", "zset": "#d97706",
    "stream": "#db2777", "ReJSON-RL": "#4b5563", "none": "#9ca3af",
    "active": "#16a34a", "passive": "#9ca3af", "free": "#6b7280", "paid": "#2563eb",
    "queue_enterprise_1m": "#7c3aed", "queue_enterprise_10m": "#6d28d9", "readonly": "#b45309",
}


def style_widget() -> W.HTML:
    return W.HTML(STYLE, layout=W.Layout(height="0px", margin="0"))


def badge(text: str, color: str | None = None, title: str | None = None) -> str:
    color = color or BADGE_COLORS.get(text, "#4b5563")
    tip = f' title="{html.escape(title)}"' if title else ""
    return f'<span class="svc-badge" style="background:{color}"{tip}>{html.escape(str(text))}</span>'


def meter_html(share: float | None) -> str:
    """A bar filled to ``share`` percent (capped at 100): green, amber from 70 %, red from 90 %; an
    empty string where there is no limit to measure against."""
    if share is None or pd.isna(share):
        return ""
    color = "#dc2626" if share >= 90 else "#d97706" if share >= 70 else "#16a34a"
    return (f"<span class='svc-meter' title='{share:.1f} % of the limit'>"
            f"<span style='width:{min(share, 100.0):.1f}%;background:{color}'></span></span>")


#: what a message can be (its colour): :func:`message_html`, :class:`MessageBar`
MESSAGE_KINDS = ("info", "ok", "error")


def message_html(text: str, kind: str = "info", *, markup: bool = False) -> str:
    """The one way a widget says something: ``kind`` is ``info``, ``ok`` or ``error``. ``text`` is
    escaped, unless it is ``markup`` the caller built (and escaped the parts of) itself."""
    return f'<div class="svc-msg {kind}">{text if markup else html.escape(text)}</div>' if text else ""


def muted_html(text: str) -> str:
    """Secondary text (counts, hints, where a figure comes from)."""
    return f'<span class="svc-muted">{html.escape(text)}</span>'


def _cell(value: Any) -> str:
    """A value as a table cell, in the units every svckit table uses (:mod:`svckit._units`): ``49 ms``,
    times in UTC to the second, long URLs shortened with the whole one in the tooltip."""
    if value is None or (not isinstance(value, (list, dict, tuple, set)) and pd.isna(value)):
        return '<span class="svc-muted">—</span>'
    if isinstance(value, pd.Timedelta):
        return html.escape(duration_text(value.total_seconds()))
    if isinstance(value, pd.Timestamp):
        return html.escape(timestamp_text(value))
    text = str(value)
    if is_url(text):
        return url_html(text)
    if len(text) > 300:
        text = text[:300] + "…"
    return html.escape(text)


def _header(frame: pd.DataFrame, column: Any) -> str:
    """A column's header: its name, and ``(UTC)`` after a column of timezone-aware times."""
    utc = isinstance(frame[column].dtype, pd.DatetimeTZDtype) if frame.columns.is_unique else False
    return html.escape(str(column)) + (" (UTC)" if utc else "")


def frame_html(frame: pd.DataFrame, max_rows: int = 200, formatters: dict[str, Callable[[Any], str]] | None = None,
               row_attrs: Callable[[int], str] | None = None) -> str:
    """A DataFrame as a compact HTML table (escaped; long cells cut)."""
    formatters = formatters or {}
    head = "".join(f"<th>{_header(frame, c)}</th>" for c in frame.columns)
    body = []
    for i, (_, row) in enumerate(frame.head(max_rows).iterrows()):
        cells = "".join(
            f"<td>{formatters[c](row[c]) if c in formatters else _cell(row[c])}</td>" for c in frame.columns
        )
        attrs = row_attrs(i) if row_attrs else ""
        body.append(f"<tr{attrs}>{cells}</tr>")
    more = ""
    if len(frame) > max_rows:
        more = f'<div class="svc-muted">… {len(frame) - max_rows:,} more rows</div>'
    return f'<table class="svc-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{more}'


def error_text(exc: BaseException) -> str:
    """An error as a widget says it: its message, cut at 300 characters."""
    text = str(exc) or type(exc).__name__
    return text if len(text) < 300 else text[:300] + "…"


def show_one(shown: W.Widget, parts: Iterable[W.Widget]) -> None:
    """Show ``shown`` in place of the other ``parts``: the others are hidden first, because the front end
    applies each change as it comes and the other order shows two of them at once for a moment."""
    for part in parts:
        if part is not shown:
            part.layout.display = "none"
    shown.layout.display = None


def positive(proposal: Any) -> Any:
    """For ``@T.validate``: a count, a size or an interval is above zero (else :class:`TraitError`)."""
    value = proposal["value"]
    if value <= 0:
        raise T.TraitError(f"{proposal['trait'].name} must be above 0, not {value!r}")
    return value


def one_of(proposal: Any, allowed: Iterable[Any]) -> Any:
    """For ``@T.validate``: a value of a known list (a kind, a weighting, a format; else :class:`TraitError`)."""
    allowed = tuple(allowed)
    if proposal["value"] not in allowed:
        names = ", ".join(repr(a) for a in allowed)
        raise T.TraitError(f"{proposal['trait'].name} must be one of {names}, not {proposal['value']!r}")
    return proposal["value"]


class CellHooks:
    """Handlers of IPython's cell events (``pre_run_cell``, ``post_run_cell``), registered with the
    running shell once, when :meth:`hook` is first called in one (nothing happens outside IPython):
    the one way a widget learns that a cell began or ended."""

    hooked = False

    def events(self) -> dict[str, Callable[..., None]]:
        raise NotImplementedError

    def hook(self) -> None:
        if self.hooked:
            return
        shell = ipython_shell()
        if shell is not None:
            for name, handler in self.events().items():
                shell.events.register(name, handler)
            self.hooked = True


class MessageBar(W.HTML):
    """The one line where a widget says what happened: ``say(text, kind)`` with kind ``info``,
    ``ok`` or ``error`` (one style everywhere: :func:`message_html`), and ``attempt()`` for a request
    whose failure is said rather than raised. ``message`` and ``message_kind`` are traits, so an app
    links them to its own."""

    message = T.Unicode("")
    message_kind = T.Unicode("info")

    @T.validate("message_kind")
    def _known_kind(self, proposal: Any) -> str:
        return one_of(proposal, MESSAGE_KINDS)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_class("svc-message")
        self.observe(lambda _c: setattr(self, "value", message_html(self.message, self.message_kind)),
                     names=["message", "message_kind"])

    def say(self, text: str, kind: str = "info") -> None:
        self.message_kind = kind
        self.message = text

    def attempt(self, action: Callable[[], Any], failed: str, done: str | Callable[[Any], str]) -> tuple[bool, Any]:
        """Run ``action``: say ``done`` (or ``done(result)``) when it works, ``failed: <why>`` when the
        service refuses it. Returns (worked, result)."""
        try:
            result = action()
        except SvcError as exc:
            self.say(f"{failed}: {error_text(exc)}", "error")
            return False, None
        self.say(done(result) if callable(done) else done, "ok")
        return True, result


class Quiet:
    """A re-entry guard that cannot be left set: ``with self._quiet:`` around code that sets a control
    whose observer must not act on it; the observer checks ``if self._quiet: return``."""

    def __init__(self) -> None:
        self._depth = 0

    def __bool__(self) -> bool:
        return self._depth > 0

    def __enter__(self) -> Self:
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1


class ConfirmBar(W.HBox):
    """"Delete key X?  [Confirm] [Cancel]": an action runs only after an explicit second click.

    ``ask(question, action)`` shows the bar; ``confirm()`` runs the pending action, ``cancel()``
    drops it. Both are public so tests (and other widgets) drive the bar without clicking. ``extra``
    widgets (fields that tune the action) sit between the question and the buttons."""

    def __init__(self, extra: Sequence[W.Widget] = (), *, cancel_label: str = "Cancel") -> None:
        self.question = W.HTML()
        self.confirm_button = W.Button(description="Confirm", button_style="danger", icon="check",
                                       layout=W.Layout(width="auto", min_width="110px"))
        self.cancel_button = W.Button(description=cancel_label, layout=W.Layout(width="90px"))
        super().__init__([self.question, *extra, self.confirm_button, self.cancel_button],
                         layout=W.Layout(display="none", align_items="center", flex_flow="row wrap",
                                         padding="4px 8px", border="1px solid #fca5a5"))
        self.add_class("svc-confirm")
        self._action: Callable[[], Any] | None = None
        self.confirm_button.on_click(lambda _b: self.confirm())
        self.cancel_button.on_click(lambda _b: self.cancel())

    @property
    def pending(self) -> bool:
        return self._action is not None

    def ask(self, question: str, action: Callable[[], Any], confirm_label: str = "Confirm", *,
            html_question: bool = False) -> None:
        """Show ``question`` (plain text, or HTML with ``html_question``) and wait for a click."""
        self._action = action
        text = question if html_question else html.escape(question)
        self.question.value = f'<span class="svc-msg">{text}</span>'
        self.confirm_button.description = confirm_label
        self.layout.display = "flex"

    def confirm(self) -> Any:
        action, self._action = self._action, None
        self.layout.display = "none"
        return action() if action is not None else None

    def cancel(self) -> None:
        self._action = None
        self.layout.display = "none"

