"""Convert columns between client position encodings and code points.

LSP clients count columns in UTF-16 code units (VS Code), UTF-8 bytes (Neovim) or code
points (UTF-32). Internally everything is code points. A column past the end of the line
clamps to the end; a column that falls inside a surrogate pair or a multi-byte character
rounds down to the start of that character. Pure functions, no state.
"""

from __future__ import annotations

from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]


def _units(ch: str, encoding: Encoding) -> int:
    o = ord(ch)
    if encoding == "utf-16":
        return 2 if o > 0xFFFF else 1
    if encoding == "utf-8":
        if o < 0x80:
            return 1
        if o < 0x800:
            return 2
        if o < 0x10000:
            return 3  # lone surrogates too, as surrogatepass encodes them
        return 4
    return 1


def to_code_points(line: str, column: int, encoding: Encoding) -> int:
    """A client column in `encoding` units -> a code-point column in `line`."""
    if column <= 0:
        return 0
    if encoding == "utf-32":
        return min(column, len(line))
    if line.isascii():  # O(1) in CPython: one unit per character in every encoding
        return min(column, len(line))
    used = 0
    for i, ch in enumerate(line):
        used += _units(ch, encoding)
        if used > column:
            return i  # the column falls inside (or just before the end of) this character
        if used == column:
            return i + 1
    return len(line)


def from_code_points(line: str, column: int, encoding: Encoding) -> int:
    """A code-point column in `line` -> a client column in `encoding` units."""
    column = max(0, min(column, len(line)))
    if encoding == "utf-32" or line.isascii():
        return column
    head = line[:column]
    if encoding == "utf-8":
        return len(head.encode("utf-8", "surrogatepass"))
    return column + sum(1 for ch in head if ord(ch) > 0xFFFF)


def utf8_column(line: str, column: int) -> int:
    """A code-point column -> a byte column (tree-sitter's unit)."""
    return from_code_points(line, column, "utf-8")


def normalize_encoding(name: str | None) -> Encoding:
    """Accept the LSP spellings ("utf-8", "utf-16", "utf-32"); default to UTF-16 as LSP does."""
    n = (name or "utf-16").lower().replace("_", "-")
    if n in ("utf-8", "utf8"):
        return "utf-8"
    if n in ("utf-32", "utf32"):
        return "utf-32"
    return "utf-16"
