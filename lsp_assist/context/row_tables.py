"""A table per document of one value per row, for its current version, that follows edits.

The lexicon's row names (`lexicon.Lexicon.rows`) and the related lines' windows
(`sources.related.RelatedLines`) keep, for each recent document, a slot per row of its
current version's text (None: not computed yet), so requests at fresh positions of an
unchanged document slice a table instead of computing each row's value again. `RowTables`
is what both share:

- `of(doc)`: the table of the document's current version (a new, empty one when the text
  changed without `follow_edit`), now the most recent;
- `current(doc)`: that table if there is one, without making or reordering anything;
- `follow_edit(doc)`: after a didChange, the table of the text the change started from now
  of the new text: the rows the edit replaced (and the `reach` rows before them, whose
  value also reads a replaced row) are emptied, the others move with their rows;
- `add(table, n)`: bytes a filled slot keeps alive, counted in the table and in `nbytes`.

A table is of one text, compared by identity (an edit makes a new string). Its bytes are a
pointer per slot plus what `add` counted. What is kept is bounded by the owner (least recent
document out first: `oldest`, `forget`; `empty` starts the current one over).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from lsp_assist.documents.store import Document

T = TypeVar("T")
SLOT_BYTES = 8  # a pointer per row


@dataclass
class RowTable(Generic[T]):
    """One document version's value per row (None: not computed yet)."""

    text: str  # the version's text (compared by identity: an edit makes a new one)
    at: list[T | None]
    nbytes: int


class RowTables(Generic[T]):
    """Each recent document's `RowTable`, by URI, least recent first.

    `reach`: how many rows before a row a value reads (a window of `reach + 1` rows starts
    there): an edit empties those slots too."""

    def __init__(self, reach: int = 0) -> None:
        self.reach = reach
        self._tables: OrderedDict[str, RowTable[T]] = OrderedDict()
        self.nbytes = 0  # every table's, slots and values

    def __len__(self) -> int:
        return len(self._tables)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tables)

    def __contains__(self, uri: object) -> bool:
        return uri in self._tables

    def __getitem__(self, uri: str) -> RowTable[T]:
        return self._tables[uri]

    def get(self, uri: str) -> RowTable[T] | None:
        return self._tables.get(uri)

    def current(self, doc: Document) -> RowTable[T] | None:
        """The table of `doc`'s current version, if there is one (nothing reordered)."""
        table = self._tables.get(doc.uri)
        return table if table is not None and table.text is doc.text else None

    def of(self, doc: Document) -> RowTable[T]:
        """The table of `doc`'s current version, made empty when there is none; now the most
        recent."""
        table = self._tables.get(doc.uri)
        if table is None or table.text is not doc.text:
            self.forget(doc.uri)
            table = RowTable(doc.text, [None] * doc.line_count, SLOT_BYTES * doc.line_count)
            self._tables[doc.uri] = table
            self.nbytes += table.nbytes
        self._tables.move_to_end(doc.uri)
        return table

    def add(self, table: RowTable[T], nbytes: int) -> None:
        """Count `nbytes` more kept by `table` (a value put in a slot)."""
        table.nbytes += nbytes
        self.nbytes += nbytes

    def follow_edit(self, doc: Document) -> None:
        """After a didChange: the document's table, if it was of the text the change started
        from, now of the new text (the slots reading a replaced row emptied, the others
        moved with their rows)."""
        table = self._tables.get(doc.uri)
        if table is None or table.text is doc.text:
            return
        edits = doc.row_edits_since(table.text)
        if edits is None:
            self.forget(doc.uri)
            return
        at, before = table.at, table.nbytes
        for first, last, new_lines in edits:
            lo = max(0, first - self.reach)  # the first slot reading row `first`
            gone = at[lo : last + 1]
            table.nbytes -= sum(sys.getsizeof(v) for v in gone if v is not None)
            table.nbytes += SLOT_BYTES * (new_lines - (last - first))
            at[lo : last + 1] = [None] * (first + new_lines + 1 - lo)
        self.nbytes += table.nbytes - before
        table.text = doc.text
        if len(at) != doc.line_count:  # not the text the edits describe: read it again
            self.forget(doc.uri)

    def oldest(self) -> str:
        """The URI of the least recent table (there is one)."""
        return next(iter(self._tables))

    def empty(self, table: RowTable[T]) -> None:
        """Every slot of `table` emptied (its values' bytes no longer counted)."""
        self.nbytes -= table.nbytes - SLOT_BYTES * len(table.at)
        table.at[:] = [None] * len(table.at)
        table.nbytes = SLOT_BYTES * len(table.at)

    def forget(self, uri: str) -> None:
        table = self._tables.pop(uri, None)
        if table is not None:
            self.nbytes -= table.nbytes
