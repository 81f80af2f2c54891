"""The compiled filter (one function per query, an OR of equalities on one field made one set lookup)
selects what the filter's rules say, on values chosen to catch a set's own notion of equality: 1,
1.0 and true; "1" and 1; null, arrays, objects, NaN, infinity and integers past a float's precision."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from svckit.core.filter import parse_filter
from tests.conftest import examples

VALUES: list[Any] = [0, 1, 2, 1.0, 0.0, 2.5, -1, True, False, "a", "1", "", None, [1, "a", True], ["b"],
                     {"x": 1}, [], 10**20, 1e20, math.inf, math.nan, [[1]]]
LITERALS = {"0": 0, "1": 1, "2": 2, "1.0": 1.0, "2.5": 2.5, "true": True, "false": False, "'a'": "a",
            "'1'": "1", "''": "", "1e20": 1e20, "100000000000000000000": 10**20, "1e999": math.inf}
MISSING = object()


def equal(value: Any, literal: Any) -> bool:
    """The filter's equality, as its module docstring says it: numbers by value, a boolean equal to
    true/false and to 1/0, strings to strings; nothing else is equal to a literal."""
    def as_bool(v: Any) -> bool | None:
        if isinstance(v, bool):
            return v
        return bool(v) if isinstance(v, (int, float)) and v in (0, 1) else None
    if isinstance(value, bool) or isinstance(literal, bool):
        return as_bool(value) is not None and as_bool(value) == as_bool(literal)
    if isinstance(value, (int, float)) and isinstance(literal, (int, float)):
        return value == literal
    return isinstance(value, str) and isinstance(literal, str) and value == literal


condition = st.tuples(st.sampled_from(["x", "y"]), st.sampled_from(["=", "!=", "IN", "NOT IN", "CONTAINS"]),
                      st.lists(st.sampled_from(sorted(LITERALS)), min_size=1, max_size=3))
document = st.dictionaries(st.sampled_from(["x", "y"]), st.sampled_from(VALUES))


def text_of(cond: tuple[str, str, list[str]]) -> str:
    field, op, literals = cond
    if op in ("IN", "NOT IN"):
        return f"{field} {op} ({', '.join(literals)})"
    return f"{field} {op} {literals[0]}"


def selects(cond: tuple[str, str, list[str]], doc: dict[str, Any]) -> bool:
    field, op, literals = cond
    value, values = doc.get(field, MISSING), [LITERALS[t] for t in literals]
    if value is MISSING:
        return False
    if op == "CONTAINS":
        return isinstance(value, list) and any(equal(item, values[0]) for item in value)
    hit = any(equal(value, v) for v in (values if "IN" in op else values[:1]))
    return hit != op.startswith(("NOT", "!="))


@settings(max_examples=examples(3000))
@given(st.lists(st.lists(condition, min_size=1, max_size=3), min_size=1, max_size=6), st.lists(document, max_size=8))
def test_an_or_of_ands_selects_what_each_condition_says(groups, docs) -> None:
    text = " OR ".join("(" + " AND ".join(text_of(c) for c in group) + ")" if len(group) > 1 else text_of(group[0])
                       for group in groups)
    flt = parse_filter(text)
    assert flt is not None
    for doc in docs:
        expected = any(all(selects(c, doc) for c in group) for group in groups)
        assert flt.matches(doc) is expected, (text, doc)
