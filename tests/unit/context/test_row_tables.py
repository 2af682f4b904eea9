"""`RowTables`: a per-document table of one value per row that follows edits (the lexicon's
row names and the related lines' windows share it)."""

from __future__ import annotations

import sys

from lsp_assist.context.row_tables import SLOT_BYTES, RowTables
from lsp_assist.documents.store import Document, DocumentStore, TextChange
from lsp_assist.domain import Cursor

URI = "file:///t.py"
TEXT = "".join(f"row_{i} = {i}\n" for i in range(10))


def _store(tables: RowTables[str]) -> tuple[DocumentStore, Document]:
    store = DocumentStore()
    doc = store.open(URI, "python", 1, TEXT, "/t.py")
    store.on_change.append(tables.follow_edit)  # as the context engine's hook does
    return store, doc


def _fill(tables: RowTables[str], doc: Document) -> None:
    table = tables.of(doc)
    for r in range(doc.line_count):
        table.at[r] = doc.line(r)
        tables.add(table, sys.getsizeof(table.at[r]))


def test_a_table_is_of_one_version_and_counts_its_slots_and_values() -> None:
    tables: RowTables[str] = RowTables()
    _, doc = _store(tables)
    table = tables.of(doc)
    assert table.at == [None] * doc.line_count and tables.of(doc) is table
    assert tables.current(doc) is table and tables.nbytes == SLOT_BYTES * doc.line_count
    _fill(tables, doc)
    assert tables.nbytes == table.nbytes > SLOT_BYTES * doc.line_count
    other = Document(URI, "python", 2, TEXT + "x = 1\n", "/t.py")  # changed without the hook
    assert tables.current(other) is None
    assert tables.of(other) is not table and tables.nbytes == SLOT_BYTES * other.line_count
    tables.forget(URI)
    assert tables.nbytes == 0 and URI not in tables


def test_an_edit_empties_the_rows_it_replaced_and_moves_the_others() -> None:
    tables: RowTables[str] = RowTables()
    store, doc = _store(tables)
    _fill(tables, doc)
    store.change(URI, 2, [TextChange(Cursor(3, 0), Cursor(3, 0), "new = 0\n")])  # row 3 split
    table = tables.current(doc)
    assert table is not None and len(table.at) == doc.line_count
    assert table.at[3] is None and table.at[4] is None  # the replaced row, now two
    assert table.at[:3] == [doc.line(r) for r in range(3)]
    assert table.at[5:] == [doc.line(r) for r in range(5, doc.line_count)]  # moved down one
    assert tables.nbytes == table.nbytes
    kept = sum(sys.getsizeof(v) for v in table.at if v is not None)
    assert table.nbytes == SLOT_BYTES * doc.line_count + kept


def test_an_edit_empties_the_reach_before_it_and_a_whole_replace_drops_the_table() -> None:
    tables: RowTables[str] = RowTables(reach=2)  # a value reads its row and the 2 after it
    store, doc = _store(tables)
    _fill(tables, doc)
    store.change(URI, 2, [TextChange(Cursor(5, 0), Cursor(5, 1), "R")])
    table = tables.current(doc)
    assert table is not None
    assert [r for r, v in enumerate(table.at) if v is None] == [3, 4, 5]
    store.change(URI, 3, [TextChange(None, None, "x = 1\n")])
    assert URI not in tables and tables.nbytes == 0


def test_the_least_recent_is_first_and_empty_starts_one_over() -> None:
    tables: RowTables[str] = RowTables()
    a = Document("file:///a.py", "python", 1, TEXT, "/a.py")
    b = Document("file:///b.py", "python", 1, TEXT, "/b.py")
    tables.of(a)
    _fill(tables, b)
    assert tables.oldest() == a.uri and list(tables) == [a.uri, b.uri]
    tables.of(a)
    assert tables.oldest() == b.uri
    table = tables[b.uri]
    tables.empty(table)
    assert table.at == [None] * b.line_count
    assert tables.nbytes == SLOT_BYTES * (a.line_count + b.line_count)
