"""The metadata filter's rules as a query's author meets them: which metadata a filter text
selects, and the error (reason and position) a text that is not a filter gets."""

from __future__ import annotations

import pytest

from svckit.core.filter import FilterLimits, FilterSyntaxError, parse_filter

DOC = {"name": "Ann", "age": 30, "score": 2.5, "pet": True, "off": False, "tags": ["a", "b", 3, True],
       "home": {"city": "Oslo", "zip": "0150"}, "list": [[1, 2], {"k": "v"}], "AND": 1, "with-dash": "x"}


def selects(text: str, doc=DOC) -> bool:
    f = parse_filter(text)
    assert f is not None
    return f(doc)


@pytest.mark.parametrize(("text", "expected"), [
    ("name = 'Ann'", True), ('name = "Ann"', True), ("name = 'ann'", False), ("name != 'Bob'", True),
    ("age = 30", True), ("age = 30.0", True), ("age = 3e1", True), ("age != 30", False), ("age = '30'", False),
    ("age < 31", True), ("age < 30", False), ("age <= 30", True), ("age <= 29", False),
    ("age > 29", True), ("age > 30", False), ("age >= 30", True), ("age >= 31", False),
    ("score > 2", True), ("score < .3e1", True), ("age > -1", True),
    ("name > 'Al'", True), ("name < 'Al'", False), ("name >= 'Ann'", True), ("name <= 'Ann'", True),
    ("age > 'a'", False), ("name < 5", False), ("pet > 0", False), ("age < true", False),
    ("pet = true", True), ("pet = TRUE", True), ("pet = 1", True), ("pet = 0", False), ("off = 0", True),
    ("off = false", True), ("pet = 'true'", False), ("pet != false", True), ("age = true", False),
    ("tags[2] = true", False), ("tags[3] = 1", True), ("tags[3] = 2", False),
    ("missing = 1", False), ("missing != 1", False), ("missing < 1", False),
    ("home.city = 'Oslo'", True), ("home.zip = '0150'", True), ("home.zip = 150", False),
    ("home.city.x = 1", False), ("name.first = 'A'", False),
    ("tags[0] = 'a'", True), ("tags[1] = 'b'", True), ("tags[4] = 'x'", False), ("tags[#-1] = true", True),
    ("tags[#-4] = 'a'", True), ("tags[#-5] = 'a'", False), ("list[0][1] = 2", True), ("list[1].k = 'v'", True),
    ("home[0] = 1", False), ("name[0] = 'A'", False), ("with-dash = 'x'", True),
    ("tags CONTAINS 'a'", True), ("tags CONTAINS 'z'", False), ("tags NOT CONTAINS 'z'", True),
    ("tags NOT CONTAINS 'a'", False), ("tags contains 3", True), ("name CONTAINS 'A'", False),
    ("name NOT CONTAINS 'A'", False),
    ("name IN ('Bob', 'Ann')", True), ("name IN ('Bob')", False), ("name NOT IN ('Bob')", True),
    ("name NOT IN ('Ann', 'Bob')", False), ("age IN (1, 30)", True), ("pet IN (1)", True),
    ("name GLOB 'A*'", True), ("name GLOB 'a*'", False), ("name NOT GLOB 'B*'", True),
    ("name NOT GLOB 'A??'", False), ("age GLOB '3*'", False), ("age NOT GLOB '3*'", False),
    ("HAS FIELD home.city", True), ("HAS FIELD home.country", False), ("HAS NOT FIELD home.country", True),
    ("HAS NOT FIELD name", False), ("has field tags[#-1]", True),
    ("name = 'Ann' AND age = 30", True), ("name = 'Ann' AND age = 31", False), ("age = 31 AND name = 'Ann'", False),
    ("name = 'Bob' OR age = 30", True), ("name = 'Bob' OR age = 31", False), ("age = 30 OR name = 'Bob'", True),
    ("name = 'Bob' AND age = 31 OR pet = true", True), ("pet = true OR name = 'Bob' AND age = 31", True),
    ("(pet = true OR name = 'Bob') AND age = 31", False), ("((age = 30))", True),
    ("name = 'Ann' and age = 30 or false_field = 1", True),
])
def test_what_a_filter_selects(text, expected):
    assert selects(text) is expected


def test_string_escapes():
    doc = {"s": "it's \"q\"\n\t\\\0x", "r": "a\rb"}
    assert selects(r"s = 'it\'s \"q\"\n\t\\\0x'", doc)
    assert selects(r'r = "a\rb"', doc) and selects(r"s != 'it\'s'", doc)
    assert selects(r"r = 'a\rb' AND s GLOB 'it\'s*'", doc)
    assert selects(r"x = '\q'", {"x": "q"})  # an unknown escape is the character itself


def test_a_keyword_may_follow_a_dot_as_a_field_name():
    assert selects("home.and = 1", {"home": {"and": 1}}) and selects("a.OR = 1", {"a": {"OR": 1}})


def test_no_metadata_is_an_empty_object_and_a_blank_filter_selects_everything():
    f = parse_filter("HAS NOT FIELD x")
    assert f is not None and f(None) and f.matches({})
    assert parse_filter("") is None and parse_filter("   ") is None


@pytest.mark.parametrize(("text", "reason", "position"), [
    ("name = 'Ann", "unterminated string literal", 7),
    ("name = 'Ann\\", "unterminated string literal", 7),
    ("name = 'A' @", "unexpected character '@'", 11),
    ("name", ("expected an operator (=, !=, <, <=, >, >=, GLOB, NOT GLOB, IN, NOT IN, CONTAINS, NOT CONTAINS), "
              "found end of filter"), 4),
    ("name NOT = 1", "expected GLOB, IN or CONTAINS after NOT, found '='", 9),
    ("name = Ann", "expected a value after '=', found 'Ann' (quote strings: 'Ann')", 7),
    ("name =", "expected a value after '=', found end of filter", 6),
    ("age >= )", "expected a value after '>=', found ')'", 7),
    ("= 1", "expected a field name, found '='", 0),
    ("AND = 1", "expected a field name, found keyword 'AND'", 0),
    ("a = 1 b = 2", "expected AND, OR or end of filter, found 'b'", 6),
    ("(a = 1", "expected ')', found end of filter", 6),
    ("a = 1)", "expected AND, OR or end of filter, found ')'", 5),
    ("HAS name", "expected FIELD after HAS, found 'name'", 4),
    ("HAS NOT name", "expected FIELD after HAS NOT, found 'name'", 8),
    ("a GLOB b", "expected a quoted pattern after GLOB, found 'b'", 7),
    ("a GLOB 'x[z-a]'", ("GLOB pattern: bad character range z-a (the first character must not come after the "
                         "second)"), 10),
    ("a IN 1", "expected '(' after IN, found '1'", 5),
    ("a IN (1 2)", "expected ',' or ')' in the IN list, found '2'", 8),
    ("a IN ()", "expected a value in the IN list, found ')'", 6),
    ("a IN (1,)", "expected a value after ',', found ')'", 8),
    ("a CONTAINS", "expected a value after CONTAINS, found end of filter", 10),
    ("a. = 1", "expected a field name after '.', found '='", 3),
    ("a[x] = 1", "expected an array index, found 'x'", 2),
    ("a[1.5] = 1", "expected an array index, found '1.5'", 2),
    ("a[-1] = 1", "expected an array index, found '-1'", 2),
    ("a[1 = 1", "expected ']', found '='", 4),
    ("a[#1] = 1", "expected '-' after '#' (use [#-1] for the last element), found '1'", 3),
    ("a[#-0] = 1", "expected a positive integer after '#-'", 4),
    ("a[#-x] = 1", "expected a positive integer after '#-'", 4),
    ("a[#-1.0] = 1", "expected a positive integer after '#-'", 4),
    ("a = 1" + "0" * 5000, "number of 5001 digits is too long", 4),
    ("a = 1 OR", "expected a field name, found end of filter", 8),
])
def test_the_error_a_text_that_is_no_filter_gets(text, reason, position):
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter(text)
    err = caught.value
    assert err.reason == reason
    assert err.position == position and err.text == text


def test_the_message_shows_the_filter_with_a_caret_under_the_spot():
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter("age >= x")
    assert str(caught.value) == ("filter syntax error at position 7: expected a value after '>=', found 'x' "
                                 "(quote strings: 'x')\n  age >= x\n         ^")


def test_a_long_filter_is_cut_around_the_spot():
    text = "a = 1 AND " * 10 + "b = @" + " AND c = 1" * 10
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter(text)
    at = text.index("@")
    assert caught.value.position == at
    shown, caret = str(caught.value).split("\n")[1:]
    assert shown == "  ..." + text[at - 40:at + 40] + "..."
    assert caret == "  " + " " * 43 + "^"
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter("b = @" + " AND c = 1" * 10)
    shown, caret = str(caught.value).split("\n")[1:]
    assert shown == "  " + ("b = @" + " AND c = 1" * 10)[:44] + "..." and caret == "  " + " " * 4 + "^"


def test_the_length_and_depth_limits():
    limits = FilterLimits(max_filter_length=20, max_filter_depth=2)
    assert parse_filter("a = 1 AND b = 222222", limits) is not None  # 20 characters
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter("a = 1 AND b = 2222222", limits)
    assert caught.value.reason.startswith("the filter is 21 characters long, over the limit of 20 (")
    assert caught.value.position == 20
    assert parse_filter("((a = 1))", limits) is not None
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter("(((a = 1)))", limits)
    assert caught.value.reason.startswith("parentheses nest deeper than 2 levels") and caught.value.position == 2
    with pytest.raises(TypeError, match="filter must be a string"):
        parse_filter(None)  # type: ignore[arg-type]


def test_equal_globs_are_compiled_once_and_each_is_checked():
    f = parse_filter("a GLOB 'x*' OR b GLOB 'x*' OR (c GLOB 'y?' AND d = 1)")
    assert f is not None and sorted(f.globs) == ["x*", "y?"]
    assert f({"b": "xyz"}) and f({"c": "yz", "d": 1}) and not f({"c": "yz"})
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter("a = 1 OR (b GLOB 'ok*' AND c GLOB 'ab[z-a]')")
    assert caught.value.reason.startswith("GLOB pattern: bad character range z-a") and caught.value.position == 38
