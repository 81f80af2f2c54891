"""What a widget shows, as HTML that needs no kernel and no widget manager: the body of its static
view (:mod:`svckit.widgets._static`).

:func:`static_html` walks any ipywidgets tree and writes what each piece shows: HTML widgets as
their HTML, fields as ``label: value``, selections as the chosen item, progress bars, tabs as tabs
that switch with no script, and in place of each :class:`~svckit.widgets._chart.Chart` a line that
names it ("chart: Scores (below)"): the chart itself is an output of its own after the view.
"""

from __future__ import annotations

import html
import itertools
from typing import Any

import ipywidgets as W
from jinja2.utils import htmlsafe_json_dumps

from svckit.widgets._chart import Chart, ClickRelay

#: the static view's own styles: fields, tabs that switch with radio buttons (no script), charts
STATIC_STYLE = """<style>
.svc-static { font: 13px var(--jp-ui-font-family, sans-serif); }
.svc-s-asof { color: #6b7280; font-size: 12px; margin-bottom: 4px; }
.svc-s-row { display: flex; flex-flow: row wrap; gap: 4px 12px; align-items: flex-start; }
.svc-s-col { display: flex; flex-direction: column; gap: 4px; min-width: 0; }
.svc-s-field { color: #374151; } .svc-s-field b { font-weight: 600; }
.svc-s-field code { background: #f3f4f6; padding: 0 4px; border-radius: 3px; }
.svc-s-tabs > input { display: none; }
.svc-s-tabs > label { display: inline-block; padding: 3px 12px; border: 1px solid #d1d5db; border-bottom: none;
  border-radius: 4px 4px 0 0; background: #f3f4f6; cursor: pointer; margin-right: 2px; }
.svc-s-tabs > .svc-s-panel { display: none; border-top: 1px solid #d1d5db; padding-top: 6px; }
.svc-s-chartref { color: #6b7280; font-style: italic; }
""" + "".join(
    f".svc-s-tabs > input:nth-of-type({i}):checked + label {{ background: white; font-weight: 600; }}\n"
    f".svc-s-tabs > input:nth-of-type({i}):checked ~ .svc-s-panel:nth-of-type({i}) {{ display: block; }}\n"
    for i in range(1, 13)) + "</style>"


def _hidden(widget: Any) -> bool:
    layout = getattr(widget, "layout", None)
    return isinstance(layout, W.Layout) and (layout.display == "none" or layout.visibility == "hidden")


def _field(label: str, value: str) -> str:
    label = f"<b>{html.escape(label)}</b> " if label else ""
    return f"<span class='svc-s-field'>{label}{value}</span>"


def _text(value: Any) -> str:
    return f"<code>{html.escape(str(value))}</code>" if value not in (None, "") else "<i>(empty)</i>"


def script_json(value: Any) -> str:
    """``value`` as JSON to put inside a ``<script>`` element: ``<``, ``>``, ``&`` and ``'`` as
    ``\\u003c``-style escapes (U+2028/2029 too, by ``json.dumps``), so no stored text in it (a key
    named ``<!--<script>``, ``</script>``) can end the element early or keep it open past its end
    and swallow the rest of the page. The one way svckit embeds JSON in a page (jinja2's ``tojson``)."""
    return str(htmlsafe_json_dumps(value))


class Slots(list):  # type: ignore[type-arg]
    """The charts a static view met, in the order it met them; ``room``: how many it has outputs for
    (``None``: as many as it meets)."""

    def __init__(self, room: int | None = None) -> None:
        super().__init__()
        self.room = room


def chart_mark(chart_id: str, title: str, classes: str = "", kept: bool = True) -> str:
    """The line a static view shows in place of a chart: the chart is its own output below (svckit's
    exporter puts it back here, by ``data-chart``)."""
    where = "below" if kept else "not kept: more charts than this static view has room for"
    return (f"<div class='svc-s-chartref {html.escape(classes)}' data-chart='{html.escape(chart_id)}'>"
            f"chart: {html.escape(title)} ({where})</div>")


def _chart(chart: Chart, slots: Slots, prefix: str) -> str:
    if not chart.figure.data and not chart.figure.layout.annotations:
        return ""
    n = len(slots)
    kept = slots.room is None or n < slots.room
    if kept:
        slots.append(chart)
    return chart_mark(f"{prefix}{n}", chart.title, " ".join(chart._dom_classes), kept)


def _tabs(tab: W.Tab, slots: Slots, prefix: str) -> str:
    group = f"svc-tab-{tab.model_id}"
    heads, panels = [], []
    for i, child in enumerate(tab.children):
        title = tab.titles[i] if i < len(tab.titles) else f"tab {i + 1}"
        checked = " checked" if i == (tab.selected_index or 0) else ""
        heads.append(f"<input type='radio' name='{group}' id='{group}-{i}'{checked}>"
                     f"<label for='{group}-{i}'>{html.escape(str(title))}</label>")
        panels.append(f"<div class='svc-s-panel'>{static_html(child, slots, prefix)}</div>")
    return f"<div class='svc-s-tabs'>{''.join(heads)}{''.join(panels)}</div>"


def static_html(widget: Any, slots: Slots | None = None, prefix: str = "chart-") -> str:
    """What ``widget`` shows, as HTML that needs no kernel and no widget manager. Each chart it meets
    is appended to ``slots`` and named ``prefix<n>`` by its line in the HTML."""
    slots = Slots() if slots is None else slots
    if isinstance(widget, ClickRelay) or _hidden(widget):
        return ""
    if isinstance(widget, Chart):
        return _chart(widget, slots, prefix)
    if isinstance(widget, W.Tab):
        return _tabs(widget, slots, prefix)
    if isinstance(widget, W.Box):
        inner = "".join(static_html(c, slots, prefix) for c in widget.children)
        if not inner:
            return ""
        kind = "svc-s-row" if isinstance(widget, W.HBox) else "svc-s-col"
        return f"<div class='{kind}'>{inner}</div>"
    if isinstance(widget, (W.HTML, W.HTMLMath)):
        return widget.value
    if isinstance(widget, W.Label):
        return html.escape(widget.value)
    if isinstance(widget, W.Button):
        return ""
    label = getattr(widget, "description", "") or ""
    if isinstance(widget, (W.IntProgress, W.FloatProgress)):
        if widget.value == widget.min:
            return ""
        return _field(label, f"<progress value='{widget.value}' max='{widget.max}'></progress>")
    if isinstance(widget, W.Select):
        options = "".join(f"<option{' selected' if v == widget.value else ''}>{html.escape(str(k))}</option>"
                          for k, v in itertools.islice(zip(widget._options_labels, widget._options_values), 500))
        return _field(label, f"<select size='{min(widget.rows, 12)}' disabled>{options}</select>") if options else ""
    if isinstance(widget, W.SelectMultiple):
        return _field(label, _text(", ".join(map(str, widget.label)))) if widget.label else ""
    if isinstance(widget, (W.Dropdown, W.ToggleButtons, W.RadioButtons)):
        return _field(label, _text(widget.label))
    if isinstance(widget, (W.Checkbox, W.ToggleButton)):
        # a disabled checkbox of the page's own, not a glyph: every browser draws it in any font
        box = f"<input type='checkbox' disabled{' checked' if widget.value else ''}>"
        return _field("", f"<label>{box} {html.escape(label)}</label>")
    if isinstance(widget, W.Textarea):
        return _field(label, f"<pre>{html.escape(widget.value)}</pre>") if widget.value else ""
    if hasattr(widget, "value"):
        return _field(label, _text(widget.value))
    return ""
