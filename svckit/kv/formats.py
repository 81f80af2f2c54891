"""Formatters for values kept in a common encoding: JSON, hex, base64, gzip, msgpack (where installed),
and :func:`format_bytes`, the one byte-count formatter of svckit (frames, reports, widgets).

What the KV explorer's value viewer calls, and a notebook user alike::

    from svckit.kv import KV, format_value
    kv = KV.from_env()
    raw = kv.as_bytes().get("blob")             # the value as bytes (the same client, bytes replies)
    shown = format_value(raw, "gzip")
    shown.ok, shown.text, shown.note             # False, '', 'not valid gzip: Not a gzipped file ...'

``format_value`` never raises for a value that is not valid in the chosen encoding: the viewer shows
``note`` instead, so a person trying formats one after another sees why one does not fit. Nor for
any value a key can hold: JSON nested deeper than :data:`MAX_JSON_DEPTH` (``"[" * 5000 + "]" * 5000``
is a 10 KB string) is shown as its text, not parsed into a structure every recursive walk (the
parser, the pretty printer, a flattener) would overflow the stack on.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import math
import zlib
from dataclasses import dataclass
from typing import Any

from svckit.errors import InvalidArgument

try:  # optional: msgpack is offered only where it is installed
    import msgpack as _msgpack
except ImportError:  # pragma: no cover - depends on the environment
    _msgpack = None

#: Every encoding :func:`format_value` knows, in the order a viewer offers them.
ENCODINGS: tuple[str, ...] = ("raw", "json", "hex", "base64", "gzip", "msgpack")
#: Bytes shown by ``hex`` at most (a dump of a megabyte helps nobody).
HEX_LIMIT = 64 * 1024
#: Control characters (but tab and line breaks) shown as ``\\xNN`` in a binary value
_CONTROL_ESCAPES = {c: f"\\x{c:02x}" for c in range(32) if chr(c) not in "\t\n\r"} | {127: "\\x7f"}
#: JSON nested deeper than this is shown as text (RedisJSON refuses documents deeper than 128 levels)
MAX_JSON_DEPTH = 128
#: Binary units, as Redis reports memory (MEMORY USAGE, INFO memory).
BYTE_UNITS: tuple[str, ...] = ("B", "KiB", "MiB", "GiB", "TiB")


def format_bytes(n: float | None) -> str:
    """A byte count as a person reads it, in binary units: ``512 -> '512 B'``, ``1536 -> '1.5 KiB'``,
    ``1_048_576 -> '1.0 MiB'``, with thousands separators (``'1,023 B'``, ``'2,048.0 TiB'``).
    None, NaN and ``pd.NA`` give ``""`` (a caller that wants a dash writes ``format_bytes(n) or "—"``)."""
    try:
        size = float(n)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    if math.isnan(size):
        return ""
    for unit in BYTE_UNITS[:-1]:
        if abs(size) < 1024:
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} {BYTE_UNITS[-1]}"


@dataclass(frozen=True)
class Formatted:
    """A value shown in one encoding: ``text`` to display, ``ok`` False when the value is not valid in
    that encoding (``note`` says why; ``text`` is then empty). ``note`` may also carry a remark on a
    valid value (binary bytes shown escaped, a dump cut short)."""

    encoding: str
    ok: bool
    text: str
    note: str = ""


def available_encodings() -> list[str]:
    """The encodings usable here: msgpack only when the ``msgpack`` package is importable."""
    return [e for e in ENCODINGS if e != "msgpack" or _msgpack is not None]


def _as_bytes(value: bytes | str) -> bytes:
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)


def _readable(data: bytes) -> tuple[str, str]:
    """UTF-8 text as is; other bytes with ``\\x`` escapes and a note saying so."""
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        text = data.decode("utf-8", "backslashreplace").translate(_CONTROL_ESCAPES)
        return text, f"binary: {len(data):,} bytes, shown with \\x escapes"


class TooDeep(ValueError):
    """JSON (or a decoded structure) nested deeper than :data:`MAX_JSON_DEPTH`."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_JSON_DEPTH} levels")


def json_depth(doc: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep lists and dicts nest in ``doc`` (a scalar: 0), walked without recursion; the walk stops
    at ``limit + 1``."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = value.values()
        elif not isinstance(value, (list, tuple)):
            continue
        deepest = max(deepest, depth)
        if depth > limit:
            break
        stack.extend((v, depth + 1) for v in value)
    return deepest


def parse_json(text: str) -> Any:
    """``json.loads`` for any text a key can hold: :class:`TooDeep` (a ValueError) for a document nested
    deeper than :data:`MAX_JSON_DEPTH`, never RecursionError (the parser recurses once per level and
    raises it past Python's recursion limit: ``"[" * 5000``)."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise TooDeep from None
    if json_depth(doc) > MAX_JSON_DEPTH:
        raise TooDeep
    return doc


def _pretty_json(doc: Any) -> str:
    """``doc`` (no deeper than MAX_JSON_DEPTH, which its caller checked) as indented JSON."""
    return json.dumps(doc, indent=2, ensure_ascii=False, default=repr)


def _as_json(encoding: str, text: str, note: str = "") -> Formatted:
    """``text`` pretty-printed as JSON (ValueError when it is not JSON), or as it is, saying so, when it
    nests deeper than MAX_JSON_DEPTH."""
    try:
        return Formatted(encoding, True, _pretty_json(parse_json(text)), note)
    except TooDeep as exc:
        return Formatted(encoding, True, text, "; ".join(filter(None, [note, f"JSON {exc}: shown as text"])))


def _decoded(encoding: str, data: bytes) -> Formatted:
    """Bytes an encoding decoded to: pretty JSON when they are JSON, else readable text."""
    text, note = _readable(data)
    try:
        return _as_json(encoding, text, note)
    except ValueError:
        return Formatted(encoding, True, text, note)


def format_value(value: bytes | str | None, encoding: str = "raw") -> Formatted:
    """Show ``value`` (bytes for binary values: see :meth:`KV.as_bytes`) in ``encoding``.

    ``raw``: the text (binary bytes escaped); ``json``: pretty-printed; ``hex``: a dump of the bytes;
    ``base64`` / ``gzip`` / ``msgpack``: the value decoded from that encoding (shown as pretty JSON
    when the result is JSON). A value that is not valid in ``encoding`` gives ``ok=False`` and a note
    ``"not valid gzip: ..."``; an unknown encoding is an :class:`~svckit.errors.InvalidArgument`."""
    if encoding not in ENCODINGS:
        raise InvalidArgument("encoding", f"must be one of {', '.join(ENCODINGS)}, not {encoding!r}")
    if value is None:
        return Formatted(encoding, True, "", "no value")
    data = _as_bytes(value)
    if encoding == "raw":
        text, note = _readable(data)
        return Formatted(encoding, True, text, note)
    if encoding == "hex":
        shown = data[:HEX_LIMIT]
        lines = [f"{i:08x}  {shown[i:i + 16].hex(' ')}" for i in range(0, len(shown), 16)]
        note = f"first {HEX_LIMIT:,} of {len(data):,} bytes" if len(data) > HEX_LIMIT else ""
        return Formatted(encoding, True, "\n".join(lines), note)
    try:
        if encoding == "json":
            return _as_json(encoding, _readable(data)[0])
        if encoding == "base64":
            return _decoded(encoding, base64.b64decode(data.strip(), validate=True))
        if encoding == "gzip":
            return _decoded(encoding, gzip.decompress(data))
        if _msgpack is None:
            return Formatted(encoding, False, "", "msgpack is not installed here (pip install msgpack)")
        doc = _msgpack.unpackb(data, raw=False, strict_map_key=False)
        if json_depth(doc) > MAX_JSON_DEPTH:  # a msgpack value nests as deep as it likes; no text to fall back to
            return Formatted(encoding, False, "", f"msgpack value {TooDeep()}: shown in hex only")
        return Formatted(encoding, True, _pretty_json(doc))
    except (ValueError, binascii.Error, OSError, EOFError, zlib.error, TypeError) as exc:
        return Formatted(encoding, False, "", f"not valid {encoding}: {str(exc) or type(exc).__name__}")
    except Exception as exc:  # noqa: BLE001 - msgpack's own errors (ExtraData, FormatError, ...)
        return Formatted(encoding, False, "", f"not valid {encoding}: {type(exc).__name__}: {exc}")


def json_document(text: Any) -> Any:
    """The parsed document when ``text`` is a JSON object or array (a JSON document kept in a string, as
    the sandbox's JSON.* emulation and many apps store one), else None: also for one nested deeper
    than :data:`MAX_JSON_DEPTH`, which a viewer shows as text."""
    if not isinstance(text, str) or text[:1] not in ("{", "["):
        return None
    try:
        doc = parse_json(text)
    except ValueError:
        return None
    return doc if isinstance(doc, (dict, list)) else None


__all__ = ["BYTE_UNITS", "ENCODINGS", "MAX_JSON_DEPTH", "Formatted", "TooDeep", "available_encodings",
           "format_bytes", "format_value", "json_depth", "json_document", "parse_json"]
