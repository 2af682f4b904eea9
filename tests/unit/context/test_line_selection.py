"""`LineSelection.try_add` and `grow` work out an item's cost before adding it: the same
selection, row for row, as adding each row and taking the item back when it does not fit."""

from __future__ import annotations

import random
from collections.abc import Iterable

from lsp_assist.context.trimming import LineSelection
from lsp_assist.documents.store import Document


class Reference(LineSelection):
    """The selection as it was: rows added one by one, taken back when over."""

    def try_add(self, rows: Iterable[int], limit: int | None = None) -> int:
        new = sorted({r for r in rows if 0 <= r < self.n and r not in self.kept})
        if not new:
            return 0
        before = self.cost
        for r in new:
            self._add_row(r)
        added = self.cost - before
        if self.cost > self.budget or (limit is not None and added > limit):
            for r in reversed(new):
                self._remove_row(r)
            return 0
        return added

    def grow(self, start: int, stop: int, step: int, limit: int) -> int:
        added, r = 0, start
        while r != stop and 0 <= r < self.n:
            if r not in self.kept:
                before = self.cost
                self._add_row(r)
                got = self.cost - before
                if self.cost > self.budget or got > limit - added:
                    self._remove_row(r)
                    break
                if not got:
                    break
                added += got
            r += step
        return added


def _state(sel: LineSelection) -> tuple[object, ...]:
    return (sorted(sel.kept), sorted(sel.owner.items()), sel.cost, sel.chars_by_label())


def test_items_are_kept_or_refused_as_adding_and_taking_back_did() -> None:
    rng = random.Random(5)
    for trial in range(300):
        text = "\n".join("x" * rng.choice((0, 0, 3, 5, 12, 40, 80)) for _ in range(rng.randint(5, 80)))
        doc = Document("file:///a.py", "python", 1, text, "/a.py")
        row, budget = rng.randrange(doc.line_count), rng.randint(20, 1500)
        marker = rng.choice(("", "# ...", "// ..."))
        new, old = LineSelection(doc, row, budget, marker), Reference(doc, row, budget, marker)
        for step in range(rng.randint(1, 25)):
            new.label = old.label = f"item{step}"
            if rng.random() < 0.5:
                lo = rng.randrange(-2, doc.line_count + 2)
                rows = list(range(lo, lo + rng.randint(0, 20))) + rng.sample(range(doc.line_count), 2)
                limit = rng.choice((None, rng.randint(0, 400)))
                assert new.try_add(rows, limit) == old.try_add(rows, limit), trial
            else:
                start = rng.randrange(doc.line_count)
                sign = rng.choice((1, -1))
                stop = start + sign * rng.randint(1, 40)
                cap = rng.randint(0, 600)
                assert new.grow(start, stop, sign, cap) == old.grow(start, stop, sign, cap), trial
            assert _state(new) == _state(old), trial
