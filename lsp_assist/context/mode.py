"""Single-line or multi-line: decide from the syntax at the cursor, with max_tokens and stops.

The middle of a line wants the rest of that line; a line ending in `:`/`{` (or an empty
block body under one) wants a block; a blank line inside code wants a few lines; comments
and strings want the rest of the line.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.domain import Mode
from lsp_assist.languages import canonical, profile

SINGLE_MAX_TOKENS = 48
MULTI_MAX_TOKENS = 128
BLOCK_MAX_TOKENS = 160

_OPENERS = (":", "{", "(", "[", "=>")
_BLOCK_OPENERS = (":", "{", "=>")  # open a block even with auto-inserted closers after them
#: Characters an editor auto-inserts after the cursor; a suffix of only these is "end of line".
CLOSERS = frozenset(")]}>\"'`;,")


def _top_level_stops(lang: str) -> tuple[str, ...]:
    """Lines that start a new top-level definition: they end a suggestion made inside a
    block (`LanguageProfile.top_level_stops`)."""
    p = profile(lang)
    return p.top_level_stops if p is not None else ()


@dataclass(frozen=True)
class ModeDecision:
    mode: Mode
    max_tokens: int
    stop: tuple[str, ...]
    why: str


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _width(indent: str) -> int:
    return len(indent.expandtabs(4))


def is_end_of_line(line_suffix: str) -> bool:
    """True when only whitespace or auto-inserted closers follow the cursor."""
    return all(ch in CLOSERS or ch.isspace() for ch in line_suffix)


def decide_mode(
    language_id: str,
    line_prefix: str,
    line_suffix: str,
    prev_line: str | None,
    next_line: str | None,
    *,
    in_comment_or_string: bool = False,
) -> ModeDecision:
    """The mode for a cursor; `prev_line`/`next_line` are the nearest non-blank lines around it."""
    lang = canonical(language_id) or ""
    single = ModeDecision("single", SINGLE_MAX_TOKENS, ("\n",), "")
    if in_comment_or_string:
        return ModeDecision(single.mode, single.max_tokens, single.stop, "inside a comment or string")
    if not is_end_of_line(line_suffix):
        return ModeDecision(single.mode, single.max_tokens, single.stop, "middle of a line")
    typed = line_prefix.strip()
    cursor_indent = _indent(line_prefix) if typed else line_prefix
    stops: tuple[str, ...] = ("\n\n\n",)
    if _width(cursor_indent) > 0 or typed.endswith(_OPENERS):
        stops += _top_level_stops(lang)
    if typed.endswith(_BLOCK_OPENERS) or (typed.endswith(_OPENERS) and not line_suffix.strip()):
        return ModeDecision("multi", BLOCK_MAX_TOKENS, stops, "line opens a block")
    if not typed:
        prev = (prev_line or "").rstrip()
        if prev.endswith(_OPENERS):
            body_empty = next_line is None or _width(_indent(next_line)) <= _width(_indent(prev))
            if body_empty:
                return ModeDecision("multi", BLOCK_MAX_TOKENS, stops, "empty block body")
        return ModeDecision("multi", MULTI_MAX_TOKENS, stops, "blank line")
    return ModeDecision(single.mode, single.max_tokens, single.stop, "end of a typed line")
