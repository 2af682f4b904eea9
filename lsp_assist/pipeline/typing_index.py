"""Typing-through and backspace recovery without a model call.

Each answered suggestion is remembered with the text around the cursor it was computed
for (a tail of the text before the cursor, the length of that text, and a head of the
text after it). A later request in the same document matches an entry when its text
before the cursor extends the entry's by characters that are a prefix of the suggestion
(the user typed what was shown) and the text after is unchanged: the answer is the rest
of the suggestion. Backspacing to an earlier state matches that state's own entry.

Comparing bounded windows instead of whole documents keeps a lookup O(window), not O(file).
At most `_PER_DOC` entries per document, and `TYPING_BYTES` over all documents (the oldest
entries anywhere go first): each entry copies up to 5 KB of the text around its cursor.

The data boundary (`governance/epoch.py`): every entry belongs to the policy epoch its
suggestion's input was read under; a lookup is made under the current one and finds only
entries of that epoch. The first call under a newer epoch drops every older entry, and a
late `remember` from an older epoch (a stream that ended after the change) is refused.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

_TAIL = 4096  # chars of text before the cursor kept per entry
_HEAD = 1024  # chars of text after the cursor kept per entry
_PER_DOC = 64
TYPING_BYTES = 2 << 20  # ~350 suggestions with their windows of text


@dataclass(frozen=True)
class _Entry:
    before_len: int
    before_tail: str
    after_head: str
    suggestion: str
    tier: str


@dataclass(frozen=True)
class TypingHit:
    text: str  # what is still to insert at the cursor
    typed: int  # how many characters of the suggestion the user already typed
    tier: str


class TypingIndex:
    def __init__(self, max_bytes: int = TYPING_BYTES) -> None:
        self._docs: dict[str, OrderedDict[tuple[int, str], _Entry]] = {}
        # Every entry, oldest first, with its estimated bytes.
        self._order: OrderedDict[tuple[str, tuple[int, str]], int] = OrderedDict()
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._epoch = 0  # the newest policy epoch seen: every entry belongs to it

    def _admits(self, epoch: int) -> bool:
        """Whether an entry of `epoch` may be stored or found; entries of an older epoch than
        `epoch` are dropped first (the policy changed since they were stored)."""
        if epoch > self._epoch:
            self.clear()
            self._epoch = epoch
        return epoch == self._epoch

    def remember(
        self, uri: str, text: str, offset: int, suggestion: str, tier: str, *, epoch: int = 0
    ) -> None:
        if not suggestion or not self._admits(epoch):
            return
        tail = text[max(0, offset - _TAIL) : offset]
        key = (offset, tail[-64:])
        entry = _Entry(offset, tail, text[offset : offset + _HEAD], suggestion, tier)
        size = _entry_bytes(key, entry)
        if size > self.max_bytes:
            return
        self._drop(uri, key)
        entries = self._docs.setdefault(uri, OrderedDict())
        entries[key] = entry
        self._order[(uri, key)] = size
        self.nbytes += size
        while len(entries) > _PER_DOC:
            self._drop(uri, next(iter(entries)))
        while self.nbytes > self.max_bytes:
            self._drop(*next(iter(self._order)))

    def _drop(self, uri: str, key: tuple[int, str]) -> None:
        size = self._order.pop((uri, key), None)
        if size is None:
            return
        self.nbytes -= size
        entries = self._docs[uri]
        del entries[key]
        if not entries:
            del self._docs[uri]

    def lookup(self, uri: str, text: str, offset: int, *, epoch: int = 0) -> TypingHit | None:
        if not self._admits(epoch):
            return None
        best: TypingHit | None = None
        for _, hit in self._found(uri, text, offset):
            # Prefer the longest remaining suggestion (an enrichment beats the quick answer).
            if best is None or len(hit.text) > len(best.text):
                best = hit
        return best

    def _found(self, uri: str, text: str, offset: int) -> Iterator[tuple[tuple[int, str], TypingHit]]:
        """The entries a request at `offset` of `text` matches, newest first, as hits."""
        after = text[offset : offset + _HEAD]
        for key, entry in reversed(self._docs.get(uri, {}).items()):
            typed = offset - entry.before_len
            if typed < 0 or typed >= len(entry.suggestion):
                continue
            if after != entry.after_head:
                continue
            typed_text = text[entry.before_len : offset]
            if not entry.suggestion.startswith(typed_text):
                continue
            start = max(0, entry.before_len - len(entry.before_tail))
            if text[start : entry.before_len] != entry.before_tail:
                continue
            yield key, TypingHit(entry.suggestion[typed:], typed, entry.tier)

    def forget_found(self, uri: str, text: str, offset: int, *, epoch: int = 0) -> None:
        """Forget every suggestion a request at `offset` of `text` finds: one that replaces
        them comes next (a rewrite of the line on screen). `lookup` prefers the longest, and
        kept a longer line the user typed into from an earlier position over its rewrite."""
        if not self._admits(epoch):
            return
        for key, _ in list(self._found(uri, text, offset)):
            self._drop(uri, key)

    def forget(self, uri: str) -> None:
        for key in list(self._docs.get(uri, ())):
            self._drop(uri, key)

    def clear(self) -> None:
        self._docs.clear()
        self._order.clear()
        self.nbytes = 0


def _entry_bytes(key: tuple[int, str], e: _Entry) -> int:
    # The entry, its key (a tuple, an int, a string) and the order's node, plus its strings.
    texts = (key[1], e.before_tail, e.after_head, e.suggestion)
    return sum(map(sys.getsizeof, texts)) + 300
