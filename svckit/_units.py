"""How svckit writes a duration, a time and a URL for a person: the one set of unit formatters that
frames' display (:mod:`svckit.display`), the widgets, plan limits and progress lines share::

    duration_text(0.049)        '49 ms'          duration_text(95)      '1 min 35 s'
    duration_text(2.34)         '2.3 s'          duration_text(3725)    '1 h 02 min'
    timestamp_text(ts)          '2026-11-26 02:11:04'   (in UTC; the column header says so)
    short_url(url)              '127.0.0.1:39135/…/workflows/nightly'
    count_text(2003.0)          '2,003'          share_text(0.446428)   '44.6%'

Pure functions of plain values (pandas is not imported here), and the name of the mark a DataFrame
carries to be displayed with them (:func:`mark`, with the unit of each numeric column that has
one: ``mark(frame, memory="bytes", keys="count")``), so the clients' modules mark what they return
without importing the display layer above them.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, TypeVar

__all__ = ["DECIMALS", "READABLE", "UNITS", "count_text", "decimal_text", "duration_text", "mark", "plural", "share_text",
           "short_url", "timestamp_text"]

#: decimals of a score or a share written as text: pandas' display precision, so a number reads the
#: same in a frame, a widget's table, a chart's label and an explanation's formula
DECIMALS = 6

#: the ``DataFrame.attrs`` key of a frame shown with :func:`svckit.display.readable` in a notebook
READABLE = "svckit.readable"
#: the ``DataFrame.attrs`` key of the units of a marked frame's columns: column label -> unit
UNITS = "svckit.units"
#: the units a column can have, as :mod:`svckit.display` writes them: ``bytes`` (``1.3 MiB``),
#: ``count`` (``2,003``), ``share`` of 1 and ``percent`` of 100 (``44.6%``), ``ms`` and ``seconds`` (``1 min 35 s``),
#: ``score`` (``0.032787``: :func:`decimal_text`) and ``yes/no`` (a check: ``yes``, ``no``)
UNIT_NAMES = frozenset({"bytes", "count", "share", "percent", "ms", "seconds", "score", "yes/no"})

_F = TypeVar("_F")


def mark(frame: _F, **units: str) -> _F:
    """Mark ``frame`` (a DataFrame) to be displayed readably, with the unit of each column named in
    ``units`` (one of :data:`UNIT_NAMES`; a label that is no identifier: ``**{"memory ±": "bytes"}``);
    pandas carries ``attrs`` through selection, ``head``, sorting, merges and concatenation, and a
    merge's ``memory exact`` reads as its ``memory``. Only the display changes. Returns the frame."""
    unknown = set(units.values()) - UNIT_NAMES
    if unknown:
        raise ValueError(f"mark: unknown unit(s) {sorted(unknown)}; the units are {sorted(UNIT_NAMES)}")
    frame.attrs[READABLE] = True  # type: ignore[attr-defined]
    if units:
        frame.attrs[UNITS] = {**frame.attrs.get(UNITS, {}), **units}  # type: ignore[attr-defined]
    return frame


def count_text(value: float) -> str:
    """A count with thousands separators, whole: ``2003.0`` is ``2,003`` (an estimate rounds)."""
    return f"{value:,.0f}" if math.isfinite(value) else "—"


def plural(n: int, unit: str) -> str:
    """A count and its unit, plural where it is not one: ``1 key``, ``0 keys``, ``1,541 keys``."""
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def share_text(value: float) -> str:
    """A share of 1 as a percentage to a tenth, as the widgets write it: ``0.446428`` is ``44.6%``."""
    return f"{value:.1%}" if math.isfinite(value) else "—"


def _half_up(x: float) -> int:
    return math.floor(x + 0.5)


def duration_text(seconds: float) -> str:
    """A duration as people read it, to two significant units at most: ``49 ms``, ``2.3 s``,
    ``12 s``, ``1 min 35 s``, ``1 h 02 min``, ``2 d 03 h``; a whole larger unit drops the zero part
    (``1 h``, ``7 d``). A negative duration is its absolute value's text after ``-``."""
    if math.isnan(seconds):
        return "—"
    if seconds < 0:
        return "-" + duration_text(-seconds)
    if math.isinf(seconds):
        return "∞"
    if _half_up(seconds * 1000) < 1000:
        return f"{_half_up(seconds * 1000)} ms"
    tenths = _half_up(seconds * 10)
    if tenths < 100:
        return f"{tenths // 10} s" if tenths % 10 == 0 else f"{tenths / 10:.1f} s"
    whole = _half_up(seconds)
    if whole < 60:
        return f"{whole} s"
    # each pair rounds to its smaller unit and, once that carries into the next pair, moves up:
    # 3599.7 s is "1 h", not "60 min"
    if whole < 3600:
        return _pair(*divmod(whole, 60), "min", "s")
    minutes = _half_up(seconds / 60)
    if minutes < 24 * 60:
        return _pair(*divmod(minutes, 60), "h", "min")
    return _pair(*divmod(_half_up(seconds / 3600), 24), "d", "h")


def _pair(big: int, small: int, big_name: str, small_name: str) -> str:
    return f"{big} {big_name}" + (f" {small:02d} {small_name}" if small else "")


def timestamp_text(ts: Any) -> str:
    """A time in UTC to the second, ``2026-11-26 02:11:04``, without the zone (the column header
    says ``(UTC)``). ``ts`` is a ``datetime`` or a pandas ``Timestamp``; a naive one is taken as UTC."""
    if ts is None or ts != ts:  # noqa: PLR0124 - NaT, like NaN, is not equal to itself
        return "—"
    if not isinstance(ts, datetime):
        raise TypeError(f"timestamp_text: expected a datetime or Timestamp, got {type(ts).__name__}")
    ts = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    return ts.strftime("%Y-%m-%d %H:%M:%S")


def short_url(url: str, limit: int = 48) -> str:
    """``url`` as a table shows it: without its scheme (every URL of a column reads alike; the whole
    URL is in the cell's tooltip), and in at most ``limit`` characters, keeping the host (and port)
    and as many trailing path segments as fit, the middle as ``…``:
    ``127.0.0.1:39135/…/workflows/nightly``."""
    rest = url.split("://", 1)[1] if "://" in url else url
    if len(rest) <= limit:
        return rest
    host, _, path = rest.partition("/")
    if len(host) + 3 >= limit:
        return host[: limit - 1] + "…"
    segments = path.rstrip("/").split("/")
    room = limit - len(host) - 3  # "/…/"
    tail = segments.pop()
    if len(tail) > room:
        return f"{host}/…/{tail[: room - 1]}…"
    while segments and len(segments[-1]) + 1 + len(tail) <= room:
        tail = f"{segments.pop()}/{tail}"
    return f"{host}/…/{tail}"


def decimal_text(value: float, decimals: int = DECIMALS) -> str:
    """A float in ``decimals`` decimals without trailing zeros: 2/61 is ``0.032787``, 1.0 is ``1``;
    scientific below ``10**-decimals`` (``2.5e-08``), where fixed decimals would say 0."""
    if not math.isfinite(value):
        return str(value)
    if value != 0 and abs(value) < 10.0 ** -decimals:
        return f"{value:.{decimals}e}"
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
