"""What one key-value request may cost the gateway, and its work done in slices.

The gateway's work per command (reading its JSON row, checking it, the RESP write and read, its JSON
envelope, its monitor line) is Python on the event loop that serves every area. Done in one go, a
pipeline of 300,000 PINGs held every area 1-2 s, and one of 1,000,000 PINGs 5-11 s, whichever token
sent it. So each request has a budget, and its work is cut into slices:

- bytes: the body cap (``kv_max_request_size``, 413 before the body is read: svckit/sandbox/limits.py)
  and the same size per command, path arguments included (400);
- commands: at most ``kv_max_request_commands`` in one /pipeline or /multi-exec, counted while the
  body is read, so a larger one is answered 413 before any of it runs (:class:`TooManyCommands`);
- time: a pipeline goes to Redis a slice at a time, and once ``kv_max_request_seconds`` have passed
  since its first slice was sent, the slices not yet sent are not run: each of their commands
  answers an ``{error}`` naming the limit (pipelines are not atomic; a transaction is one piece).

A slice is :data:`SLICE_COMMANDS` commands or :data:`SLICE_BYTES` of arguments, whichever comes
first; between two slices the gateway lets the event loop serve other requests. The body is read
row by row (the standard library's ``JSONDecoder.raw_decode``, which keeps integers beyond 64 bits
exact as ``json.loads`` does) and the reply written a slice at a time, so no single step of a large
request runs longer than a slice's.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

#: commands and argument bytes of one slice of a request's work (about a millisecond of it)
SLICE_COMMANDS = 256
SLICE_BYTES = 1024 * 1024

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
SYNTAX = "ERR syntax error: expected a JSON array of commands, each an array of strings"


@dataclass(frozen=True)
class Budget:
    """The commands and seconds one request may take (the module docstring; the Sandbox options
    ``kv_max_request_commands`` and ``kv_max_request_seconds``, svckit/sandbox/options.py)."""

    commands: int
    seconds: float

    def too_many(self) -> str:
        return (f"ERR max commands per request exceeded: the limit is {self.commands} commands in one request "
                "(Sandbox(kv_max_request_commands=...)); split it into several requests")

    def out_of_time(self) -> str:
        return (f"ERR not run: the request's time budget of {self.seconds:g} s was spent before this command "
                "was sent (Sandbox(kv_max_request_seconds=...)); send fewer commands per request")


class TooManyCommands(ValueError):
    """A /pipeline or /multi-exec body holds more commands than the budget allows (413)."""


def _argument(value: Any) -> bytes:
    """One command argument from a JSON body: strings and numbers, as Redis would read them, and
    booleans as ``true`` / ``false`` (@upstash/redis sends ``redis.set(key, true)`` as a JSON boolean,
    and the hosted service stores the text)."""
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if value is None or isinstance(value, (list, dict)):
        kind = "null" if value is None else f"an {type(value).__name__}"
        raise ValueError(f"command arguments must be strings, numbers or booleans, not {kind}")
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value)).encode()
    return str(value).encode()


def command_row(row: Any) -> list[bytes]:
    """One command of a JSON body (``["SET", "k", "v"]``) as its arguments; ValueError saying why not."""
    if not isinstance(row, list) or not row:
        raise ValueError("ERR syntax error: each command must be a non-empty JSON array: [\"SET\", \"k\", \"v\"]")
    try:
        return [_argument(item) for item in row]
    except ValueError as exc:
        raise ValueError(f"ERR syntax error: {exc}") from None


def _not_json(exc: ValueError | RecursionError) -> ValueError:
    if isinstance(exc, RecursionError):
        return ValueError("ERR syntax error: the body is nested too deeply")
    if isinstance(exc, json.JSONDecodeError):
        return ValueError(f"ERR syntax error: the body is not valid JSON ({exc.msg})")
    return ValueError("ERR syntax error: the body is not valid JSON")


def read_command(body: bytes) -> list[bytes]:
    """The one command of a ``POST /`` body (a JSON array: ``["SET", "k", "v"]``); ValueError (400)
    saying what is wrong with it. Bounded by the body cap alone: one row is one step."""
    try:
        data = json.loads(body)  # the stdlib keeps integers beyond 64 bits exact
    except (ValueError, RecursionError) as exc:
        raise _not_json(exc) from None
    return command_row(data)


async def read_rows(body: bytes, budget: Budget) -> list[list[bytes]]:
    """The commands of a /pipeline or /multi-exec body (a JSON array of rows), read a slice of rows
    at a time; ValueError (400) saying what is wrong with it, TooManyCommands (413) as soon as it
    holds more commands than ``budget`` allows."""
    try:
        text = body.decode(json.detect_encoding(body), "surrogatepass")  # what json.loads reads bytes as
    except ValueError as exc:
        raise _not_json(exc) from None
    at = _SPACE.match(text).end()  # type: ignore[union-attr]
    if text[at:at + 1] != "[":
        try:
            json.loads(text)  # not an array: say why, as the whole body would be read
        except (ValueError, RecursionError) as exc:
            raise _not_json(exc) from None
        raise ValueError(SYNTAX)
    at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    if text[at:at + 1] == "]":  # an empty array
        end = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
        raise ValueError(SYNTAX if end == len(text) else "ERR syntax error: the body is not valid JSON (Extra data)")
    values: list[Any] = []
    while True:
        try:
            value, at = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError) as exc:
            raise _not_json(exc) from None
        values.append(value)
        if len(values) > budget.commands:
            raise TooManyCommands(budget.too_many())
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        delimiter = text[at:at + 1]
        at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
        if delimiter == "]":
            if at != len(text):
                raise ValueError("ERR syntax error: the body is not valid JSON (Extra data)")
            break
        if delimiter != ",":
            raise ValueError("ERR syntax error: the body is not valid JSON (Expecting ',' delimiter)")
        if len(values) % SLICE_COMMANDS == 0:
            await asyncio.sleep(0)
    # the whole body is JSON: only now what is wrong with a row (the order json.loads reports them in)
    pieces = await in_slices(values, lambda piece: [command_row(row) for row in piece])
    return [row for piece in pieces for row in piece]


def slice_end(rows: list[list[bytes]], start: int) -> int:
    """Where the slice of ``rows`` that begins at ``start`` ends (SLICE_COMMANDS or SLICE_BYTES)."""
    end, size, last = start, 0, min(len(rows), start + SLICE_COMMANDS)
    while end < last and size < SLICE_BYTES:
        size += sum(len(a) for a in rows[end])
        end += 1
    return end


async def in_slices(items: list[Any], encode: Any) -> list[Any]:
    """``encode(piece)`` of each SLICE_COMMANDS items in turn, the event loop served between two."""
    out = []
    for start in range(0, len(items), SLICE_COMMANDS):
        if start:
            await asyncio.sleep(0)
        out.append(encode(items[start:start + SLICE_COMMANDS]))
    return out
