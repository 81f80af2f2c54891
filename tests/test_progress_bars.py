"""svckit._progress in a notebook: a tqdm bar is a widget there, and a closed widget's output reads
"Loading widget..." or "model not found" in the saved notebook. The Reporter shows the widget bar
itself, with a display id, and replaces it with a line of text when the phase ends."""

from __future__ import annotations

from typing import Any

import pytest
import tqdm.auto
import tqdm.notebook

from svckit._progress import Reporter


def test_a_notebook_bar_leaves_a_line_of_text_where_the_widget_was(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[tuple[str, Any]] = []

    class Handle:
        def update(self, obj: Any, raw: bool = False) -> None:
            shown.append(("update", obj))

    def display(obj: Any, display_id: bool = False) -> Handle:
        shown.append(("display", obj))
        return Handle()

    monkeypatch.setattr(tqdm.auto, "tqdm", tqdm.notebook.tqdm)  # as tqdm.auto picks in a kernel
    monkeypatch.setattr("IPython.display.display", display)
    with Reporter(True, desc="evaluate") as report:
        for done in range(1, 9):
            report("batches", done, 8, unit="batches")
    assert [kind for kind, _ in shown] == ["display", "update"]
    assert type(shown[0][1]).__name__ == "TqdmHBox"  # the widget, shown once
    assert shown[1][1]["text/plain"].startswith("evaluate batches: 8 of 8 batches in ")
