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
array. GLOB is case-sensitive and knows ``* ? [abc] [a-z] [^a-z]`` (``[!a-z]`` too); RE2 matches it,
in time linear in the value (see :mod:`svckit.localindex.glob`).

Evaluation: a condition on a field that does not exist is false (only ``HAS NOT FIELD`` is true
there). ``=``/``!=``/``IN`` compare numbers by value, and a boolean equals ``1``/``0`` as well as
``true``/``false``; ordering works between numbers or between strings, never across types.
``CONTAINS`` asks whether an array field holds the value.

Every syntax error is a :class:`FilterSyntaxError` whose ``position`` is the 0-based character offset
of the offending token and whose message shows the filter (around that spot, when it is long) with a
caret under it. A filter longer than ``max_filter_length`` characters, or nesting parentheses deeper
than ``max_filter_depth``, is refused the same way (:class:`~svckit.localindex.limits.Limits`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from svckit.localindex.glob import MEMORY_BUDGET, GlobError, GlobPattern, compile_glob
from svckit.localindex.limits import Limits

__all__ = ["Filter", "FilterSyntaxError", "parse_filter", "resolve_path"]

#: characters of the filter shown either side of an error's position (a long filter is cut around it)
CONTEXT = 40


class FilterSyntaxError(ValueError):
    """A filter expression could not be parsed; ``position`` is the 0-based offset of the problem."""

    def __init__(self, reason: str, text: str, position: int) -> None:
        self.reason = reason
        self.text = text
        self.position = position
        start = max(0, position - CONTEXT)
        shown = ("..." if start else "") + text[start : position + CONTEXT] + (
            "..." if position + CONTEXT < len(text) else "")
        caret = " " * (position - start + (3 if start else 0)) + "^"
        super().__init__(f"filter syntax error at position {position}: {reason}\n  {shown}\n  {caret}")


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
            try:
                value: int | float = float(raw) if any(c in raw for c in ".eE") else int(raw)
            except ValueError:  # more digits than Python converts (4300)
                raise FilterSyntaxError(f"number of {len(raw)} digits is too long", text, i) from None
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
    pos: int = field(default=0, compare=False)  # where the pattern starts in the filter


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
    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.max_depth = max_depth
        self.depth = 0  # parentheses open around the current token

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
        if self.tok.kind == "LPAREN":
            # each level is three frames of this parser (and one of the evaluator): a bound well
            # below Python's recursion limit answers "too deep" where it would crash
            if self.depth == self.max_depth:
                raise self.error(f"parentheses nest deeper than {self.max_depth} levels (the index's "
                                 "max_filter_depth limit); write the filter with fewer levels")
            self.i += 1
            self.depth += 1
            node = self.parse_or()
            self.expect("RPAREN", None, "')'")
            self.depth -= 1
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
            return Glob(path, s.value, negate, s.pos)
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


def _evaluate(node: Any, doc: Mapping[str, Any], globs: Mapping[str, GlobPattern]) -> bool:
    if isinstance(node, Or):
        return any(_evaluate(p, doc, globs) for p in node.parts)
    if isinstance(node, And):
        return all(_evaluate(p, doc, globs) for p in node.parts)
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
        return globs[node.pattern].matches(value) != node.negate
    if isinstance(node, In):
        return any(_equal(value, v) for v in node.values) != node.negate
    if isinstance(node, Contains):
        if not isinstance(value, list):
            return False
        return any(_equal(item, node.value) for item in value) != node.negate
    raise TypeError(f"unknown filter node {node!r}")


def _glob_nodes(node: Any) -> list[Glob]:
    if isinstance(node, (And, Or)):
        return [g for part in node.parts for g in _glob_nodes(part)]
    return [node] if isinstance(node, Glob) else []


def _compile_globs(text: str, ast: Any) -> dict[str, GlobPattern]:
    """Each distinct GLOB pattern of a filter compiled once, the patterns sharing one RE2 memory budget
    (so a filter of a thousand GLOBs asks for no more memory than a filter of one)."""
    nodes = {g.pattern: g for g in _glob_nodes(ast)}
    share = MEMORY_BUDGET // max(len(nodes), 1)
    compiled = {}
    for pattern, node in nodes.items():
        try:
            compiled[pattern] = compile_glob(pattern, share)
        except GlobError as exc:
            # node.pos is the opening quote: the pattern's own characters start one further on
            raise FilterSyntaxError(f"GLOB pattern: {exc.reason}", text, node.pos + 1 + exc.offset) from None
    return compiled


@dataclass(frozen=True)
class Filter:
    """A parsed filter; ``matches(metadata)`` evaluates it (``None`` metadata is an empty object)."""

    text: str
    ast: Any
    globs: Mapping[str, GlobPattern] = field(default_factory=dict, compare=False, repr=False)

    def matches(self, metadata: Mapping[str, Any] | None) -> bool:
        return _evaluate(self.ast, metadata or {}, self.globs)

    def __call__(self, metadata: Mapping[str, Any] | None) -> bool:
        return self.matches(metadata)


def parse_filter(text: str, limits: Limits | None = None) -> Filter | None:
    """Parse a filter expression; an empty (or blank) filter is ``None``, meaning "match everything".
    ``limits`` (default :class:`Limits`) bounds its length and its nesting."""
    if not isinstance(text, str):
        raise TypeError("filter must be a string")
    limits = limits or Limits()
    if len(text) > limits.max_filter_length:
        raise FilterSyntaxError(f"the filter is {len(text)} characters long, over the limit of "
                                f"{limits.max_filter_length} (the index's max_filter_length limit); shorten "
                                "it, or split the query", text, limits.max_filter_length)
    if not text.strip():
        return None
    ast = _Parser(text, limits.max_filter_depth).parse()
    return Filter(text, ast, _compile_globs(text, ast))


MatchFn = Callable[[Mapping[str, Any] | None], bool]
