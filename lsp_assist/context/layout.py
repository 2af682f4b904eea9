"""A KV-cache-friendly prompt layout for the embedded model ("stable" layout).

The embedded model keeps the tokens of its last prompt in its KV cache and reads only
what follows the longest common prefix (`providers/llama_engine.py`). The trimmed,
syntax-aware prompt the builder makes for remote models picks different lines at every
keystroke (enclosing block, related lines, signatures), so its text changes near the
start and every request is read from scratch (~1.3 s for 400 tokens on 2 cores). This
layout keeps the start of the prompt byte-identical while the user types:

1. stable content first: the cross-file snippets (sorted by path, and frozen for as long
   as the window's anchor stays put, so a new ranking does not rewrite the start), then,
   when the window does not reach the top of the file, the file's first lines (imports);
2. the local prefix window: whole lines from an *anchor* row to the cursor row. The anchor
   is the first line starting at or after a point on a coarse grid (a third of the window
   budget) below ``cursor line start - window budget``: typing on a line never moves it,
   new lines move it only every third of a budget, so the KV cache survives;
3. the typed part of the current line, last.

The suffix is not in the prompt for models without FIM tokens (Gemma 3, SmolLM2): the
"none" template sends the prefix only, and the suffix is kept in the context for
post-processing (cutting text that repeats what follows the cursor). For a local FIM
model the suffix follows the prefix, so only the suffix's few tokens are re-read.

Consecutive keystrokes on one line therefore share every token but the last one or two.
"""

from __future__ import annotations

import dataclasses
import sys

from lsp_assist.context.crossfile import clip_lines
from lsp_assist.context.templates import comment_syntax
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext, PromptPart, Snippet
from lsp_assist.memory import ByteLRU

LAYOUTS = ("trimmed", "stable")
HEAD_SHARE = 0.2  # of the budget, for the file's first lines when the window misses them
SNIPPET_SHARE = 0.07  # reserved for cross-file snippets (the builder's own share)
STEP_SHARE = 1 / 3  # grid step of the anchor, as a share of the window budget
LINE_SHARE = 0.5  # the typed part of a very long cursor line is cut to this share
MEMO_ENTRIES = 64
MEMO_BYTES = 1 << 20  # the frozen snippets (the cross-file share of each budget)


def _snippets_bytes(key: tuple[str, int], snippets: tuple[Snippet, ...]) -> int:
    return sys.getsizeof(snippets) + sum(sys.getsizeof(s.text) + sys.getsizeof(s) for s in snippets)


class StableLayout:
    """Turns the builder's context into the stable layout; remembers frozen snippets."""

    def __init__(self) -> None:
        self._snippets: ByteLRU[tuple[str, int], tuple[Snippet, ...]] = ByteLRU(
            MEMO_BYTES, _snippets_bytes, MEMO_ENTRIES
        )

    @staticmethod
    def reservation(budget: int) -> int:
        """Characters this layout keeps for cross-file snippets out of `budget`."""
        budget = max(0, budget)
        return budget - int(budget * (1 - SNIPPET_SHARE))

    @staticmethod
    def anchor_row(doc: Document, row: int, window_chars: int) -> int:
        """The first row of the local window: 0 when the whole prefix fits, else the first
        line starting at or after a grid point, so the anchor moves only in big steps."""
        start = doc.line_start(row)
        if start <= window_chars:
            return 0
        step = max(64, int(window_chars * STEP_SHARE))
        target = start - window_chars
        grid = -(-target // step) * step  # the grid point at or after the target
        lo, hi = 0, row  # first row whose start >= grid (binary search on line starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if doc.line_start(mid) >= grid:
                hi = mid
            else:
                lo = mid + 1
        return lo

    @staticmethod
    def head_rows(doc: Document, anchor: int, budget: int) -> int:
        """How many of the file's first rows fit in `budget` (never reaching the anchor)."""
        used = 0
        rows = 0
        while rows < anchor:
            n = len(doc.line(rows)) + 1
            if used + n > budget:
                break
            used += n
            rows += 1
        return rows

    def _frozen(self, key: tuple[str, int], snippets: tuple[Snippet, ...]) -> tuple[Snippet, ...]:
        got = self._snippets.get(key)
        if got is None:
            got = tuple(sorted(snippets, key=lambda s: (s.path, s.text)))
            self._snippets.put(key, got)
        return got

    def forget(self, uri: str) -> None:
        self._snippets.discard_where(lambda key: key[0] == uri)

    @property
    def nbytes(self) -> int:
        return self._snippets.nbytes

    def apply(self, ctx: PromptContext, doc: Document, cursor: Cursor, budget: int) -> PromptContext:
        """`ctx` (from the builder) with the stable prefix, snippets and parts."""
        cur = doc.clamp(cursor)
        row = cur.line
        line_prefix = doc.line(row)[: cur.character]
        budget = max(0, budget)
        full = int(budget * (1 - SNIPPET_SHARE))
        window_budget = int(budget * (1 - SNIPPET_SHARE - HEAD_SHARE))
        anchor = 0 if doc.line_start(row) <= full else self.anchor_row(doc, row, window_budget)
        head = self.head_rows(doc, anchor, int(budget * HEAD_SHARE)) if anchor > 0 else 0
        max_line = max(1, int(budget * LINE_SHARE))
        if len(line_prefix) > max_line:
            line_prefix = line_prefix[-max_line:]
        head_text = doc.text[: doc.line_start(head)] if head else ""
        marker = ""
        if anchor > head:
            start, end = comment_syntax(ctx.language)
            marker = f"{start} ...{(' ' + end) if end else ''}\n" if head else ""
        window = doc.text[doc.line_start(anchor) : doc.line_start(row)]
        prefix = head_text + marker + window + line_prefix
        # The builder's outlines may be larger than this layout reserves: keep them to the
        # reservation (whole lines), a fixed size, so the start stays byte-identical.
        snippets = _fit(self._frozen((doc.uri, anchor), ctx.snippets), self.reservation(budget))
        parts = [
            PromptPart("layout.snippets", "cross-file snippets, sorted and frozen while the anchor holds", n)
            for n in [sum(len(s.text) for s in snippets)]
            if n
        ]
        if head_text:
            why = "the file's first lines (stable while typing below)"
            parts.append(PromptPart("layout.head", why, len(head_text)))
        if marker:
            parts.append(PromptPart("gap_markers", "one marker line for the lines left out", len(marker)))
        parts.append(
            PromptPart(
                "layout.window",
                f"whole lines from the anchor (row {anchor + 1}) to the cursor line;"
                " the anchor moves in big steps",
                len(window),
            )
        )
        parts.append(PromptPart("prefix.cursor_line", "the typed part of the cursor line", len(line_prefix)))
        parts.extend(p for p in ctx.parts if p.label.startswith("suffix"))
        return dataclasses.replace(ctx, prefix=prefix, snippets=snippets, parts=tuple(parts))


__all__ = ["LAYOUTS", "StableLayout"]


def _fit(snippets: tuple[Snippet, ...], limit: int) -> tuple[Snippet, ...]:
    """The snippets, in order, within `limit` characters; the last one cut after a whole line."""
    out: list[Snippet] = []
    used = 0
    for snip in snippets:
        text = clip_lines(snip.text, limit - used)
        if text:
            out.append(snip if text == snip.text else dataclasses.replace(snip, text=text))
            used += len(text)
        if text != snip.text:
            break
    return tuple(out)
