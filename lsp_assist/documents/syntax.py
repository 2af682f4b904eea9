"""An incrementally maintained tree-sitter tree for one document.

Each text change is applied to the old tree with `Tree.edit` (byte offsets and
(row, byte column) points); the re-parse happens lazily, on the first `tree()` call after
a change, so a burst of keystrokes costs one incremental parse (about 1-2 ms on a
10,000-line file) instead of one per keystroke, and the request path always sees a tree
that matches the text. A document without a grammar, too large, or binary-looking has no
tree and callers use line-based handling.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

from tree_sitter import Language, Parser, Point, Tree

_log = logging.getLogger(__name__)

_LOG_SIZE = 256


class Edit(NamedTuple):
    """One text change in bytes, with the rows its start and its old and new ends are on.

    `structural` marks a range whose syntax changed in a re-parse without its text changing
    (`Tree.changed_ranges`), logged as an edit that keeps the length."""

    start: int
    old_end: int
    new_end: int
    old_end_row: int
    new_end_row: int
    start_row: int = -1
    structural: bool = False


class SyntaxState:
    """The tree of one document, kept in step with its text through `edit` calls."""

    __slots__ = ("_dirty", "_failed", "_log", "_parser", "_tree", "generation", "language")

    def __init__(self, language: Language) -> None:
        self.language = language
        self._parser = Parser(language)
        self._tree: Tree | None = None
        self._dirty = True
        self._failed = False
        #: Bumped on every edit and reset; `edits_since` replays the edits after a generation,
        #: so per-document caches keyed by byte ranges survive a keystroke.
        self.generation = 0
        self._log: deque[tuple[int, Edit]] = deque(maxlen=_LOG_SIZE)

    def edits_since(self, generation: int) -> list[Edit] | None:
        """The edits made after `generation`, oldest first, with the ranges whose syntax
        changed in a re-parse (as edits that keep the length) in between.

        None when they are no longer known (a reset, or too many edits): rescan everything.
        """
        if generation == self.generation:
            return []
        out = [e for g, e in self._log if g > generation]
        if len(out) != self.generation - generation:
            return None
        return out

    def edited_only_on(self, generation: int, row: int, *, structural_anywhere: bool = False) -> bool:
        """Whether every edit since `generation` is on `row` and adds or removes no line, so
        every other row's text and position still hold (the typing path's caches keep what
        they read of them). The ranges a re-parse changed count as edits too, unless
        `structural_anywhere`: a cache of definitions may keep them through a half-typed
        line that turns the code below it into an error; a cache of prose spans may not."""
        if generation < 0:
            return False
        edits = self.edits_since(generation)
        if edits is None:
            return False
        return all(
            (structural_anywhere and e.structural) or e.start_row == e.old_end_row == e.new_end_row == row
            for e in edits
        )

    def edit(
        self,
        start_byte: int,
        old_end_byte: int,
        new_end_byte: int,
        start_point: tuple[int, int],
        old_end_point: tuple[int, int],
        new_end_point: tuple[int, int],
    ) -> None:
        """Record one change on the current tree; the re-parse waits for the next `tree()`."""
        if self._tree is not None:
            self._tree.edit(
                start_byte=start_byte,
                old_end_byte=old_end_byte,
                new_end_byte=new_end_byte,
                start_point=Point(*start_point),
                old_end_point=Point(*old_end_point),
                new_end_point=Point(*new_end_point),
            )
        self._record(
            Edit(start_byte, old_end_byte, new_end_byte, old_end_point[0], new_end_point[0], start_point[0])
        )
        self._dirty = True

    def _record(self, edit: Edit) -> None:
        self.generation += 1
        self._log.append((self.generation, edit))

    def reset(self) -> None:
        """Forget the tree: the next `tree()` does a full parse (used on full replacements)."""
        self._tree = None
        self._dirty = True
        self._failed = False
        self.generation += 1
        self._log.clear()

    @property
    def dirty(self) -> bool:
        return self._dirty

    def tree(self, source: Callable[[], bytes]) -> Tree | None:
        """The up-to-date tree, re-parsing (incrementally when possible) if the text changed.

        `source` returns the current UTF-8 text; it is only called when a parse is needed.
        """
        if not self._dirty:
            return self._tree
        if self._failed and self._tree is None:
            return None
        old = self._tree
        try:
            data = source()
            new = self._parser.parse(data, old) if old is not None else self._parser.parse(data)
            if new is None:
                raise RuntimeError("parse returned no tree")
            if old is not None:
                # Where the structure changed without the text changing there (error
                # recovery, a string opened above): logged like edits of length 0, so
                # caches keyed by byte ranges drop what lies there.
                for r in old.changed_ranges(new):
                    end_row = r.end_point.row
                    self._record(
                        Edit(r.start_byte, r.end_byte, r.end_byte, end_row, end_row, r.start_point.row, True)
                    )
        except Exception:  # a timeout or a binding error: keep serving line-based context
            _log.warning("tree-sitter parse failed; falling back to line-based context", exc_info=True)
            self._tree = None
            self._failed = True
            self._dirty = False
            return None
        self._tree = new
        self._dirty = False
        return new

    def full_parse(self, data: bytes) -> Tree | None:
        """A fresh parse that ignores the incremental state (benchmarks and tests compare it)."""
        try:
            return self._parser.parse(data)
        except Exception:
            return None
