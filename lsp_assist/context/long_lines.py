"""Context for a cursor on a very long line (minified or generated code).

A minified bundle is one line of megabytes. The usual build reads the cursor's row and
the rows around it whole (the names near the cursor, the mode, the related windows, and
post-processing's bracket scan of the typed part of the line): on a 2 MB line each of
those costs hundreds of milliseconds, where a request has tens. Past `LONG_LINE_CHARS`
the builder hands the request here instead: the prompt is the text right around the
cursor, cut at token boundaries, with the neighbouring rows (clipped the same way) while
the budget lasts; no syntax tree, no cross-file context (a bundle's neighbours are other
bundles). Only slices of the budget's size are ever copied or scanned, so the work is
bounded by the budget, not by the line; the line's parts for post-processing
(`line_prefix`, `line_suffix`) are the same cut pieces.
"""

from __future__ import annotations

from lsp_assist.context.mode import decide_mode
from lsp_assist.context.trimming import cut_left, cut_right
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext, PromptPart
from lsp_assist.languages import canonical

# Longer than any line written by hand (style guides stop at 80-120), far shorter than a
# minified bundle's lines (hundreds of KB); also where other steps stop reading a row.
LONG_LINE_CHARS = 5_000
SUFFIX_SHARE = 0.25  # of the budget, for the rest of the cursor line and the rows below
ROW_CHARS = 1_000  # at most this much of each neighbouring row (a long one is clipped)


def is_long_row(doc: Document, row: int) -> bool:
    return doc.line_length(row) > LONG_LINE_CHARS


def row_head(doc: Document, row: int, limit: int = LONG_LINE_CHARS) -> str:
    """The first `limit` characters of `row` at most (without its line ending), copying
    no more than that: what steps that read rows whole read of a long one."""
    if doc.line_length(row) <= limit:
        return doc.line(row)
    start = doc.line_start(row)
    return doc.text[start : start + limit]


def long_line_context(doc: Document, cursor: Cursor, budget: int) -> PromptContext:
    """The prompt at `cursor` (clamped) on a long row: see the module docstring."""
    text = doc.text
    row = cursor.line
    start = doc.line_start(row)
    end = start + doc.line_length(row)
    at = start + cursor.character
    # One character more than the limit each side: enough for the cuts to see whether
    # they fall inside a word (`cut_left`/`cut_right` look at the pair around the cut).
    suffix_limit = int(budget * SUFFIX_SHARE)
    after = text[at : min(end, at + suffix_limit + 1)]
    kept_suffix = cut_right(after, suffix_limit)
    prefix_limit = max(0, budget - len(kept_suffix))
    before = text[max(start, at - prefix_limit - 1) : at]
    kept_prefix = cut_left(before, prefix_limit)
    whole_prefix = len(kept_prefix) == at - start
    whole_suffix = len(kept_suffix) == end - at

    above = _rows_from(doc, row, prefix_limit - len(kept_prefix), -1) if whole_prefix else []
    room = budget - len(kept_prefix) - sum(len(x) + 1 for x in above) - len(kept_suffix)
    below = _rows_from(doc, row, room, 1) if whole_suffix else []

    head = "".join(x + "\n" for x in reversed(above))
    tail = "".join("\n" + x for x in below)
    prev_line = next((x for x in above if x.strip()), None)
    next_line = next((x for x in below if x.strip()), None)
    mode = decide_mode(doc.language_id, kept_prefix, kept_suffix, prev_line, next_line)
    indent = kept_prefix[: len(kept_prefix) - len(kept_prefix.lstrip(" \t"))] if whole_prefix else ""
    why = f"a line of {end - start:,} characters (minified or generated code): the text around the cursor"
    parts = [
        PromptPart("prefix.cursor_line", f"{why}, cut at a token boundary", len(kept_prefix)),
        PromptPart("suffix.cursor_line", f"{why}, cut at a token boundary", len(kept_suffix)),
        PromptPart("prefix.cursor_lines", "rows just above the cursor (long ones clipped)", len(head)),
        PromptPart("suffix.cursor_lines", "rows just below the cursor (long ones clipped)", len(tail)),
    ]
    return PromptContext(
        language=canonical(doc.language_id) or doc.language_id,
        path=doc.display_path,
        prefix=head + kept_prefix,
        suffix=kept_suffix + tail,
        mode=mode.mode,
        stop=mode.stop,
        max_tokens=mode.max_tokens,
        parts=tuple(p for p in parts if p.chars > 0),
        line_prefix=kept_prefix,
        line_suffix=kept_suffix,
        indent=indent,
    )


def _rows_from(doc: Document, row: int, room: int, step: int) -> list[str]:
    """The rows next to `row` going by `step` (-1: up, the nearest first), clipped, while
    `room` characters last (each with its newline)."""
    out: list[str] = []
    r = row + step
    while 0 <= r < doc.line_count and room > 1:
        piece = _clip_row(doc, r, min(ROW_CHARS, room - 1), from_end=step < 0)
        out.append(piece)
        room -= len(piece) + 1
        r += step
    return out


def _clip_row(doc: Document, row: int, limit: int, *, from_end: bool) -> str:
    """`row` whole when it fits in `limit`, else its end (a row above: the end is nearest
    the cursor) or its start (a row below), cut at a token boundary."""
    length = doc.line_length(row)
    if length <= limit:
        return doc.line(row)
    start = doc.line_start(row)
    if from_end:
        return cut_left(doc.text[start + length - limit - 1 : start + length], limit)
    return cut_right(doc.text[start : start + limit + 1], limit)
