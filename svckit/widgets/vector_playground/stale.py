"""Hits that no longer answer the request: the filter was edited and not applied yet (it is applied on
Enter or Search, not per keystroke). Until the next search they stay on screen dimmed, under a note
that says which filter they answer, so no one reads them as the new filter's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ipywidgets as W

from svckit.widgets._common import message_html

#: the dimming rule comes with the note, so it holds exactly while a note is shown
STALE_STYLE = "<style>.svckit-stale { opacity: 0.4; }</style>"


def stale_note(applied_filter: str) -> str:
    """What the note says while the filter typed differs from ``applied_filter`` (the hits' own)."""
    before = f"filter {applied_filter!r}" if applied_filter.strip() else "no filter"
    return f"These hits are for {before}: press Enter in the filter box (or Search) to apply the new one."


def show_stale(note: W.HTML, dimmed: Iterable[Any], why: str) -> None:
    """Show ``why`` in ``note`` and dim ``dimmed`` (``""``: clear both): widgets and Charts, whose
    ``add_class`` / ``remove_class`` are a DOMWidget's."""
    note.value = STALE_STYLE + message_html(why) if why else ""
    for w in dimmed:
        if why:
            w.add_class("svckit-stale")
        else:
            w.remove_class("svckit-stale")
