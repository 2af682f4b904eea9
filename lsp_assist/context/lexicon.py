"""The names a row of code spells, memoised by the row's text.

Every source reads names from rows (the rows around the cursor, the enclosing function's,
a whole file's for its names line), and consecutive keystrokes read the same rows again:
one memo, bounded in bytes, shared by them all.

Requests at fresh positions of one document version read the same rows' names again (the
related lines search 400 rows, the cross-file step the enclosing function's): `rows` keeps
each recent document version's row names in a table, filled once per version as rows are
asked, so a later request slices it instead of looking each row's text up in the memo
(`row_tables.RowTables`, which also follows each edit).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from lsp_assist.context.crossfile import IDENT, STOPWORDS
from lsp_assist.context.long_lines import LONG_LINE_CHARS
from lsp_assist.context.row_tables import RowTables
from lsp_assist.memory import ByteLRU, text_names_bytes

if TYPE_CHECKING:
    from lsp_assist.documents.store import Document

ROW_TABLE_DOCS = 8  # documents whose current version's row names are kept (`rows`)
# What the tables keep alive: the sets of their rows (the memo's too, while it keeps them)
# and a pointer per row. The least recent documents' go first; a table larger than this
# on its own (a huge file) is not kept: its rows are read from the memo as before.
ROW_TABLES_BYTES = 1 << 20
IDENTS_BYTES = 6 << 20  # the names of ~9,000 line texts: the rows around a few cursors, and more
# What the names line never carries: words inside string literals (a token or key split
# into words would pass the redaction that the whole literal would not).
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`")


def near_identifiers(text: str) -> Counter[str]:
    """The names of `text` with how often each is spelled (one-letter names and stopwords out)."""
    return Counter(t for t in IDENT.findall(text) if len(t) > 1 and t not in STOPWORDS)


class Lexicon:
    """Names per row text (`line`), per row without its string literals (`code`), and a
    document version's rows (`rows`)."""

    def __init__(self) -> None:
        # Every edit adds a row's new text, so the memo is bounded in bytes.
        self.memo: ByteLRU[str, frozenset[str]] = ByteLRU(IDENTS_BYTES, text_names_bytes)
        self._tables: RowTables[frozenset[str]] = RowTables()

    @property
    def tables_bytes(self) -> int:
        """What the row tables keep alive (`ROW_TABLES_BYTES` at most)."""
        return self._tables.nbytes

    def rows(self, doc: Document, lo: int, hi: int) -> list[frozenset[str]]:
        """`line` of each of `doc`'s rows `lo`..`hi` (exclusive, clamped), from the table of
        the document's current version (rows read once per version)."""
        lo, hi = max(0, lo), min(hi, doc.line_count)
        if lo >= hi:
            return []
        table = self._tables.of(doc)
        names = table.at
        if None in names[lo:hi]:
            line, added = self.line, 0
            for r, text in enumerate(doc.lines(lo, hi), lo):
                if names[r] is None:
                    got = names[r] = line(text)
                    added += sys.getsizeof(got)
            self._tables.add(table, added)
            self._bound()
        return names[lo:hi]  # type: ignore[return-value]  # every row of the range is read

    def follow_edit(self, doc: Document) -> None:
        """After a didChange: the document's table, if it was of the text the change started
        from, now of the new text (the replaced rows to be read again, the others moved)."""
        self._tables.follow_edit(doc)

    def names_at(self, doc: Document, rows: Iterable[int]) -> list[frozenset[str]]:
        """`line` of each of `rows` of `doc`: from the current version's table where it was
        read (after didOpen: every row), else from the memo; the table is not filled."""
        table = self._tables.current(doc)
        line = self.line
        if table is None:
            return [line(doc.line(r)) for r in rows]
        names = table.at
        return [got if (got := names[r]) is not None else line(doc.line(r)) for r in rows]

    def _bound(self) -> None:
        tables = self._tables
        while tables and (len(tables) > ROW_TABLE_DOCS or tables.nbytes > ROW_TABLES_BYTES):
            tables.forget(tables.oldest())  # the least recent (the current one last)

    def forget(self, uri: str) -> None:
        self._tables.forget(uri)

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
