"""Filters over the whole text, before and after the line rules (`line_rules`).

Each is a small pure function `(ctx, mode, draft) -> draft`; `clean.process` applies
`BEFORE_LINES`, then the line rules, then `AFTER_LINES`, in the order listed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from lsp_assist.domain import Mode, PromptContext


@dataclass(frozen=True)
class Draft:
    """The suggestion on its way through the filters."""

    text: str
    stopped: bool = False  # a stop condition fired: reading more output cannot change the result
    why: str = ""

    def stop(self, why: str) -> Draft:
        return replace(self, stopped=True, why=why)


TextFilter = Callable[[PromptContext, Mode, Draft], Draft]


def normalize_newlines(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    """CRLF and CR become LF."""
    return replace(d, text=d.text.replace("\r\n", "\n").replace("\r", "\n"))


def strip_fences(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    """A markdown fence around the answer goes (chat models add them); text after a
    closing fence too."""
    raw = d.text
    s = raw.lstrip("\n")
    if s.startswith("```"):
        nl = s.find("\n")
        s = s[nl + 1 :] if nl >= 0 else ""
        end = s.find("```")
        return replace(d, text=s[:end] if end >= 0 else s)
    end = raw.find("\n```")
    return replace(d, text=raw[:end] if end >= 0 else raw)


def cut_at_stop_sequences(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    """The text ends at the first of the prompt's stop sequences ("\\n" is the mode's job)."""
    text = d.text
    for stop in ctx.stop:
        if stop and stop != "\n":
            k = text.find(stop)
            if k >= 0:
                text = text[:k]
    return replace(d, text=text)


def first_line_only(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    """Single-line mode keeps the first line; a second one means the answer is final."""
    if mode != "single" or "\n" not in d.text:
        return d
    return replace(d, text=d.text.split("\n", 1)[0], stopped=True, why="end of line")


def trim_trailing_whitespace(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    return replace(d, text=d.text.rstrip())


def drop_shown_line_tail(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    """A one-line answer does not re-emit the rest of the line the editor shows after the cursor."""
    first, _, rest = d.text.partition("\n")
    tail = ctx.line_suffix.strip()
    if tail and first.rstrip().endswith(tail) and not rest:
        return replace(d, text=first.rstrip()[: len(first.rstrip()) - len(tail)].rstrip())
    return d


def drop_space_after_typed_space(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    """A model's leading space after whitespace the user typed would double it."""
    prefix = ctx.line_prefix
    if prefix.strip() and prefix.endswith((" ", "\t")) and d.text.startswith(" "):
        return replace(d, text=d.text.lstrip(" "))
    return d


def nothing_if_blank(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    """Whitespace only is no suggestion."""
    if d.text.strip():
        return d
    return Draft("", d.stopped, d.why or "empty")


BEFORE_LINES: tuple[TextFilter, ...] = (
    normalize_newlines,
    strip_fences,
    cut_at_stop_sequences,
    first_line_only,
)
AFTER_LINES: tuple[TextFilter, ...] = (
    trim_trailing_whitespace,
    drop_shown_line_tail,
    drop_space_after_typed_space,
    nothing_if_blank,
)
