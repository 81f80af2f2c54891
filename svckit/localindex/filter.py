"""The metadata filter language: a tokenizer, a recursive-descent parser and an evaluator.

Grammar (keywords and booleans are case-insensitive; ``AND`` binds tighter than ``OR``)::

    expr       := and_expr ( OR and_expr )*
    and_expr   := primary ( AND primary )*
    primary    := '(' expr ')' | HAS FIELD path | HAS NOT FIELD path | path predicate
    predicate  := ( '=' | '!=' | '<' | '<=' | '>' | '>=' ) literal
                | [NOT] GLOB string
                | [NOT] IN '(' literal ( ',' literal )* ')'
                | [NOT] CONTAINS literal
    path       := name ( '.' name | '[' int ']' | '[' '#' '-' int ']' )*
    literal    := string | number | true | false

Strings take single or double quotes with backslash escapes. ``[#-1]`` indexes from the end of an
array. GLOB is case-sensitive and knows ``* ? [abc] [a-z] [^a-z]`` (``[!a-z]`` too).

Evaluation: a condition on a field that does not exist is false (only ``HAS NOT FIELD`` is true
there). ``=``/``!=``/``IN`` compare numbers by value, and a boolean equals ``1``/``0`` as well as
``true``/``false``; ordering works between numbers or between strings, never across types.
``CONTAINS`` asks whether an array field holds the value.

Every syntax error is a :class:`FilterSyntaxError` whose ``position`` is the 0-based character offset
of the offending token and whose message shows the filter with a caret under that spot.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Filter", "FilterSyntaxError", "glob_to_regex", "parse_filter", "resolve_path"]


class FilterSyntaxError(ValueError):
    """A filter expression could not be parsed; ``position`` is the 0-based offset of the problem."""

    def __init__(self, reason: str, text: str, position: int) -> None:
        self.reason = reason
        self.text = text
        self.position = position
        caret = " " * position + "^"
        super().__init__(f"filter syntax error at position {position}: {reason}\n  {text}\n  {caret}")


# -- tokens ------------------------------------------------------------------------------------

KEYWORDS = frozenset({"AND", "OR", "NOT", "GLOB", "IN", "CONTAINS", "HAS", "FIELD", "TRUE", "FALSE"})


@dataclass(frozen=True)
class Token:
    kind: str  # NAME, KEYWORD, STRING, NUMBER, OP, LPAREN, RPAREN, COMMA, LBRACKET, RBRACKET, DOT, HASH, END
    value: Any
    pos: int
    text: str = ""


_NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$\-]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch in "'\"":
            start, quote, i = i, ch, i + 1
            out: list[str] = []
            while True:
                if i >= n:
                    raise FilterSyntaxError("unterminated string literal", text, start)
                c = text[i]
                if c == "\\":
                    if i + 1 >= n:
                        raise FilterSyntaxError("unterminated string literal", text, start)
                    out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
                    i += 2
                    continue
                if c == quote:
                    i += 1
                    break
                out.append(c)
                i += 1
            tokens.append(Token("STRING", "".join(out), start, text[start:i]))
            continue
        two = text[i : i + 2]
        if two in ("!=", "<=", ">="):
            tokens.append(Token("OP", two, i, two))
            i += 2
            continue
        if ch in "=<>":
            tokens.append(Token("OP", ch, i, ch))
            i += 1
            continue
        single = {"(": "LPAREN", ")": "RPAREN", ",": "COMMA", "[": "LBRACKET", "]": "RBRACKET", ".": "DOT",
                  "#": "HASH"}
        m = _NUMBER.match(text, i)
        if m and (ch != "." or (tokens and tokens[-1].kind in ("OP", "LPAREN", "COMMA"))) and not (
            ch == "-" and tokens and tokens[-1].kind == "HASH"
        ):
            raw = m.group()
            value: int | float = float(raw) if any(c in raw for c in ".eE") else int(raw)
            tokens.append(Token("NUMBER", value, i, raw))
            i = m.end()
            continue
        if ch == "-" and tokens and tokens[-1].kind == "HASH":
            tokens.append(Token("MINUS", "-", i, "-"))
            i += 1
            continue
        if ch in single:
            tokens.append(Token(single[ch], ch, i, ch))
            i += 1
            continue
        m = _NAME.match(text, i)
        if m:
            word = m.group()
            upper = word.upper()
            if upper in KEYWORDS:
                tokens.append(Token("KEYWORD", upper, i, word))
            else:
                tokens.append(Token("NAME", word, i, word))
            i = m.end()
            continue
        raise FilterSyntaxError(f"unexpected character {ch!r}", text, i)
    tokens.append(Token("END", None, n, ""))
    return tokens


# -- AST ---------------------------------------------------------------------------------------

MISSING = object()
PathStep = str | int  # a key, or an array index (negative = from the end)


@dataclass(frozen=True)
class Compare:
    path: tuple[PathStep, ...]
    op: str
    value: Any


@dataclass(frozen=True)
class Glob:
    path: tuple[PathStep, ...]
    pattern: str
    negate: bool


@dataclass(frozen=True)
class In:
    path: tuple[PathStep, ...]
    values: tuple[Any, ...]
    negate: bool


@dataclass(frozen=True)
class Contains:
    path: tuple[PathStep, ...]
    value: Any
    negate: bool


@dataclass(frozen=True)
class HasField:
    path: tuple[PathStep, ...]
    negate: bool


@dataclass(frozen=True)
class And:
    parts: tuple[Any, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Any, ...]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, reason: str, token: Token | None = None) -> FilterSyntaxError:
        token = token or self.tok
        return FilterSyntaxError(reason, self.text, token.pos)

    def describe(self, token: Token) -> str:
        return "end of filter" if token.kind == "END" else repr(token.text)

    def take(self, kind: str, value: Any = None) -> Token | None:
        t = self.tok
        if t.kind == kind and (value is None or t.value == value):
            self.i += 1
            return t
        return None

    def expect(self, kind: str, value: Any, what: str) -> Token:
        t = self.take(kind, value)
        if t is None:
            raise self.error(f"expected {what}, found {self.describe(self.tok)}")
        return t

    def parse(self) -> Any:
        node = self.parse_or()
        if self.tok.kind != "END":
            raise self.error(f"expected AND, OR or end of filter, found {self.describe(self.tok)}")
        return node

    def parse_or(self) -> Any:
        parts = [self.parse_and()]
        while self.take("KEYWORD", "OR"):
            parts.append(self.parse_and())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def parse_and(self) -> Any:
        parts = [self.parse_primary()]
        while self.take("KEYWORD", "AND"):
            parts.append(self.parse_primary())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def parse_primary(self) -> Any:
        if self.take("LPAREN"):
            node = self.parse_or()
            self.expect("RPAREN", None, "')'")
            return node
        if self.take("KEYWORD", "HAS"):
            negate = bool(self.take("KEYWORD", "NOT"))
            self.expect("KEYWORD", "FIELD", "FIELD after HAS" + (" NOT" if negate else ""))
            return HasField(self.parse_path(), negate)
        path = self.parse_path()
        t = self.tok
        if t.kind == "OP":
            self.i += 1
            return Compare(path, t.value, self.parse_literal(f"a value after '{t.value}'"))
        negate = bool(self.take("KEYWORD", "NOT"))
        if self.take("KEYWORD", "GLOB"):
            s = self.tok
            if s.kind != "STRING":
                raise self.error(f"expected a quoted pattern after GLOB, found {self.describe(s)}")
            self.i += 1
            return Glob(path, s.value, negate)
        if self.take("KEYWORD", "IN"):
            self.expect("LPAREN", None, "'(' after IN")
            values = [self.parse_literal("a value in the IN list")]
            while self.take("COMMA"):
                values.append(self.parse_literal("a value after ','"))
            self.expect("RPAREN", None, "',' or ')' in the IN list")
            return In(path, tuple(values), negate)
        if self.take("KEYWORD", "CONTAINS"):
            return Contains(path, self.parse_literal("a value after CONTAINS"), negate)
        expected = "GLOB, IN or CONTAINS after NOT" if negate else (
            "an operator (=, !=, <, <=, >, >=, GLOB, NOT GLOB, IN, NOT IN, CONTAINS, NOT CONTAINS)"
        )
        raise self.error(f"expected {expected}, found {self.describe(self.tok)}")

    def parse_path(self) -> tuple[PathStep, ...]:
        t = self.tok
        if t.kind != "NAME":
            if t.kind == "KEYWORD":
                raise self.error(f"expected a field name, found keyword {t.text!r}")
            raise self.error(f"expected a field name, found {self.describe(t)}")
        self.i += 1
        steps: list[PathStep] = [t.value]
        while True:
            if self.take("DOT"):
                name = self.tok
                if name.kind not in ("NAME", "KEYWORD"):
                    raise self.error(f"expected a field name after '.', found {self.describe(name)}")
                self.i += 1
                steps.append(name.text)
            elif self.take("LBRACKET"):
                if self.take("HASH"):
                    self.expect("MINUS", None, "'-' after '#' (use [#-1] for the last element)")
                    num = self.tok
                    if num.kind != "NUMBER" or not isinstance(num.value, int) or num.value < 1:
                        raise self.error("expected a positive integer after '#-'")
                    self.i += 1
                    steps.append(-num.value)
                else:
                    num = self.tok
                    if num.kind != "NUMBER" or not isinstance(num.value, int) or num.value < 0:
                        raise self.error(f"expected an array index, found {self.describe(num)}")
                    self.i += 1
                    steps.append(num.value)
                self.expect("RBRACKET", None, "']'")
            else:
                return tuple(steps)

    def parse_literal(self, what: str) -> Any:
        t = self.tok
        if t.kind in ("STRING", "NUMBER"):
            self.i += 1
            return t.value
        if t.kind == "KEYWORD" and t.value in ("TRUE", "FALSE"):
            self.i += 1
            return t.value == "TRUE"
        if t.kind == "NAME":
            raise self.error(f"expected {what}, found {t.text!r} (quote strings: '{t.text}')")
        raise self.error(f"expected {what}, found {self.describe(t)}")


# -- evaluation --------------------------------------------------------------------------------


def resolve_path(doc: Any, path: tuple[PathStep, ...]) -> Any:
    """The value at ``path`` inside ``doc`` (dicts and lists), or ``MISSING``."""
    cur = doc
    for step in path:
        if isinstance(step, str):
            if not isinstance(cur, Mapping) or step not in cur:
                return MISSING
            cur = cur[step]
        else:
            if not isinstance(cur, list) or not (-len(cur) <= step < len(cur)):
                return MISSING
            cur = cur[step]
    return cur


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _equal(field: Any, literal: Any) -> bool:
    if isinstance(field, bool) or isinstance(literal, bool):
        # booleans match true/false and 1/0 (and nothing else)
        def as_bool(v: Any) -> bool | None:
            if isinstance(v, bool):
                return v
            if _is_number(v) and v in (0, 1):
                return bool(v)
            return None

        a, b = as_bool(field), as_bool(literal)
        return a is not None and a == b
    if _is_number(field) and _is_number(literal):
        return field == literal
    if isinstance(field, str) and isinstance(literal, str):
        return field == literal
    return False


def _order(field: Any, op: str, literal: Any) -> bool:
    if _is_number(field) and _is_number(literal) or isinstance(field, str) and isinstance(literal, str):
        pass
    else:
        return False
    return {"<": field < literal, "<=": field <= literal, ">": field > literal, ">=": field >= literal}[op]


@functools.lru_cache(maxsize=1024)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Translate a GLOB pattern (``* ? [abc] [a-z] [^a-z] [!a-z]``, ``\\x`` escapes) to a regex."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 1
        elif c == "[":
            j = i + 1
            negate = j < n and pattern[j] in "^!"
            if negate:
                j += 1
            if j < n and pattern[j] == "]":  # a leading ']' is a literal member
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal '['
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 + (1 if negate else 0) : j]
                members = "".join("\\" + ch if ch in "\\^[]" else ch for ch in body)
                out.append(f"[{'^' if negate else ''}{members}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _evaluate(node: Any, doc: Mapping[str, Any]) -> bool:
    if isinstance(node, Or):
        return any(_evaluate(p, doc) for p in node.parts)
    if isinstance(node, And):
        return all(_evaluate(p, doc) for p in node.parts)
    if isinstance(node, HasField):
        return (resolve_path(doc, node.path) is MISSING) == node.negate
    value = resolve_path(doc, node.path)
    if value is MISSING:
        return False
    if isinstance(node, Compare):
        if node.op == "=":
            return _equal(value, node.value)
        if node.op == "!=":
            return not _equal(value, node.value)
        return _order(value, node.op, node.value)
    if isinstance(node, Glob):
        if not isinstance(value, str):
            return False
        return (glob_to_regex(node.pattern).fullmatch(value) is not None) != node.negate
    if isinstance(node, In):
        return any(_equal(value, v) for v in node.values) != node.negate
    if isinstance(node, Contains):
        if not isinstance(value, list):
            return False
        return any(_equal(item, node.value) for item in value) != node.negate
    raise TypeError(f"unknown filter node {node!r}")


@dataclass(frozen=True)
class Filter:
    """A parsed filter; ``matches(metadata)`` evaluates it (``None`` metadata is an empty object)."""

    text: str
    ast: Any

    def matches(self, metadata: Mapping[str, Any] | None) -> bool:
        return _evaluate(self.ast, metadata or {})

    def __call__(self, metadata: Mapping[str, Any] | None) -> bool:
        return self.matches(metadata)


def parse_filter(text: str) -> Filter | None:
    """Parse a filter expression; an empty (or blank) filter is ``None``, meaning "match everything"."""
    if not isinstance(text, str):
        raise TypeError("filter must be a string")
    if not text.strip():
        return None
    return Filter(text, _Parser(text).parse())


MatchFn = Callable[[Mapping[str, Any] | None], bool]
