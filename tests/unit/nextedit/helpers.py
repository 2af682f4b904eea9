"""Typing into a `DocumentStore` one keystroke at a time, as an editor's didChange does, and
asking the rules predictor about the last edit."""

from __future__ import annotations

from lsp_assist.documents.store import Document, DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.nextedit import rules
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.proposal import Proposal


def session(
    text: str, uri: str = "file:///ws/m.py", language: str = "python"
) -> tuple[DocumentStore, EditHistory]:
    store = DocumentStore()
    history = EditHistory()
    store.on_open.append(history.open)
    store.on_edit.append(history.on_edit)
    store.on_close.append(lambda doc: history.close(doc.uri))
    store.open(uri, language, 1, text)
    return store, history


def position(doc: Document, offset: int) -> Cursor:
    line = doc.text.count("\n", 0, offset)
    return Cursor(line, offset - (doc.text.rfind("\n", 0, offset) + 1))


def change(store: DocumentStore, uri: str, start: int, end: int, text: str) -> Document:
    doc = store.get(uri)
    assert doc is not None
    a, b = position(doc, start), position(doc, end)
    out = store.change(uri, doc.version + 1, [TextChange(a, b, text)])
    assert out is not None
    return out


def retype(store: DocumentStore, uri: str, old: str, new: str, nth: int = 0) -> Document:
    """Replace the `nth` occurrence of `old` by `new` as a user does: select it, type the
    first character over it, then the rest one key at a time."""
    doc = store.get(uri)
    assert doc is not None
    at = -1
    for _ in range(nth + 1):
        at = doc.text.index(old, at + 1)
    doc = change(store, uri, at, at + len(old), new[0])
    for i, ch in enumerate(new[1:], start=1):
        doc = change(store, uri, at + i, at + i, ch)
    return doc


def predict(doc: Document, history: EditHistory, others: list[Document] | None = None) -> list[Proposal]:
    """The rules predictor's proposals after the document's last edit, the cursor at its end."""
    h = history.get(doc.uri)
    assert h is not None and h.last is not None
    cursor = position(doc, h.last.end)
    return rules.predict(doc, h.last, cursor, others or [], list(h.edits)[:-1])


def line_of(doc: Document, p: Proposal) -> str:
    """The stripped line a proposal starts on."""
    return doc.line(p.start.line).strip()
