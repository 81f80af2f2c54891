"""GLOB on RE2: the same answers as the backtracking ``re`` translation it replaced, in linear time."""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from svckit.core.filter import FilterSyntaxError, parse_filter
from svckit.core.glob import compile_glob, translate
from tests.conftest import examples


def old_glob_to_regex(pattern: str) -> re.Pattern[str]:
    """The translation to Python's ``re`` that filter.py used before RE2, kept as the oracle."""
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
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
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


def old_answer(pattern: str, text: str) -> bool | None:
    """The old engine's answer, or None where it could not compile the pattern (it answered 500)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible set difference" and the like
        try:
            regex = old_glob_to_regex(pattern)
        except re.error:
            return None
    return regex.fullmatch(text) is not None


# the characters GLOB gives a meaning to, a few plain ones, a newline, non-ASCII and a lone surrogate
PATTERN_CHARS = list("*?[]!^-\\") + list("abcz09 .$()|+{}") + ["\n", "é", "ß", "日", "\U0001f600", "\ud800"]
TEXT_CHARS = list("abcz09 -^]![\\*?.\n") + ["é", "ß", "日", "\U0001f600", "\ud800", "\udfff"]


@st.composite
def near_matches(draw) -> tuple[str, str]:
    """A text and a pattern written from it (each character as itself, escaped, ``?``, ``*``, or a class
    with or without it), sometimes changed by one character: random pairs almost never match."""
    text = draw(st.text(alphabet=st.sampled_from(TEXT_CHARS), max_size=10))
    members = st.text(alphabet=st.sampled_from(PATTERN_CHARS + TEXT_CHARS), max_size=3)
    parts = []
    for ch in text:
        how = draw(st.sampled_from(["same", "escaped", "?", "*", "class", "negated", "range"]))
        if how == "same":
            parts.append(ch)
        elif how == "escaped":
            parts.append("\\" + ch)
        elif how in ("?", "*"):
            parts.append(how)
        elif how == "range":
            lo, hi = sorted([ch, draw(st.sampled_from(TEXT_CHARS))])
            parts.append(f"[{lo}-{hi}]")
        else:
            parts.append(("[!" if how == "negated" else "[") + draw(members) + ch + draw(members) + "]")
    pattern = "".join(parts)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(pattern)))
        pattern = pattern[:at] + draw(st.sampled_from(PATTERN_CHARS)) + pattern[at + 1:]
    return pattern, text


@settings(max_examples=examples(3000), deadline=None)
@given(pattern=st.text(alphabet=st.sampled_from(PATTERN_CHARS), max_size=12),
       text=st.text(alphabet=st.sampled_from(TEXT_CHARS), max_size=12))
@example(pattern="[a-c-e]", text="-")
@example(pattern="[]-a]", text="^")
@example(pattern="[!]]", text="]")
@example(pattern="[--a]", text=".")
@example(pattern="[a-]", text="-")
@example(pattern="[z-a]", text="z")
@example(pattern="\\", text="\\")
@example(pattern="*\\*", text="ab*")
@example(pattern="?", text="\ud800")
@example(pattern="[\ud800-\udfff]", text="\udc00")
def test_re2_answers_what_the_re_translation_answered(pattern, text):
    agree(pattern, text)


@settings(max_examples=examples(3000), deadline=None)
@given(near_matches())
def test_re2_answers_what_the_re_translation_answered_on_near_matches(pair):
    agree(*pair)


def agree(pattern: str, text: str) -> None:
    expected = old_answer(pattern, text)
    if expected is None:  # re refused the pattern (a reversed range): now a 400, not a 500
        with pytest.raises(FilterSyntaxError, match="bad character range"):
            parse_filter(f"s GLOB {quote(pattern)}")
        return
    assert compile_glob(pattern).matches(text) == expected, translate(pattern)


@settings(max_examples=examples(500), deadline=None)
@given(pattern=st.text(alphabet=st.sampled_from(PATTERN_CHARS), max_size=8),
       text=st.text(alphabet=st.sampled_from(TEXT_CHARS), max_size=8))
def test_the_filter_language_carries_the_same_answers(pattern, text):
    expected = old_answer(pattern, text)
    if expected is None:
        return
    flt = parse_filter(f"s GLOB {quote(pattern)} OR s NOT GLOB {quote(pattern)}")
    assert flt is not None and flt.matches({"s": text})  # one of the two, whichever the answer
    glob = parse_filter(f"s GLOB {quote(pattern)}")
    assert glob is not None and glob.matches({"s": text}) == expected


def quote(pattern: str) -> str:
    """``pattern`` as a filter string literal (the tokenizer's backslash escapes)."""
    return "'" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"


@pytest.mark.timeout(60)
def test_a_pattern_that_backtracks_for_hours_answers_at_once():
    # '*a' 25 times then 'b' against 5,000 'a': a backtracking engine tries about 5000^25 splits
    flt = parse_filter("s GLOB '" + "*a" * 25 + "*b'")
    assert flt is not None
    assert flt.matches({"s": "a" * 5000}) is False
    assert flt.matches({"s": "a" * 5000 + "b"}) is True


def test_a_reversed_range_is_a_syntax_error_at_the_pattern():
    text = "name GLOB 'x[z-a]'"
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text)
    assert "bad character range z-a" in info.value.reason
    assert text[info.value.position] == "z"


def test_the_glob_patterns_of_a_filter_share_one_memory_budget():
    many = " OR ".join(f"s GLOB '*{i}*'" for i in range(800))  # 800 small patterns compile
    flt = parse_filter(many)
    assert flt is not None and flt.matches({"s": "x799y"}) and not flt.matches({"s": "x"})
    # a pattern RE2 runs alone is refused with its position once 600 others share the budget
    big = "s GLOB '" + "*a?" * 1000 + "'"
    assert parse_filter(big) is not None
    shared = big + "".join(f" OR s GLOB '{i}'" for i in range(600))
    with pytest.raises(FilterSyntaxError, match="GLOB pattern: RE2 refuses it .*fewer GLOB patterns") as info:
        parse_filter(shared)
    assert info.value.position == len("s GLOB '")
