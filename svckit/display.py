"""How svckit's DataFrames read in a notebook: formatted on display only, the data left as it is.

::

    from svckit import display, frames
    display.readable(frames.runs_frame(runs))   # a pandas Styler: "49 ms", "2026-11-26 02:11:04"
    display.use_readable_frames()               # in IPython: every marked frame displays this way

:func:`readable` turns a frame into a pandas ``Styler`` whose cells say durations as ``49 ms`` or
``1 min 35 s``, times in UTC to the second (the header says ``(UTC)``), the columns its mark gives a
unit in that unit's text, as the widgets write it (bytes ``1.3 MiB``, counts ``2,003``, shares
``44.6%``, scores in one precision per column ``0.032787``, checks ``yes`` / ``no``), long URLs as
``host/…/last/segments`` and other long text cut at 120 characters (each with the whole value in
its tooltip), and missing values as ``—``. The frame keeps its dtypes: a ``Timedelta`` column stays
one, a time stays timezone-aware. Like pandas' own repr, a long frame shows ``display.min_rows`` of
its rows and says how many it has.

Frames that :mod:`svckit.frames` (and the analyses) return carry a mark (:func:`mark`, an entry of
``DataFrame.attrs`` that pandas carries through selection, ``head``, sorting and merges);
:func:`use_readable_frames` makes IPython display the marked ones with :func:`readable` and every
other DataFrame exactly as pandas does.

How an account limit and a usage read (:func:`format_limit`, :func:`plan_text`, :func:`usage_text`,
:data:`GROUP_TITLES`) is here too: the account frames' ``display`` columns and the dashboard's
cards write them with these.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from svckit._units import (
    DECIMALS,
    READABLE,
    UNITS,
    count_text,
    duration_text,
    mark,
    share_text,
    short_url,
    timestamp_text,
)

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

__all__ = ["GROUP_TITLES", "READABLE", "format_limit", "ipython_shell", "is_marked", "is_url", "mark", "plan_text",
           "readable", "unit_of", "url_html", "usage_text", "use_readable_frames"]

TEXT_LIMIT = 120  # characters of text shown in a cell; the rest is in its tooltip
TITLE_LIMIT = 1000  # characters of a tooltip: a cell holding a 384-float vector stays a few kB
MISSING = "—"

_URL_PREFIXES = ("http://", "https://")
_NOWRAP = [("white-space", "nowrap")]
_GAP = "2px dashed #c4c4c4"  # where rows or columns are left out, as pandas' "..." row


def is_marked(frame: Any) -> bool:
    """True for a DataFrame marked to display readably (:func:`mark`)."""
    return isinstance(frame, pd.DataFrame) and bool(frame.attrs.get(READABLE))


# -- one formatter per column ------------------------------------------------------------------------
def is_url(value: Any) -> bool:
    """True for an http(s) URL (a string)."""
    return isinstance(value, str) and value.startswith(_URL_PREFIXES)


def _with_title(shown: str, full: str) -> str:
    title = full if len(full) <= TITLE_LIMIT else full[: TITLE_LIMIT - 1] + "…"
    return f'<span title="{html.escape(title)}">{html.escape(shown)}</span>'


def url_html(url: str) -> str:
    """A URL as every svckit table shows it: :func:`short_url`, the whole URL in the tooltip."""
    return _with_title(short_url(url), url)


def _text_cell(value: Any) -> str:
    """Any other value: URLs shortened, long text cut, the whole of either in the tooltip; escaped.
    A dict or a list (a hash's fields, a JSON document, a list's items) reads as JSON, not as
    Python's repr."""
    text = json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (dict, list)) else str(value)
    if is_url(text):
        return url_html(text)
    if len(text) > TEXT_LIMIT:
        return _with_title(text[: TEXT_LIMIT - 1] + "…", text)
    return html.escape(text)


def _float_formatter(values: Sequence[Any], precision: int, least: int = 1) -> Callable[[Any], str]:
    """Floats in one precision per column, as pandas' repr writes a column: ``precision`` decimals
    less the trailing zeros every value shares (at least ``least`` left: a score column of whole
    numbers reads ``1``, a float column ``1.0``), or scientific notation when a value is tiny, or huge
    and long."""
    finite = [float(v) for v in values if not pd.isna(v) and math.isfinite(float(v))]
    fixed = [f"{v:.{precision}f}" for v in finite]
    tiny = any(0 < abs(v) < 10 ** -precision for v in finite)
    huge = any(abs(v) > 1e6 for v in finite) and max(map(len, fixed), default=0) > precision + 6
    if tiny or huge:
        return lambda v: f"{float(v):.{precision}e}"
    shared = min((len(t) - len(t.rstrip("0")) for t in fixed), default=0)
    decimals = max(precision - shared, min(precision, least))
    return lambda v: f"{float(v):.{decimals}f}" if math.isfinite(float(v)) else str(float(v))


def _kind(column: pd.Series) -> str:
    dtype = column.dtype
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "duration"
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "time"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    values = column.dropna()
    if len(values) and all(is_url(v) for v in values):
        return "url"
    return "text"


def _bytes_text(value: Any) -> str:
    from svckit.kv.formats import format_bytes  # the one byte formatter (binary units, as Redis reports)

    return format_bytes(value) or MISSING


#: how a column with a unit (:func:`svckit._units.mark`) writes a value that is not missing
_UNIT_TEXTS: dict[str, Callable[[Any], str]] = {
    "bytes": _bytes_text,
    "count": lambda v: count_text(float(v)),
    "share": lambda v: share_text(float(v)),
    "percent": lambda v: share_text(float(v) / 100),
    "ms": lambda v: duration_text(float(v) / 1000),
    "seconds": lambda v: duration_text(float(v)),
    "yes/no": lambda v: "yes" if v else "no",
}


# -- account limits and usage, as the account frames' display columns and cards write them ----------
#: the titles of the account limits' groups (:data:`svckit.frames.ACCOUNT_GROUPS`)
GROUP_TITLES: dict[str, str] = {
    "throughput": "Throughput", "sizes": "Sizes", "dlq": "Dead-letter queue", "scheduling": "Scheduling",
    "parallelism": "Parallelism", "plan": "Plan",
}


def format_limit(value: Any, unit: str) -> str:
    """A limit as a person reads it: bytes in KiB/MiB, ms/s as durations, big counts with separators."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit == "bytes":
        return _bytes_text(value)
    if unit == "ms":
        return duration_text(float(value) / 1000)
    if unit == "s":
        return duration_text(float(value))
    if unit == "unix s":
        return "never" if not value else pd.Timestamp(int(value), unit="s", tz="UTC").strftime("%Y-%m-%d %H:%M UTC")
    if unit == "USD":
        return f"${float(value):,.2f}"
    if isinstance(value, (int, float)):
        return f"{value:,}" + (f" {unit}" if unit else "")
    return str(value) if value != "" else MISSING


def plan_text(value: Any, _unit: str = "") -> str:
    """A plan by its display name (``queue_enterprise_1m`` reads ``Fixed 1M``), ``—`` for none."""
    from svckit.account.plans import plan_title  # the plans' names, a table of the account area

    return plan_title(str(getattr(value, "value", value))) if value else MISSING


def usage_text(used: int, limit: int | None, unit: str = "count") -> str:
    """What is used against a limit: ``12 of 10,000``, ``1.3 MiB of 256.0 MiB``, or the use alone
    where there is no limit."""
    text = _bytes_text if unit == "bytes" else (lambda n: f"{n:,}")
    return f"{text(used)} of {text(limit)}" if limit is not None else text(used)


def unit_of(label: Hashable, units: dict[Any, str]) -> str | None:
    """The unit of a column: its own, or that of the longest marked label it extends by a word (a
    merge's ``memory exact`` is in ``memory``'s unit)."""
    if label in units:
        return units[label]
    text = _label(label)
    stems = [key for key in units if isinstance(key, str) and text.startswith((key + " ", key + "_"))]
    return units[max(stems, key=len)] if stems else None


def _formatter(kind: str, column: pd.Series, unit: str | None = None) -> Callable[[Any], str]:
    if unit == "score" and kind not in ("time", "url"):  # six decimals at most, as the widgets write a score
        return _float_formatter(column.tolist(), DECIMALS, least=0)
    if unit in _UNIT_TEXTS and kind not in ("time", "url"):
        return _UNIT_TEXTS[unit]
    if kind == "duration":
        return lambda v: duration_text(v.total_seconds())
    if kind == "time":
        return timestamp_text
    if kind == "float":
        return _float_formatter(column.tolist(), int(pd.get_option("display.precision")))
    return _text_cell


# -- the shown part of a frame, as pandas' repr picks it ------------------------------------------------
def _shown(df: pd.DataFrame) -> tuple[pd.DataFrame, int | None, int | None]:
    """The rows and columns pandas' HTML repr would show: beyond ``display.max_rows`` rows the first
    and last halves of ``display.min_rows``, beyond ``display.max_columns`` columns the first and
    last halves of those. Also the positions where left-out rows and columns were (or None)."""
    max_rows, min_rows = pd.get_option("display.max_rows"), pd.get_option("display.min_rows")
    max_cols = pd.get_option("display.max_columns")
    row_gap = col_gap = None
    if max_rows and len(df) > max_rows:
        keep = min(min_rows, max_rows) if min_rows else max_rows
        half = keep // 2
        if half >= 1:
            df, row_gap = pd.concat([df.iloc[:half], df.iloc[-half:]]), half
        else:
            df = df.iloc[:keep]
    if max_cols and df.shape[1] > max_cols:
        half = max_cols // 2
        if half >= 1:
            df, col_gap = pd.concat([df.iloc[:, :half], df.iloc[:, -half:]], axis=1), half
        else:
            df = df.iloc[:, :max_cols]
    return df, row_gap, col_gap


def _label(label: Hashable) -> str:
    return " / ".join(map(str, label)) if isinstance(label, tuple) else str(label)


# -- the Styler ------------------------------------------------------------------------------------------
def readable(df: pd.DataFrame) -> Styler:
    """``df`` as a pandas ``Styler`` that reads well: durations (``49 ms``, ``1 min 35 s``), times in
    UTC (``2026-11-26 02:11:04``, the header ``created_at (UTC)``), URLs shortened and other text cut
    at 120 characters (the whole value in the tooltip), ``—`` for missing values, floats as pandas'
    repr writes them. Only the display changes: ``df`` and its dtypes are left as they are.

    A frame longer than ``display.max_rows`` shows ``display.min_rows`` rows (the first and last
    halves) and a caption ``N rows × M columns``; columns beyond ``display.max_columns`` likewise.
    The HTML is the same every time for the same frame (no per-cell ids, a uuid of the styles), so
    a re-run cell leaves a saved notebook unchanged."""
    shown, row_gap, col_gap = _shown(df)
    labels = [_label(c) for c in shown.columns]
    units = [unit_of(c, df.attrs.get(UNITS) or {}) for c in shown.columns]
    # positions stand for labels that repeat or have levels, so each column gets its own formatter
    if isinstance(shown.columns, pd.MultiIndex) or not shown.columns.is_unique:
        shown = shown.set_axis(range(shown.shape[1]), axis=1)
    kinds = [_kind(shown.iloc[:, i]) for i in range(shown.shape[1])]
    headers = {key: html.escape(text) + (" (UTC)" if kind == "time" else "")
               for key, text, kind in zip(shown.columns, labels, kinds)}

    styles: list[dict[str, Any]] = [
        {"selector": "caption", "props": [("caption-side", "bottom"), ("text-align", "left")]},
    ]
    nowrap = [f"td.col{i}" for i, (kind, unit) in enumerate(zip(kinds, units))
              if kind in ("duration", "time", "url") or unit in ("bytes", "ms", "seconds")]
    if nowrap:
        styles.append({"selector": ",".join(nowrap), "props": _NOWRAP})
    if row_gap is not None:
        styles.append({"selector": f"tbody tr:nth-child({row_gap + 1}) > *", "props": [("border-top", _GAP)]})
    if col_gap is not None:
        styles.append({"selector": f"td.col{col_gap}, th.col_heading.col{col_gap}",
                       "props": [("border-left", _GAP)]})
    uuid = hashlib.sha1(repr((headers, styles)).encode(), usedforsecurity=False).hexdigest()[:10]

    from pandas.io.formats.style import Styler  # needs jinja2: imported when a frame is drawn

    styler = Styler(shown, uuid=uuid, cell_ids=False, table_styles=styles, table_attributes='class="dataframe"')
    styler.format({key: _formatter(kind, shown[key], unit) for key, kind, unit in zip(shown.columns, kinds, units)},
                  na_rep=MISSING, escape=None)
    styler.format_index(escape="html", na_rep=MISSING, axis=0)
    styler.format_index(lambda key: headers[key], axis=1, escape=None)
    styler.format_index_names(escape="html", axis=0)
    styler.format_index_names(escape="html", axis=1)
    dimensions = pd.get_option("display.show_dimensions")
    if dimensions is True or (dimensions == "truncate" and shown.shape != df.shape):
        styler.set_caption(f"{len(df):,} rows × {df.shape[1]:,} columns")
    return styler


# -- IPython ---------------------------------------------------------------------------------------------
def _html(df: pd.DataFrame) -> str | None:
    """What IPython shows as a DataFrame's HTML: readable for a marked frame, pandas' own otherwise."""
    if not is_marked(df):
        return df._repr_html_()
    if not pd.get_option("display.notebook_repr_html"):
        return None  # pandas shows only text then; so does a marked frame
    try:
        return readable(df).to_html()
    except Exception as exc:  # noqa: BLE001 - a frame not foreseen here: pandas' look, not a traceback
        warnings.warn(f"svckit.display could not draw this frame ({exc!r}); showing pandas' own table",
                      stacklevel=2)
        return df._repr_html_()


def ipython_shell() -> Any:
    """The running IPython shell (a notebook's kernel), or None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def use_readable_frames(shell: Any = None) -> bool:
    """Show marked DataFrames with :func:`readable` in the running IPython (or ``shell``), every
    other DataFrame as pandas does; text output stays pandas' own. Calling it again changes nothing.
    Returns False, doing nothing, outside IPython."""
    shell = shell if shell is not None else ipython_shell()
    if shell is None:
        return False
    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, _html)
    return True
