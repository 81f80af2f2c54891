"""The metadata filter language: a tokenizer, a recursive-descent parser and a compiled evaluator.

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
in time linear in the value (see :mod:`svckit.core.glob`).

Evaluation: a condition on a field that does not exist is false (only ``HAS NOT FIELD`` is true
there). ``=``/``!=``/``IN`` compare numbers by value, and a boolean equals ``1``/``0`` as well as
``true``/``false``; ordering works between numbers or between strings, never across types.
``CONTAINS`` asks whether an array field holds the value.

Every syntax error is a :class:`FilterSyntaxError` whose ``position`` is the 0-based character offset
of the offending token and whose message shows the filter (around that spot, when it is long) with a
caret under it. A filter longer than ``max_filter_length`` characters, nesting parentheses deeper
than ``max_filter_depth``, or with more than ``max_filter_terms`` conditions, is refused the same
way (:class:`FilterLimits`, which the local index's
:class:`~svckit.localindex.limits.Limits` extends).

A parsed filter is compiled once per query into nested functions (:func:`_compile`), so judging a
vector costs its conditions' own work, not a walk of the tree, and an OR of equalities on one field
(``id = 'a' OR id = 'b' ...``) is one set lookup: a 16,000-character OR of 900 equalities took
1.1 ms per vector walked (5.5 s per query on 5,000 vectors), and takes microseconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from svckit.core.glob import MEMORY_BUDGET, GlobError, GlobPattern, compile_glob

__all__ = ["Filter", "FilterLimits", "FilterSyntaxError", "parse_filter", "resolve_path"]

#: characters of the filter shown either side of an error's position (a long filter is cut around it)
CONTEXT = 40


@dataclass(frozen=True)
class FilterLimits:
    """What one filter may be: refused, before any work, with a :class:`FilterSyntaxError` naming the limit."""

    #: characters of a filter. Hand-written filters are a few dozen; this leaves room for an IN list of
    #: a few hundred ids, and bounds the GLOB patterns (RE2's time is linear in the value for a given
    #: pattern, and grows with the pattern's size).
    max_filter_length: int = 16384
    #: levels of nested parentheses in a filter. Real filters nest a handful; the parser is recursive
    #: and Python's stack gives out near 330.
    max_filter_depth: int = 64
    #: conditions in a filter (comparisons, GLOB, IN, CONTAINS, HAS FIELD). A filter's cost is its
    #: conditions times the vectors it judges; a list of values is one IN, however long.
    max_filter_terms: int = 1000


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
    def __init__(self, text: str, max_depth: int, max_terms: int) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.max_depth = max_depth
        self.depth = 0  # parentheses open around the current token
        self.max_terms = max_terms
        self.terms = 0  # conditions so far

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
        self.terms += 1
        if self.terms > self.max_terms:
            raise self.error(f"the filter has more than {self.max_terms} conditions (the index's max_filter_terms "
                             "limit); give a list of values as one IN (...), or split the query")
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


#: what equality compares: a literal of the filter is one of these, and so is every JSON scalar
Scalar = str | int | float | bool


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _order(field: Any, op: str, literal: Any) -> bool:
    if _is_number(field) and _is_number(literal) or isinstance(field, str) and isinstance(literal, str):
        pass
    else:
        return False
    return {"<": field < literal, "<=": field <= literal, ">": field > literal, ">=": field >= literal}[op]


Test = Callable[[Any], bool]


def _getter(path: tuple[PathStep, ...]) -> Callable[[Any], Any]:
    """The value at ``path`` in a document (``MISSING`` where there is none): a plain lookup for the
    common one-name path, :func:`resolve_path` for the rest."""
    if len(path) == 1 and isinstance(path[0], str):
        key = path[0]

        def get(doc: Any) -> Any:
            return doc.get(key, MISSING) if isinstance(doc, dict) else resolve_path(doc, path)
        return get
    return lambda doc: resolve_path(doc, path)


def _member(values: frozenset[Scalar]) -> Callable[[Any], bool]:
    """Whether a value equals one of ``values``. Python's ``==`` between JSON values is the filter's
    equality: numbers by value, a boolean equal to 1 / 0 as well, a string only to a string (and
    never a number), anything else (null, an array, an object) to no literal."""
    def member(value: Any) -> bool:
        try:
            return value in values
        except TypeError:  # an array or object: unhashable, and equal to no literal
            return False
    return member


def _compile(node: Any, globs: Mapping[str, GlobPattern]) -> Test:
    """``node`` as one function of a document, made once per query: the tree is not walked again for
    each vector, and an OR of equalities (``=`` and ``IN``) on one field is one set lookup."""
    if isinstance(node, (Or, And)):
        parts = list(dict.fromkeys(node.parts))  # a condition said twice is judged once
        if isinstance(node, Or):
            parts = _merge_equalities(parts)
        tests = [_compile(p, globs) for p in parts]
        if len(tests) == 1:
            return tests[0]
        if isinstance(node, Or):
            def any_of(doc: Any) -> bool:
                for test in tests:
                    if test(doc):
                        return True
                return False
            return any_of

        def all_of(doc: Any) -> bool:
            for test in tests:
                if not test(doc):
                    return False
            return True
        return all_of
    get = _getter(node.path)
    if isinstance(node, HasField):
        negate = node.negate
        return lambda doc: (get(doc) is MISSING) == negate
    return _predicate(node, get, globs)


def _predicate(node: Any, get: Callable[[Any], Any], globs: Mapping[str, GlobPattern]) -> Test:
    """A condition on a field; false where the field does not exist."""
    if isinstance(node, Compare) and node.op in ("=", "!="):
        literal, equal = node.value, node.op == "="

        def compare(doc: Any) -> bool:
            value = get(doc)
            return value is not MISSING and (value == literal) == equal
        return compare
    if isinstance(node, Compare):
        op, literal = node.op, node.value

        def order(doc: Any) -> bool:
            value = get(doc)
            return value is not MISSING and _order(value, op, literal)
        return order
    if isinstance(node, In):
        member, negate = _member(frozenset(node.values)), node.negate

        def within(doc: Any) -> bool:
            value = get(doc)
            return value is not MISSING and member(value) != negate
        return within
    if isinstance(node, Glob):
        pattern, negate = globs[node.pattern], node.negate

        def glob(doc: Any) -> bool:
            value = get(doc)
            return isinstance(value, str) and pattern.matches(value) != negate
        return glob
    if isinstance(node, Contains):
        literal, negate = node.value, node.negate

        def contains(doc: Any) -> bool:
            value = get(doc)
            return isinstance(value, list) and (literal in value) != negate
        return contains
    raise TypeError(f"unknown filter node {node!r}")


def _merge_equalities(parts: list[Any]) -> list[Any]:
    """An OR's parts with every ``path = literal`` and ``path IN (...)`` on one path made one ``IN``
    (in the place of the first): a generated ``id = 'a' OR id = 'b' OR ...`` is a set lookup."""
    groups: dict[tuple[PathStep, ...], list[Any]] = {}
    for part in parts:
        if isinstance(part, Compare) and part.op == "=" or isinstance(part, In) and not part.negate:
            groups.setdefault(part.path, []).append(part)
    merged = {id(p): group for group in groups.values() if len(group) > 1 for p in group}
    out = []
    for part in parts:
        group = merged.get(id(part))
        if group is None:
            out.append(part)
        elif part is group[0]:
            values = [v for g in group for v in (g.values if isinstance(g, In) else (g.value,))]
            out.append(In(part.path, tuple(values), False))
    return out


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
    test: Test = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "test", _compile(self.ast, self.globs))

    def matches(self, metadata: Mapping[str, Any] | None) -> bool:
        return self.test(metadata or {})

    def __call__(self, metadata: Mapping[str, Any] | None) -> bool:
        return self.matches(metadata)


def parse_filter(text: str, limits: FilterLimits | None = None) -> Filter | None:
    """Parse a filter expression; an empty (or blank) filter is ``None``, meaning "match everything".
    ``limits`` (default :class:`FilterLimits`, or the index's ``Limits``) bounds its length and its nesting."""
    if not isinstance(text, str):
        raise TypeError("filter must be a string")
    limits = limits or FilterLimits()
    if len(text) > limits.max_filter_length:
        raise FilterSyntaxError(f"the filter is {len(text)} characters long, over the limit of "
                                f"{limits.max_filter_length} (the index's max_filter_length limit); shorten "
                                "it, or split the query", text, limits.max_filter_length)
    if not text.strip():
        return None
    ast = _Parser(text, limits.max_filter_depth, limits.max_filter_terms).parse()
    return Filter(text, ast, _compile_globs(text, ast))


MatchFn = Callable[[Mapping[str, Any] | None], bool]
