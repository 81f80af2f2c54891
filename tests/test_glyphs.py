"""Every non-ASCII character svckit puts in front of a user is one the default fonts draw.

A user-visible string is any string literal of ``svckit/**/*.py`` (f-strings included) that is not a
docstring or a bare string statement; comments are not tokens of this kind. Each character outside
ASCII must be in WGL4, the Windows Glyph List 4 that every core font (DejaVu, Liberation, Arial,
Segoe UI, Helvetica) draws: a character outside it shows as an empty box in some notebook.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "svckit"

#: WGL4, the code points (or inclusive ranges of them) of Microsoft's list
WGL4 = (
    "0020-007E", "00A0-017F", "0192", "01FA-01FF", "02C6", "02C7", "02C9", "02D8-02DD", "0384-038A",
    "038C", "038E-03A1", "03A3-03CE", "0401-040C", "040E-044F", "0451-045C", "045E", "045F", "0490",
    "0491", "1E80-1E85", "1EF2", "1EF3", "2013-2015", "2017-201E", "2020-2022", "2026", "2030", "2032",
    "2033", "2039", "203A", "203C", "203E", "2044", "207F", "20A3", "20A4", "20A7", "20AC", "2105",
    "2113", "2116", "2122", "2126", "212E", "215B-215E", "2190-2195", "21A8", "2202", "2206", "220F",
    "2211", "2212", "2215", "2219", "221A", "221E", "221F", "2229", "222B", "2248", "2260", "2261",
    "2264", "2265", "2302", "2310", "2320", "2321", "2500", "2502", "250C", "2510", "2514", "2518",
    "251C", "2524", "252C", "2534", "253C", "2550-256C", "2580", "2584", "2588", "258C", "2590-2593",
    "25A0", "25A1", "25AA-25AC", "25B2", "25BA", "25BC", "25C4", "25CA", "25CB", "25CF", "25D8", "25D9",
    "25E6", "263A-263C", "2640", "2642", "2660", "2663", "2665", "2666", "266A", "266B", "FB01", "FB02"
)
WGL4_RANGES: tuple[tuple[int, int], ...] = tuple(
    (int(low, 16), int(high or low, 16)) for low, _, high in (part.partition("-") for part in WGL4)
)

#: the token types that hold a literal's text: STRING, and the literal parts of f-strings (3.12+)
#: and t-strings (3.14+), whose other parts are tokenized as code
_LITERAL_TOKENS = {tokenize.STRING} | {
    getattr(tokenize, name) for name in ("FSTRING_MIDDLE", "TSTRING_MIDDLE") if hasattr(tokenize, name)
}


def in_wgl4(char: str) -> bool:
    code = ord(char)
    return char in "\t\n\r" or any(low <= code <= high for low, high in WGL4_RANGES)


def _bare_strings(tree: ast.AST) -> set[tuple[int, int]]:
    """Start positions of the string statements (docstrings, attribute docstrings): never shown."""
    return {(node.lineno, node.col_offset) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


def _parse(source: str) -> ast.Module:
    """``ast.parse``, again when CPython 3.11 miscounts: its AST constructor keeps one recursion depth for
    all threads, so a parse on another thread at the same moment (a library compiling while a sandbox
    of an earlier test warms up) fails this one with "AST constructor recursion depth mismatch"
    (python/cpython#106905, 3.12 keeps it per thread)."""
    for _ in range(9):
        try:
            return ast.parse(source)
        except SystemError:
            continue
    return ast.parse(source)


def outside_wgl4(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    """``file:line:column U+XXXX 'c'`` (``file`` relative to ``root``) for each character of a shown
    literal that is not in WGL4."""
    source = path.read_text(encoding="utf-8")
    skip = _bare_strings(_parse(source))
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _LITERAL_TOKENS or (token.start[0], token.start[1]) in skip:
            continue
        line, column = token.start
        for char in token.string:
            if not in_wgl4(char):
                found.append(f"{path.relative_to(root)}:{line}:{column + 1} U+{ord(char):04X} {char!r}")
            line, column = (line + 1, 0) if char == "\n" else (line, column + 1)
    return found


def test_the_wgl4_table_is_read_whole():
    assert len(WGL4_RANGES) == 110 and sum(high - low + 1 for low, high in WGL4_RANGES) == 651
    assert in_wgl4("—") and in_wgl4("…") and in_wgl4("·") and in_wgl4("−") and in_wgl4("▲")
    assert not in_wgl4("⏵") and not in_wgl4("∥") and not in_wgl4("☐") and not in_wgl4("⚠") and not in_wgl4("‖")


def test_a_shown_literal_is_checked_and_a_docstring_is_not(tmp_path):
    sample = tmp_path / "svckit" / "sample.py"
    sample.parent.mkdir()
    sample.write_text('"""Docstring ⚠ is fine."""\n# comment ⚠ too\nx = 1\n"""attribute doc ⚠"""\n'
                      "def f(g):\n    '''doc ⏵'''\n    return f\"{g}\\n{'∥' if g else ''}\"\n", encoding="utf-8")
    assert outside_wgl4(sample, tmp_path) == ["svckit/sample.py:7:21 U+2225 '∥'"]


def test_every_shown_character_is_one_the_default_fonts_draw():
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in outside_wgl4(path)]
    assert not found, "characters outside WGL4 (drawn as empty boxes by some fonts):\n" + "\n".join(found)
