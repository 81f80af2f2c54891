"""GLOB patterns of the metadata filter, matched by RE2 in time linear in the text.

A pattern knows ``*`` (any run of characters, newlines too), ``?`` (one character), ``[abc]``,
``[a-z]``, ``[^a-z]`` / ``[!a-z]`` (a leading ``]`` is a member; a ``[`` that never closes is a
literal), and ``\\x`` (the character x, literally). It is case-sensitive and matches the whole
value. Inside brackets every character is a member and ``-`` makes a range, as Python's ``re`` reads
a class: a ``-`` that ends the class is a member.

Why RE2: a backtracking engine takes time exponential in the number of ``*`` (``'*a*a*a*a*a*a*a*b'``
against 80 ``a`` took 37 s, holding the interpreter the whole time). RE2 runs in time linear in the
text for a given pattern, and releases the GIL while it matches.

Why every literal but an ASCII letter or digit is written ``\\x{HEX}``: nothing a user types can then
mean anything to RE2, and a lone surrogate (JSON allows ``"\\ud800"``) is a code point RE2 matches
like any other, once the text is encoded with ``surrogatepass``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import re2

__all__ = ["GlobError", "GlobPattern", "compile_glob", "translate"]

#: RE2's own default memory budget for one pattern (its compiled program and its DFA cache). A filter
#: shares it between its patterns, so one filter never asks for more however many GLOBs it holds.
MEMORY_BUDGET = 8 << 20


class GlobError(ValueError):
    """A pattern RE2 refuses (a reversed range like ``[z-a]``, or too complex for its memory);
    ``offset`` is where in the pattern, when known."""

    def __init__(self, reason: str, offset: int = 0) -> None:
        self.reason, self.offset = reason, offset
        super().__init__(reason)


def _literal(ch: str) -> str:
    return ch if ch.isascii() and ch.isalnum() else f"\\x{{{ord(ch):X}}}"


def _bracket(pattern: str, start: int) -> tuple[str, int] | None:
    """The class opening at ``pattern[start] == '['`` as RE2 syntax, and the index of its ``]``; None
    when it never closes."""
    j = start + 1
    negate = j < len(pattern) and pattern[j] in "^!"
    j += negate
    body_start = j
    if j < len(pattern) and pattern[j] == "]":  # a leading ']' is a member
        j += 1
    j = pattern.find("]", j)
    if j < 0:
        return None
    body, members, i = pattern[body_start:j], [], 0
    while i < len(body):
        lo = body[i]
        if i + 2 < len(body) and body[i + 1] == "-":  # a range; a '-' that ends the class is a member
            hi = body[i + 2]
            if hi < lo:
                raise GlobError(f"bad character range {lo}-{hi} (the first character must not come after "
                                "the second)", body_start + i)
            members.append(f"{_literal(lo)}-{_literal(hi)}")
            i += 3
        else:
            members.append(_literal(lo))
            i += 1
    return f"[{'^' if negate else ''}{''.join(members)}]", j


def translate(pattern: str) -> str:
    """The RE2 expression (dot matches newline) that matches what ``pattern`` matches."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(_literal(pattern[i]))
        elif c == "[" and (found := _bracket(pattern, i)) is not None:
            cls, i = found
            out.append(cls)
        else:
            out.append(_literal(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class GlobPattern:
    """A compiled pattern: ``matches(text)`` is a full match."""

    pattern: str
    regex: Any  # the compiled re2 expression

    def matches(self, text: str) -> bool:
        # surrogatepass: a lone surrogate becomes the 3 bytes RE2 reads as that code point
        return self.regex.fullmatch(text.encode("utf-8", "surrogatepass")) is not None


def compile_glob(pattern: str, max_mem: int = MEMORY_BUDGET) -> GlobPattern:
    """Compile ``pattern`` for RE2 within ``max_mem`` bytes; :class:`GlobError` if RE2 refuses it."""
    options = re2.Options()
    options.dot_nl = True  # '*' and '?' match newlines too
    options.log_errors = False  # a refused pattern is the user's 400, not a line on the server's stderr
    options.max_mem = max_mem
    try:
        return GlobPattern(pattern, re2.compile(translate(pattern).encode(), options))
    except re2.error as exc:
        detail = exc.args[0] if exc.args else ""
        reason = detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)
        raise GlobError(f"RE2 refuses it ({reason}): simplify it, or use fewer GLOB patterns in one filter "
                        f"(they share {MEMORY_BUDGET >> 20} MiB)") from None
