"""`PromptMemo`: a document's recent prompts, reused while nothing they depend on changed.

A prompt is a function of the document's text at the cursor, the other open documents,
the symbol index and the tier's prompt settings. The memo keys each prompt by exactly
those, with the text compared by content (length, hash, then equality), not by document
version: a buffer reopened as it was, or an edit undone, gets the prompt it had, so its
cache hit costs a dictionary lookup instead of a parse and a context build.

The symbol index changes whenever any file is indexed; a document's own entry never feeds
its own context (the cross-file step leaves its own path out), so a prompt stays valid
while every index change since it was built was a change to that document's own entry
(re-indexed when it is closed or edited). Kept for the last few states of each of the
most recent documents, also after a close, within `MEMO_BYTES` (an entry keeps the text it
was built from: an old version of a big file weighs what the file does).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from lsp_assist.documents.store import Document
from lsp_assist.structure.symbols import SymbolIndex

MEMO_DOCS = 32
STATES_PER_DOC = 4  # an undo or a reopen finds one of the last few states
MEMO_BYTES = 6 << 20  # texts (counted whole, also when the document still shares them) and values
_ENTRY_OVERHEAD = 400  # the entry and its inputs tuple

V = TypeVar("V")


@dataclass(frozen=True)
class _Entry(Generic[V]):
    text: str  # the document text the prompt was built from (compared by content)
    text_hash: int
    inputs: tuple[Hashable, ...]  # cursor, prompt settings, other documents, index identity
    generation: int  # the symbol index's generation when built
    own_changes: int  # how much of it the document's own entry had caused
    value: V
    nbytes: int  # the estimate of what the entry keeps alive


class PromptMemo(Generic[V]):
    def __init__(
        self,
        docs: int = MEMO_DOCS,
        states: int = STATES_PER_DOC,
        *,
        max_bytes: int = MEMO_BYTES,
        sizer: Callable[[V], int] = sys.getsizeof,
    ) -> None:
        self._docs: OrderedDict[str, list[_Entry[V]]] = OrderedDict()
        self._max_docs = docs
        self._states = states
        self.max_bytes = max_bytes
        self._sizer = sizer
        self.nbytes = 0

    def get(self, doc: Document, inputs: tuple[Hashable, ...], symbols: SymbolIndex) -> V | None:
        entries = self._docs.get(doc.uri)
        if not entries:
            return None
        text = doc.text
        n = len(text)
        for e in reversed(entries):
            if (
                len(e.text) == n
                and e.inputs == inputs
                and _index_unchanged(e, doc, symbols)
                and (e.text is text or (e.text_hash == hash(text) and e.text == text))
            ):
                self._docs.move_to_end(doc.uri)
                return e.value
        return None

    def put(self, doc: Document, inputs: tuple[Hashable, ...], symbols: SymbolIndex, value: V) -> None:
        text = doc.text
        size = sys.getsizeof(text) + self._sizer(value) + _ENTRY_OVERHEAD
        if size > self.max_bytes:
            return  # a prompt of a file larger than the whole memo: not kept
        entry = _Entry(
            text, hash(text), inputs, symbols.generation, symbols.changes_of(doc.display_path), value, size
        )
        old = self._docs.pop(doc.uri, [])
        entries = [e for e in old if not _same_state(e, entry)]
        entries.append(entry)
        kept = entries[-self._states :]
        self.nbytes += sum(e.nbytes for e in kept) - sum(e.nbytes for e in old)
        self._docs[doc.uri] = kept
        while len(self._docs) > self._max_docs:
            self._drop_doc(next(iter(self._docs)))
        # Over the bytes: the oldest states of the least recent documents go first.
        while self.nbytes > self.max_bytes:
            uri, states = next(iter(self._docs.items()))
            self.nbytes -= states.pop(0).nbytes
            if not states:
                del self._docs[uri]

    def _drop_doc(self, uri: str) -> None:
        self.nbytes -= sum(e.nbytes for e in self._docs.pop(uri, ()))

    def forget(self, uri: str) -> None:
        self._drop_doc(uri)

    def __len__(self) -> int:
        return sum(len(v) for v in self._docs.values())


def _index_unchanged(e: _Entry[V], doc: Document, symbols: SymbolIndex) -> bool:
    """Every index change since `e` was built was to the document's own entry."""
    return symbols.generation - e.generation == symbols.changes_of(doc.display_path) - e.own_changes


def _same_state(a: _Entry[V], b: _Entry[V]) -> bool:
    return a.inputs == b.inputs and a.text_hash == b.text_hash and a.text == b.text


def others_key(others: Sequence[Document]) -> tuple[tuple[str, int], ...]:
    return tuple((d.uri, d.version) for d in others)
