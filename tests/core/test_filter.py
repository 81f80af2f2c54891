"""The metadata filter language: every operator, precedence, paths, literals, and bad filters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svckit.core.filter import FilterSyntaxError, parse_filter

DOC = {
    "country": "Turkey",
    "population": 85_000_000,
    "ratio": 0.5,
    "is_capital": False,
    "eu": True,
    "name": "Istanbul",
    "geo": {"continent": "Asia", "coords": {"lat": 41.0}},
    "industries": ["tourism", "textiles", "agriculture"],
    "scores": [3, 7, 11],
    "quote": "it's \"fine\"",
    "people": [{"name": "Ada"}, {"name": "Bob"}],
}


def matches(expr: str) -> bool:
    f = parse_filter(expr)
    assert f is not None
    return f.matches(DOC)


@pytest.mark.parametrize(("expr", "expected"), [
    ("country = 'Turkey'", True),
    ("country = \"Turkey\"", True),
    ("country = 'turkey'", False),
    ("country != 'Turkey'", False),
    ("country != 'Greece'", True),
    ("population = 85000000", True),
    ("ratio = 0.5", True),
    ("population < 90000000", True),
    ("population < 85000000", False),
    ("population <= 85000000", True),
    ("population > 85000000", False),
    ("population >= 85000000", True),
    ("ratio > -1", True),
    ("name < 'J'", True),
    ("name > 'J'", False),
    ("population > 'a'", False),  # no ordering across types
])
def test_comparisons(expr, expected):
    assert matches(expr) is expected


@pytest.mark.parametrize(("expr", "expected"), [
    ("is_capital = false", True),
    ("is_capital = FALSE", True),
    ("eu = true", True),
    ("eu = 1", True),
    ("is_capital = 0", True),
    ("eu = 0", False),
    ("eu != false", True),
    ("population = true", False),
])
def test_booleans_also_as_one_and_zero(expr, expected):
    assert matches(expr) is expected


@pytest.mark.parametrize(("expr", "expected"), [
    ("name GLOB 'Ist*'", True),
    ("name GLOB 'ist*'", False),  # case-sensitive
    ("name GLOB '?stanbul'", True),
    ("name GLOB '[A-J]*'", True),
    ("name GLOB '[^A-J]*'", False),
    ("name GLOB '[!A-J]*'", False),
    ("name GLOB '[IJK]stanbu[l]'", True),
    ("name NOT GLOB 'Ist*'", False),
    ("name not glob 'X*'", True),
    ("population GLOB '8*'", False),  # GLOB applies to strings only
])
def test_glob(expr, expected):
    assert matches(expr) is expected


@pytest.mark.parametrize(("expr", "expected"), [
    ("country IN ('Greece', 'Turkey')", True),
    ("country IN ('Greece')", False),
    ("population IN (1, 85000000)", True),
    ("country NOT IN ('Greece', 'Spain')", True),
    ("country NOT IN ('Turkey')", False),
    ("industries CONTAINS 'tourism'", True),
    ("industries CONTAINS 'fishing'", False),
    ("industries NOT CONTAINS 'fishing'", True),
    ("scores CONTAINS 7", True),
    ("country CONTAINS 'Tur'", False),  # CONTAINS is for arrays
    ("HAS FIELD geo.continent", True),
    ("HAS FIELD geo.ocean", False),
    ("HAS NOT FIELD geo.ocean", True),
    ("has not field country", False),
])
def test_membership_and_fields(expr, expected):
    assert matches(expr) is expected


@pytest.mark.parametrize(("expr", "expected"), [
    ("geo.continent = 'Asia'", True),
    ("geo.coords.lat > 40", True),
    ("industries[0] = 'tourism'", True),
    ("industries[2] = 'agriculture'", True),
    ("industries[#-1] = 'agriculture'", True),
    ("industries[#-3] = 'tourism'", True),
    ("industries[3] = 'x'", False),
    ("people[1].name = 'Bob'", True),
    ("people[#-1].name GLOB 'B*'", True),
    ("quote = 'it\\'s \"fine\"'", True),
    ("quote = \"it's \\\"fine\\\"\"", True),
    ("missing = 1", False),
    ("missing != 1", False),  # a condition on a missing field is false
])
def test_paths_and_literals(expr, expected):
    assert matches(expr) is expected


@pytest.mark.parametrize(("expr", "expected"), [
    # AND binds tighter than OR: true OR (false AND false) -> true
    ("country = 'Turkey' OR eu = false AND population < 1", True),
    # parentheses override: (true OR false) AND false -> false
    ("(country = 'Turkey' OR eu = false) AND population < 1", False),
    ("country = 'Greece' or country = 'Turkey' and eu = true", True),
    ("country = 'Greece' AND eu = true OR population > 1", True),
    ("((country = 'Turkey'))", True),
    ("eu = true AND (name GLOB 'X*' OR industries CONTAINS 'textiles')", True),
])
def test_precedence_and_parentheses(expr, expected):
    assert matches(expr) is expected


def test_empty_filter_matches_everything():
    assert parse_filter("") is None
    assert parse_filter("   ") is None


@pytest.mark.parametrize(("expr", "position", "words"), [
    ("country = ", 10, "expected a value"),
    ("country = Turkey", 10, "quote strings"),
    ("country == 'x'", 9, "expected a value"),
    ("country 'x'", 8, "expected an operator"),
    ("country = 'Turkey' AND", 22, "field name"),
    ("(country = 'x'", 14, "')'"),
    ("country = 'x')", 13, "end of filter"),
    ("country = 'unterminated", 10, "unterminated string"),
    ("country IN 'x'", 11, "'(' after IN"),
    ("country IN ('a' 'b')", 16, "',' or ')'"),
    ("country NOT = 'x'", 12, "GLOB, IN or CONTAINS after NOT"),
    ("HAS country", 4, "FIELD"),
    ("industries[#1] = 'x'", 12, "'-' after '#'"),
    ("industries[x] = 'x'", 11, "array index"),
    ("country = 'x' ~", 14, "unexpected character"),
    ("name GLOB 5", 10, "quoted pattern"),
    ("AND x = 1", 0, "keyword"),
])
def test_bad_filters_report_their_position(expr, position, words):
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(expr)
    err = info.value
    assert err.position == position
    assert words in str(err)
    # the message shows the filter and a caret under the offending character
    lines = str(err).splitlines()
    assert lines[1].strip() == expr.strip()
    assert lines[2].index("^") - 2 == position


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab=!<>()[]#-.,'\" 01AND OR NOT GLOB IN")), max_size=40))
def test_parser_fails_only_with_filter_syntax_errors(text):
    try:
        f = parse_filter(text)
    except FilterSyntaxError as err:
        assert 0 <= err.position <= len(text)
    else:
        if f is not None:
            f.matches(DOC)  # evaluating any parsed filter never raises
