"""The explorer's slow log tab: the commands the server logged as slow (``SLOWLOG GET``), newest
first, as RedisInsight's Slow Log shows them: when, how long (µs), the command and the client; a
refresh, and ``SLOWLOG RESET`` behind a confirmation.

The command's secret arguments are masked as the console masks them (:mod:`svckit.kv.redact`: a
password after ``AUTH`` is ``***`` and its last four characters), so neither the table nor a saved
notebook's copy of it holds one. Where the token may not read the slow log (the sandbox's Read
Only token may not run SLOWLOG), the tab says so instead of showing an error."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pandas as pd

from svckit._inflight import InFlight
from svckit._units import plural
from svckit.errors import SvcError, mask
from svckit.kv.redact import redact
from svckit.widgets._common import ConfirmBar, MessageBar, error_text, frame_html
from svckit.widgets._jobs import BackgroundJob

#: entries read per refresh (SLOWLOG GET's count)
ENTRIES = 128


def _text(word: Any) -> str:
    return word.decode("utf-8", "backslashreplace") if isinstance(word, bytes) else str(word)


def _micros(value: Any) -> str:
    return f"{int(value):,} µs"


def slowlog_frame(reply: Any) -> pd.DataFrame:
    """SLOWLOG GET's entries as rows: ``id, time (UTC), duration_us, command, client`` (secrets masked)."""
    rows = []
    for entry in reply or []:
        entry_id, when, micros, argv = entry[:4]
        words = [_text(w) for w in argv]
        client = " ".join(_text(w) for w in entry[4:6] if _text(w))
        rows.append((int(entry_id), int(when), int(micros), " ".join(redact(words, mask)), client))
    frame = pd.DataFrame(rows, columns=["id", "time", "duration_us", "command", "client"])
    frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
    return frame.astype({"id": "Int64", "duration_us": "Int64", "command": "string", "client": "string"})


class SlowLogView(W.VBox):
    """``refresh()`` reads the slow log; ``reset()`` empties it (the button asks first)."""

    def __init__(self, kv: Any, **kwargs: Any) -> None:
        self.kv = kv
        self.frame = pd.DataFrame()
        self.readonly = bool(getattr(kv, "readonly", False))
        self.slowlog_refresh = W.Button(description="Refresh", icon="refresh", layout=W.Layout(width="100px"))
        self.slowlog_reset = W.Button(description="Reset…", icon="eraser", layout=W.Layout(width="100px"),
                                      tooltip="SLOWLOG RESET: empty the slow log")
        self.slowlog_status = MessageBar()
        self.slowlog_table = W.HTML()
        self.slowlog_confirm = ConfirmBar()
        self.job = BackgroundJob(name="svckit-slowlog")  # a click's read: off the kernel's thread
        super().__init__([W.HBox([self.slowlog_refresh, self.slowlog_reset]), self.slowlog_confirm,
                          self.slowlog_status, W.Box([self.slowlog_table], layout=W.Layout(max_height="420px",
                                                                                           overflow="auto"))],
                         **kwargs)
        self.add_class("svc-slowlog")
        self.slowlog_refresh.on_click(lambda _b: self.refresh(background=True))
        self.slowlog_reset.on_click(lambda _b: self.slowlog_confirm.ask(
            "Empty the slow log (SLOWLOG RESET)? Its entries are gone for every client.", self.reset, "Reset"))
        if self.readonly:
            self.slowlog_reset.disabled = True
            self.slowlog_reset.tooltip = "this explorer uses a Read Only token: the slow log is not reset"

    def refresh(self, background: bool = False) -> pd.DataFrame:
        """SLOWLOG GET: the newest entries first, as a table; a refusal is said, not raised. The
        logging threshold is read beside it (one round trip for both). In a background job with
        ``background`` (what the Refresh button and opening the tab do). Returns the frame shown."""
        if not self.job.running:
            self.job.start(lambda _progress, _cancel: self._read(), on_done=self._took, background=background)
        return self.frame

    def wait(self, timeout: float | None = 60) -> bool:
        """Wait for a read under way to be shown; True once none is running."""
        return self.job.wait(timeout)

    def _read(self) -> tuple[Any, str]:
        """SLOWLOG GET's reply (or its refusal) and the threshold's words, side by side (in the job)."""
        with InFlight(limit=2) as flight:
            got = flight.submit(self._entries)
            threshold = flight.submit(self._threshold)
        return got.result(), threshold.result()

    def _took(self, read: tuple[Any, str]) -> None:
        reply, threshold = read
        if isinstance(reply, SvcError):
            self.frame = pd.DataFrame()
            self.slowlog_table.value = ""
            who = "this explorer's Read Only token" if self.readonly else "this token"
            self.slowlog_status.say(f"The slow log cannot be read with {who}: the service refused SLOWLOG GET "
                                    f"({error_text(reply)}). A Standard token reads it.", "info")
            return
        self.frame = slowlog_frame(reply)
        threshold_text, n = threshold or " slower than the server's threshold", len(self.frame)
        if n:
            self.slowlog_status.say(f"{plural(n, 'command')}{threshold_text}, newest first "
                                    f"(the last {ENTRIES} at most).", "info")
        else:
            self.slowlog_status.say(f"The slow log is empty: no command{threshold_text} since it was last reset.",
                                    "info")
        shown = self.frame.rename(columns={"duration_us": "duration"})
        self.slowlog_table.value = frame_html(shown, max_rows=ENTRIES, formatters={"duration": _micros}) if n else ""

    def _entries(self) -> Any:
        """SLOWLOG GET's reply, or the error that refused it."""
        try:
            return self.kv.execute("SLOWLOG", "GET", ENTRIES)
        except SvcError as exc:
            return exc

    def _threshold(self) -> str:
        """" slower than 10,000 µs" when CONFIG GET may read the setting, else ""."""
        try:
            reply = self.kv.execute("CONFIG", "GET", "slowlog-log-slower-than")
            value = int(dict(zip(reply[0::2], reply[1::2]))["slowlog-log-slower-than"])
        except (SvcError, KeyError, ValueError, TypeError):
            return ""
        return f" slower than {value:,} µs"

    def reset(self) -> bool:
        """SLOWLOG RESET, then the (empty) log again."""
        try:
            self.kv.execute("SLOWLOG", "RESET")
        except SvcError as exc:
            self.slowlog_status.say(f"SLOWLOG RESET was refused: {error_text(exc)}", "error")
            return False
        self.refresh()
        self.slowlog_status.say(f"SLOWLOG RESET: done. {self.slowlog_status.message}", "ok")
        return True
