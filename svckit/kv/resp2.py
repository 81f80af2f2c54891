"""RESP2, the Redis serialization protocol version 2: a complete, binary-safe parser and encoder.

Used for the ``Service-Response-Format: resp2`` reply format (spec, Endpoints A rule 6), where the
gateway answers with the raw bytes a TCP client would see. Pure functions over bytes (sans-I/O), so
the parser can be fuzzed without a server.

Reply values, chosen so that ``parse(encode(x)) == x`` for every value the parser can produce:

==================  ======================  =============================================
wire                Python                  note
==================  ======================  =============================================
``+OK``             :class:`SimpleString`   a ``str`` subclass (status replies)
``-ERR ...``        :class:`ErrorReply`     a value, not raised: arrays may hold errors
``:42``             ``int``
``$3 abc``          ``bytes``               binary-safe
``$-1`` / ``*-1``   ``None``                null bulk string and null array alike
``*2 ...``          ``list``                nested to any depth
==================  ======================  =============================================

The parser is iterative (no recursion), so deeply nested or hostile input can only ever raise
:class:`~svckit.errors.ProtocolError`; lengths are checked against the data before anything is
allocated. hiredis is faster but is a C extension with different value types; replies of the REST
gateway are small, and this parser is not what limits it (see bench/RESULTS.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from svckit.errors import InvalidArgument, ProtocolError

__all__ = [
    "ErrorReply",
    "IncompleteReply",
    "Reply",
    "SimpleString",
    "encode",
    "encode_command",
    "parse",
    "parse_prefix",
]


class SimpleString(str):
    """A RESP2 simple string (``+OK``): a status reply, distinct from a bulk string (``bytes``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"SimpleString({str.__repr__(self)})"


@dataclass(frozen=True)
class ErrorReply:
    """A RESP2 error (``-WRONGTYPE ...``). ``message`` is the protocol error text."""

    message: str

    @property
    def code(self) -> str:
        """The error prefix (``ERR``, ``WRONGTYPE``, ``NOSCRIPT``, ...)."""
        return self.message.split(" ", 1)[0]


Reply = SimpleString | ErrorReply | int | bytes | None | list["Reply"]


class IncompleteReply(ProtocolError):
    """The data ends before the reply does (a truncated body, or more bytes still to come)."""


_CRLF = b"\r\n"
_INTEGER = re.compile(rb"-?[0-9]+\Z")


def _read_line(data: bytes, pos: int) -> tuple[bytes, int]:
    end = data.find(_CRLF, pos)
    if end < 0:
        raise IncompleteReply(f"RESP2 reply ends inside a line at byte {pos}")
    return data[pos:end], end + 2


def _read_int(line: bytes, what: str, pos: int) -> int:
    # int() alone would accept " 1", "+1" and "1_0": RESP2 allows only an optional minus and digits.
    if not _INTEGER.match(line):
        raise ProtocolError(f"RESP2 {what} at byte {pos} is not an integer: {line[:40]!r}")
    return int(line)


def parse_prefix(data: bytes, pos: int = 0) -> tuple[Reply, int]:
    """Parse one reply starting at ``pos``; return it and the position just after it.

    Raises :class:`IncompleteReply` when ``data`` ends early and :class:`ProtocolError` when it is
    malformed.
    """
    # Explicit stack of arrays being filled: [list, items still expected].
    stack: list[tuple[list[Reply], int]] = []
    size = len(data)
    while True:
        if pos >= size:
            raise IncompleteReply(f"RESP2 reply ends at byte {pos}, a value was expected")
        start = pos
        kind = data[pos]
        line, pos = _read_line(data, pos + 1)
        value: Reply
        if kind == 0x2B:  # +
            value = SimpleString(line.decode("utf-8", "replace"))
        elif kind == 0x2D:  # -
            value = ErrorReply(line.decode("utf-8", "replace"))
        elif kind == 0x3A:  # :
            value = _read_int(line, "integer", start)
        elif kind == 0x24:  # $
            length = _read_int(line, "bulk length", start)
            if length == -1:
                value = None
            elif length < 0:
                raise ProtocolError(f"RESP2 bulk length {length} at byte {start} is negative")
            else:
                end = pos + length
                if end + 2 > size:
                    raise IncompleteReply(f"RESP2 bulk string at byte {start} needs {length} bytes")
                if data[end : end + 2] != _CRLF:
                    raise ProtocolError(f"RESP2 bulk string at byte {start} is not followed by CRLF")
                value = data[pos:end]
                pos = end + 2
        elif kind == 0x2A:  # *
            count = _read_int(line, "array length", start)
            if count == -1:
                value = None
            elif count < -1:
                raise ProtocolError(f"RESP2 array length {count} at byte {start} is negative")
            elif count > 0:
                # Every element takes at least 3 bytes ("+\r\n"): refuse impossible counts early.
                if count > (size - pos) // 3 + 1:
                    raise IncompleteReply(f"RESP2 array at byte {start} announces {count} elements")
                stack.append(([], count))
                continue
            else:
                value = []
        else:
            raise ProtocolError(f"RESP2 reply has unknown type byte {bytes([kind])!r} at byte {start}")
        # Attach the finished value to the innermost open array; close every array that is now full.
        while stack:
            items, expected = stack[-1]
            items.append(value)
            if len(items) < expected:
                break
            stack.pop()
            value = items
        if not stack:
            return value, pos


def parse(data: bytes) -> Reply:
    """Parse exactly one complete reply; trailing bytes are a :class:`ProtocolError`."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"parse() needs bytes, not {type(data).__name__}")
    data = bytes(data)
    value, end = parse_prefix(data)
    if end != len(data):
        raise ProtocolError(f"RESP2 reply has {len(data) - end} unexpected trailing bytes")
    return value


def parse_all(data: bytes) -> list[Reply]:
    """Parse a concatenation of complete replies (what a pipelined TCP client reads)."""
    data = bytes(data)
    out: list[Reply] = []
    pos = 0
    while pos < len(data):
        value, pos = parse_prefix(data, pos)
        out.append(value)
    return out


def _line(prefix: bytes, text: str, what: str) -> bytes:
    raw = text.encode("utf-8")
    if b"\r" in raw or b"\n" in raw:
        raise InvalidArgument(what, "a RESP2 simple string or error cannot contain CR or LF")
    return prefix + raw + _CRLF


def encode(value: Reply | str | bytearray | memoryview) -> bytes:
    """Encode a reply as RESP2 bytes. A plain ``str`` is sent as a UTF-8 bulk string."""
    out: list[bytes] = []
    # Iterative for the same reason as the parser: any depth works.
    pending: list[object] = [value]
    while pending:
        item = pending.pop()
        if item is None:
            out.append(b"$-1\r\n")
        elif isinstance(item, SimpleString):
            out.append(_line(b"+", item, "simple string"))
        elif isinstance(item, ErrorReply):
            out.append(_line(b"-", item.message, "error"))
        elif isinstance(item, bool):
            raise InvalidArgument("value", "bool has no RESP2 form; send 0/1 or a string")
        elif isinstance(item, int):
            out.append(b":%d\r\n" % item)
        elif isinstance(item, (bytes, bytearray, memoryview, str)):
            raw = item.encode("utf-8") if isinstance(item, str) else bytes(item)
            out.append(b"$%d\r\n%s\r\n" % (len(raw), raw))
        elif isinstance(item, (list, tuple)):
            out.append(b"*%d\r\n" % len(item))
            pending.extend(reversed(item))
        else:
            raise InvalidArgument("value", f"{type(item).__name__} has no RESP2 form")
    return b"".join(out)


def encode_command(args: Iterable[str | bytes | int | float]) -> bytes:
    """Encode a command the way a TCP client sends it: an array of bulk strings."""
    parts: list[bytes] = []
    for arg in args:
        if isinstance(arg, bytes):
            parts.append(arg)
        elif isinstance(arg, (int, float)) and not isinstance(arg, bool):
            parts.append(repr(arg).encode())
        elif isinstance(arg, str):
            parts.append(arg.encode("utf-8"))
        else:
            raise InvalidArgument("args", f"{type(arg).__name__} is not a command argument")
    return encode(list(parts))
