"""The cross-file step's memos per scope and per near names (`sources/other_files.py`) and
the related lines' windows per document version (`sources/related.py`): a request at a
fresh position of an unchanged document reuses what an earlier one in the same scope
gathered and ranked, and its prompt is what an uncached build gives there, bit for bit."""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import pytest

from lsp_assist.context.builder import ContextEngine
from lsp_assist.documents.store import Document, DocumentStore, TextChange
from lsp_assist.domain import Cursor, PromptContext

LIB = Path(json.__file__).resolve().parents[1]
FILES = ("json/decoder.py", "json/encoder.py", "json/scanner.py", "json/__init__.py", "textwrap.py")
BUDGET = 4000


def _open(store: DocumentStore) -> list[Document]:
    docs = []
    for i, name in enumerate(FILES):
        path = f"/ws/{name}"
        docs.append(store.open("file://" + path, "python", 1, (LIB / name).read_text(encoding="utf-8"), path))
        assert i == len(docs) - 1
    return docs


def _engine() -> tuple[DocumentStore, ContextEngine, list[Document]]:
    store = DocumentStore()
    engine = ContextEngine()
    store.on_change.append(engine.index_document)
    return store, engine, _open(store)


def _build(
    engine: ContextEngine, doc: Document, docs: list[Document], cursor: Cursor, budget: int = BUDGET
) -> PromptContext:
    others = [d for d in docs if d.uri != doc.uri]
    return engine.build(doc, cursor, budget, others=others, deadline_ms=60_000)


def _uncached(
    engine: ContextEngine, doc: Document, docs: list[Document], cursor: Cursor, budget: int = BUDGET
) -> PromptContext:
    engine.other_files.clear()  # every cross-file memo: gathered and ranked from scratch
    engine.assembler.sources.related.forget(doc.uri)  # the version's related windows too
    return _build(engine, doc, docs, cursor, budget)


def _positions(doc: Document, step: int) -> list[Cursor]:
    rows = [r for r in range(doc.line_count) if doc.line(r).strip()]
    return [Cursor(r, len(doc.line(r))) for r in rows[::step]]


def _prompt(ctx: PromptContext) -> tuple[object, ...]:
    return ctx.prefix, ctx.suffix, ctx.snippets


@pytest.mark.parametrize("budget", [1500, BUDGET])
def test_a_fresh_position_reuses_the_scope_and_sends_what_an_uncached_build_sends(budget: int) -> None:
    _store, engine, docs = _engine()
    # json/__init__.py uses the classes of json/decoder.py and json/encoder.py near its
    # rows (their members rank by the near names); textwrap.py imports nothing of these.
    todo = [(doc, c) for doc in (docs[0], docs[3], docs[4]) for c in _positions(doc, 2)]
    random.Random(3).shuffle(todo)
    cached = [_prompt(_build(engine, doc, docs, c, budget)) for doc, c in todo]
    memo = engine.other_files
    # Positions in the same function share the candidates; positions whose near rows differ
    # only in names no candidate outline has share the ranked text.
    assert memo.scope_hits > len(todo) // 4
    assert memo.outline_hits > len(todo) // 10
    assert len(memo.scopes) > 0 and memo.scopes.nbytes > 0 and memo.outlines.nbytes > 0
    assert engine.memory()["context.scopes"] == memo.scopes.nbytes
    # The near-weighable names are kept per candidate list, shared by the scopes.
    assert 0 < len(memo.scope_names) < len(memo.scopes) // 4
    assert engine.memory()["context.scope_names"] == memo.scope_names.nbytes > 0
    fresh = [_prompt(_uncached(engine, doc, docs, c, budget)) for doc, c in todo]
    differ = [(doc.display_path, c) for (doc, c), a, b in zip(todo, cached, fresh, strict=True) if a != b]
    assert not differ
    assert any(snippets for _p, _s, snippets in cached)  # the cross-file text is there to compare


def test_an_edit_in_the_scope_is_seen_at_the_next_request() -> None:
    """The memo is keyed by what the candidates and the ranking read: a function that starts
    using another module's name gets that module's entries at once, as uncached."""
    store = DocumentStore()
    engine = ContextEngine()
    store.on_change.append(engine.index_document)
    lib_text = textwrap.dedent(
        """\
        class Ledger:
            def post(self, entry, amount):
                return amount

            def balance_of(self, account):
                return 0


        def open_ledger(path, mode):
            return Ledger()
        """
    )
    user_text = (
        "import os\n\n\ndef run(items):\n    total = 0\n"
        "    for item in items:\n        total += 1\n    return total\n"
    )
    lib = store.open("file:///p/books.py", "python", 1, lib_text, "/p/books.py")
    user = store.open("file:///p/user.py", "python", 1, user_text, "/p/user.py")
    at = Cursor(6, len(user.line(6)))
    before = _build(engine, user, [user, lib], at)
    assert engine.other_files.scopes.nbytes > 0  # what the edit must not be answered from
    use = "    book = open_ledger(items, 'r')\n"  # a name of the other file, used from now on
    store.change(user.uri, 2, [TextChange(Cursor(5, 0), Cursor(5, 0), use)])
    user = store.get(user.uri) or user
    at = Cursor(7, len(user.line(7)))
    after = _build(engine, user, [user, lib], at)
    assert _prompt(after) == _prompt(_uncached(engine, user, [user, lib], at))
    assert "open_ledger(path, mode)" in "".join(s.text for s in after.snippets)
    assert after.snippets != before.snippets
