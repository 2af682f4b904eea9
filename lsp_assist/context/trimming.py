"""Budgeted selection of whole lines around a cursor, and cuts that never split a token.

`LineSelection` keeps a set of rows of one document plus the cursor row (always kept,
split at the cursor). Rows are added in priority order, all-or-nothing per item, while
the rendered size (lines, newlines and one gap marker per skipped stretch) stays within
the budget. Rendering keeps file order: rows before the cursor form the prefix, rows after
it the suffix.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Protocol

from tree_sitter import Node, Point, Tree

# Node types that hold a sequence of statements or members: a line whose first node sits
# directly in one of these starts a statement.
_CONTAINERS = frozenset(
    {
        "module",
        "block",
        "program",
        "statement_block",
        "source_file",
        "class_body",
        "declaration_list",
        "compound_statement",
        "translation_unit",
        "field_declaration_list",
        "interface_body",
        "enum_body",
        "object_type",
        "switch_body",
        "switch_case",
        "switch_default",
        "expression_case",
        "type_case",
        "default_case",
        "communication_case",
        "match_block",
        "constructor_body",
        "enum_body_declarations",
        "else_clause",
        "case_clause",
        "ERROR",
    }
)
_CLOSER_START = ("}", ")", "]")


class Lines(Protocol):
    """What the selection needs from a document."""

    @property
    def line_count(self) -> int: ...

    def line(self, line: int) -> str: ...

    def row_lengths(self) -> list[int]: ...


def is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def cut_left(text: str, limit: int) -> str:
    """The last `limit` characters at most, starting on a token boundary."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    i = len(text) - limit
    # Move right until the cut is not inside a word and lands after a separator.
    while i < len(text) and i > 0 and is_word(text[i - 1]) and is_word(text[i]):
        i += 1
    return text[i:]


def cut_right(text: str, limit: int) -> str:
    """The first `limit` characters at most, ending on a token boundary."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    i = limit
    while i > 0 and is_word(text[i - 1]) and is_word(text[i]):
        i -= 1
    return text[:i]


def is_statement_start(tree: Tree | None, lines: Lines, row: int) -> bool:
    """True when `row` begins a statement or member (a safe first line for a cut).

    Blank lines and comments count; so does every line when there is no tree.
    """
    text = lines.line(row)
    stripped = text.lstrip()
    if not stripped:
        return True
    if stripped.startswith(_CLOSER_START):
        return False
    if tree is None:
        return True
    col = len(text[: len(text) - len(stripped)].encode("utf-8", "surrogatepass"))
    node: Node | None = tree.root_node.descendant_for_point_range(Point(row, col), Point(row, col))
    if node is None:
        return True
    while node.parent is not None and node.parent.start_byte == node.start_byte:
        node = node.parent
    if node.start_point.row != row:
        return False
    parent = node.parent
    return parent is None or parent.type in _CONTAINERS or "comment" in node.type


class LineSelection:
    """Rows kept around one cursor under a character budget."""

    def __init__(self, lines: Lines, cursor_row: int, budget: int, marker: str) -> None:
        self.lines = lines
        self.n = lines.line_count
        self.cursor_row = cursor_row
        self.budget = budget
        self.marker = marker
        self._marker_cost = len(marker) + 1 if marker else 0
        self.kept: set[int] = {cursor_row}
        self._runs = 1
        self.line_chars = 0  # chars of kept rows other than the cursor row (with newlines)
        self.cursor_chars = 0  # set by the caller: the cursor row's kept prefix + suffix
        self._row_lengths = lines.row_lengths()  # the version's, worked out once
        #: The label rows are added under (for `parts`); "*x" means prefix.x / suffix.x by side.
        self.label = ""
        self.owner: dict[int, str] = {}
        #: Optional: the span (first, last row) of prose at a row that `grow` steps over
        #: instead of keeping (long docstrings of other definitions): more code per budget.
        self.skipper: Callable[[int], tuple[int, int] | None] | None = None
        self.skipped: set[int] = set()

    def row_cost(self, row: int) -> int:
        if 0 <= row < self.n:
            return self._row_lengths[row] + 1
        return 1  # past the end: an empty row

    @property
    def cost(self) -> int:
        return self.line_chars + self.cursor_chars + self._marker_cost * (self._runs - 1)

    @property
    def remaining(self) -> int:
        return self.budget - self.cost

    def _add_cost(self, row: int) -> int:
        """What adding `row` (not kept) would add to `cost`."""
        kept = self.kept
        before, after = (row - 1) in kept, (row + 1) in kept
        runs = -1 if before and after else (1 if not before and not after else 0)
        return self.row_cost(row) + self._marker_cost * runs

    def _add_row(self, row: int) -> None:
        kept = self.kept
        before, after = (row - 1) in kept, (row + 1) in kept
        if before and after:
            self._runs -= 1
        elif not before and not after:
            self._runs += 1
        kept.add(row)
        self.owner.setdefault(row, self.label)
        self.line_chars += self.row_cost(row)

    def _remove_row(self, row: int) -> None:
        kept = self.kept
        kept.discard(row)
        self.owner.pop(row, None)
        before, after = (row - 1) in kept, (row + 1) in kept
        if before and after:
            self._runs += 1
        elif not before and not after:
            self._runs -= 1
        self.line_chars -= self.row_cost(row)

    def try_add(self, rows: Iterable[int], limit: int | None = None) -> int:
        """Add all of `rows` or none; returns the characters added (0 when it did not fit).

        `limit` caps what this item may add on top of the overall budget.
        """
        kept = self.kept
        new = sorted({r for r in rows if 0 <= r < self.n and r not in kept})
        if not new:
            return 0
        # What adding them costs, worked out before any is added (an item that does not fit,
        # a whole enclosing function, is not added row by row and taken back).
        lengths = self._row_lengths
        runs = chars = 0
        prev = -2
        for r in new:
            before, after = r - 1 == prev or (r - 1) in kept, (r + 1) in kept
            if before and after:
                runs -= 1
            elif not before and not after:
                runs += 1
            chars += lengths[r] + 1
            prev = r
        added = chars + self._marker_cost * runs
        if self.cost + added > self.budget or (limit is not None and added > limit):
            return 0
        kept.update(new)
        owner, label = self.owner, self.label
        for r in new:
            owner.setdefault(r, label)
        self.line_chars += chars
        self._runs += runs
        return added

    def grow(self, start: int, stop: int, step: int, limit: int) -> int:
        """Add rows one by one from `start` towards `stop` (exclusive) while they fit."""
        added = 0
        r = start
        while r != stop and 0 <= r < self.n:
            if r not in self.kept and self.skipper is not None:
                span = self.skipper(r)
                if span is not None and not any(x in self.kept for x in range(span[0], span[1] + 1)):
                    self.skipped.update(range(span[0], span[1] + 1))
                    r = span[1] + 1 if step > 0 else span[0] - 1
                    if (step > 0 and r >= stop) or (step < 0 and r <= stop):
                        break
                    continue
            if r not in self.kept:  # `try_add((r,), limit - added)`, for one row
                got = self._add_cost(r)
                if self.cost + got > self.budget or got > limit - added:
                    break
                self._add_row(r)
                if not got:  # kept, as `try_add` keeps it (a row that joins two runs)
                    break
                added += got
            r += step
        return added

    def trim_to_statements(self, tree: Tree | None, max_drop: int = 12) -> None:
        """Move the outer edges of the contiguous window around the cursor to statement limits."""
        top = self.cursor_row
        while top - 1 in self.kept:
            top -= 1
        if top < self.cursor_row and top > 0:
            dropped = 0
            r = top
            while r < self.cursor_row and dropped < max_drop and not is_statement_start(tree, self.lines, r):
                r += 1
                dropped += 1
            if r < self.cursor_row and dropped < max_drop:
                for x in range(top, r):
                    self._remove_row(x)
        bottom = self.cursor_row
        while bottom + 1 in self.kept:
            bottom += 1
        if bottom > self.cursor_row and bottom + 1 < self.n:
            dropped = 0
            r = bottom
            while (
                r > self.cursor_row and dropped < max_drop and not is_statement_start(tree, self.lines, r + 1)
            ):
                r -= 1
                dropped += 1
            if dropped < max_drop:
                for x in range(r + 1, bottom + 1):
                    self._remove_row(x)

    def chars_by_label(self) -> dict[str, int]:
        """Characters of kept rows per label, plus the gap markers; sums to `cost`."""
        out: dict[str, int] = {}
        for row, label in self.owner.items():
            if label.startswith("*"):
                label = ("prefix." if row < self.cursor_row else "suffix.") + label[1:]
            out[label] = out.get(label, 0) + self.row_cost(row)
        markers = self._marker_cost * (self._runs - 1)
        if markers:
            out["gap_markers"] = markers
        return out

    def fill_cheap_gaps(self) -> None:
        """Replace a gap marker by the skipped rows when they cost no more (blank lines)."""
        if not self.marker:
            return
        rows = sorted(self.kept)
        for a, b in itertools.pairwise(rows):
            gap = b - a - 1
            if (
                0 < gap <= self._marker_cost
                and sum(self.row_cost(r) for r in range(a + 1, b)) <= self._marker_cost
            ):
                self.label = "gap_fill"
                for r in range(a + 1, b):
                    self._add_row(r)

    def render(self, line_prefix: str, line_suffix: str) -> tuple[str, str]:
        """(prefix, suffix): kept rows in file order, a marker line for each skipped stretch."""
        rows = sorted(self.kept)
        pre: list[str] = []
        last = -1
        for r in rows:
            if r >= self.cursor_row:
                break
            if last >= 0 and r != last + 1 and self.marker:
                pre.append(self.marker + "\n")
            pre.append(self.lines.line(r) + "\n")
            last = r
        if last >= 0 and last != self.cursor_row - 1 and self.marker:
            pre.append(self.marker + "\n")
        suf: list[str] = [line_suffix]
        last = self.cursor_row
        for r in rows:
            if r <= self.cursor_row:
                continue
            if r != last + 1 and self.marker:
                suf.append("\n" + self.marker)
            suf.append("\n" + self.lines.line(r))
            last = r
        return "".join(pre) + line_prefix, "".join(suf)
