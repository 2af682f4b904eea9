"""`HeadImports`: a document version's import rows, read once for every cursor row.

The candidate search reads the imports of the file's head without the cursor's own row
(what is being typed there is no import yet), so every fresh position has its own head:
parsed whole, or put together from the memo of each row's matches (400 lookups). For the
languages whose imports are read a line at a time (`structure.imports.line_rules`), this
keeps each recent document version's import rows (the few rows any rule matched, with
their matches), and a request joins them leaving its row out: what `cached_imports` of
that head gives, at the cost of the import rows only. Go and Rust (imports over several
lines) keep the full parse.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from lsp_assist.documents.store import Document
from lsp_assist.languages.imports import ImportRef
from lsp_assist.structure.imports import HEAD_ROWS, PerRule, join_rows, line_rules, row_matches

HEAD_TABLE_DOCS = 8  # documents whose current version's import rows are kept


@dataclass(frozen=True)
class _Table:
    text: str  # the version's text (compared by identity: an edit makes a new one)
    language: str
    rows: tuple[tuple[int, str, PerRule], ...]  # (row, stripped text, matches) of import rows


class HeadImports:
    def __init__(self) -> None:
        self._tables: OrderedDict[str, _Table] = OrderedDict()

    def without_row(self, doc: Document, row: int, language: str) -> tuple[ImportRef, ...] | None:
        """The imports of `doc`'s head without `row`; None for a language read whole."""
        rules = line_rules(language)
        if rules is None:
            return None
        table = self._tables.get(doc.uri)
        if table is None or table.text is not doc.text or table.language != language:
            found = []
            for r, line in enumerate(doc.lines(0, min(doc.line_count, HEAD_ROWS))):
                s = line.strip()
                if s:
                    matches = row_matches(line, s, language, rules)
                    if matches:
                        found.append((r, s, matches))
            table = _Table(doc.text, language, tuple(found))
            self._tables[doc.uri] = table
            while len(self._tables) > HEAD_TABLE_DOCS:
                self._tables.popitem(last=False)
        self._tables.move_to_end(doc.uri)
        return tuple(join_rows((s, m) for r, s, m in table.rows if r != row))

    def forget(self, uri: str) -> None:
        self._tables.pop(uri, None)
