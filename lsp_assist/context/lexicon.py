"""The names a row of code spells, memoised by the row's text.

Every source reads names from rows (the rows around the cursor, the enclosing function's,
a whole file's for its names line), and consecutive keystrokes read the same rows again:
one memo, bounded in bytes, shared by them all.

Requests at fresh positions of one document version read the same rows' names again (the
related lines search 400 rows, the cross-file step the enclosing function's): `rows` keeps
each recent document version's row names in a table, filled once per version as rows are
asked, so a later request slices it instead of looking each row's text up in the memo.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsp_assist.context.crossfile import IDENT, STOPWORDS
from lsp_assist.context.long_lines import LONG_LINE_CHARS
from lsp_assist.memory import ByteLRU, text_names_bytes

if TYPE_CHECKING:
    from lsp_assist.documents.store import Document

ROW_TABLE_DOCS = 8  # documents whose current version's row names are kept (`rows`)
# What the tables keep alive: the sets of their rows (the memo's too, while it keeps them)
# and a pointer per row. The least recent documents' go first; a table larger than this
# on its own (a huge file) is not kept: its rows are read from the memo as before.
ROW_TABLES_BYTES = 1 << 20
_PTR = 8
IDENTS_BYTES = 6 << 20  # the names of ~9,000 line texts: the rows around a few cursors, and more
# What the names line never carries: words inside string literals (a token or key split
# into words would pass the redaction that the whole literal would not).
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`")


def near_identifiers(text: str) -> Counter[str]:
    """The names of `text` with how often each is spelled (one-letter names and stopwords out)."""
    return Counter(t for t in IDENT.findall(text) if len(t) > 1 and t not in STOPWORDS)


@dataclass
class _RowTable:
    """One document version's row names (None: not asked yet)."""

    text: str  # the version's text (compared by identity: an edit makes a new one)
    names: list[frozenset[str] | None]
    nbytes: int


class Lexicon:
    """Names per row text (`line`), per row without its string literals (`code`), and a
    document version's rows (`rows`)."""

    def __init__(self) -> None:
        # Every edit adds a row's new text, so the memo is bounded in bytes.
        self.memo: ByteLRU[str, frozenset[str]] = ByteLRU(IDENTS_BYTES, text_names_bytes)
        self._tables: OrderedDict[str, _RowTable] = OrderedDict()
        self.tables_bytes = 0

    def rows(self, doc: Document, lo: int, hi: int) -> list[frozenset[str]]:
        """`line` of each of `doc`'s rows `lo`..`hi` (exclusive, clamped), from the table of
        the document's current version (rows read once per version)."""
        lo, hi = max(0, lo), min(hi, doc.line_count)
        if lo >= hi:
            return []
        table = self._tables.get(doc.uri)
        if table is None or table.text is not doc.text:
            self.forget(doc.uri)
            table = _RowTable(doc.text, [None] * doc.line_count, _PTR * doc.line_count)
            self._tables[doc.uri] = table
            self.tables_bytes += table.nbytes
        self._tables.move_to_end(doc.uri)
        names = table.names
        if None in names[lo:hi]:
            line, added = self.line, 0
            for r, text in enumerate(doc.lines(lo, hi), lo):
                if names[r] is None:
                    got = names[r] = line(text)
                    added += sys.getsizeof(got)
            table.nbytes += added
            self.tables_bytes += added
            self._bound()
        return names[lo:hi]  # type: ignore[return-value]  # every row of the range is read

    def follow_edit(self, doc: Document) -> None:
        """After a didChange: the document's table, if it was of the text the change started
        from, now of the new text (the replaced rows to be read again, the others moved)."""
        table = self._tables.get(doc.uri)
        if table is None or table.text is doc.text:
            return
        edits = doc.row_edits_since(table.text)
        if edits is None:
            self.forget(doc.uri)
            return
        names, before = table.names, table.nbytes
        for first, last, new_lines in edits:
            gone = names[first : last + 1]
            table.nbytes -= sum(sys.getsizeof(n) for n in gone if n is not None)
            table.nbytes += _PTR * (new_lines - (last - first))
            names[first : last + 1] = [None] * (new_lines + 1)
        self.tables_bytes += table.nbytes - before
        table.text = doc.text
        if len(names) != doc.line_count:  # not the text the edits describe: read it again
            self.forget(doc.uri)

    def names_at(self, doc: Document, rows: Iterable[int]) -> list[frozenset[str]]:
        """`line` of each of `rows` of `doc`: from the current version's table where it was
        read (after didOpen: every row), else from the memo; the table is not filled."""
        table = self._tables.get(doc.uri)
        line = self.line
        if table is None or table.text is not doc.text:
            return [line(doc.line(r)) for r in rows]
        names = table.names
        return [got if (got := names[r]) is not None else line(doc.line(r)) for r in rows]

    def _bound(self) -> None:
        while self._tables and (len(self._tables) > ROW_TABLE_DOCS or self.tables_bytes > ROW_TABLES_BYTES):
            self.forget(next(iter(self._tables)))  # the least recent (the current one last)

    def forget(self, uri: str) -> None:
        table = self._tables.pop(uri, None)
        if table is not None:
            self.tables_bytes -= table.nbytes

    def line(self, text: str) -> frozenset[str]:
        if len(text) > LONG_LINE_CHARS:  # a minified row: its start stands for it
            text = text[:LONG_LINE_CHARS]
        got = self.memo.get(text)
        if got is None:
            got = frozenset(t for t in IDENT.findall(text) if len(t) > 1 and t not in STOPWORDS)
            self.memo.put(text, got)
        return got

    def code(self, text: str) -> frozenset[str]:
        """`line` of a row without its string literals (read once per file read)."""
        return self.line(_QUOTED.sub(" ", text[:LONG_LINE_CHARS]))
