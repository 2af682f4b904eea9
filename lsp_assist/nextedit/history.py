"""The edit history next-edit predictors read: per open document, what the user changed.

Fed by `DocumentStore.on_edit` (one call per applied didChange range, with the text the
range removed), so the keystroke path costs a few string slices and never diffs a whole
document. Per document it keeps the text at the start of the editing session (didOpen),
and a rolling list of edits (`MAX_EDITS`), where a change that touches the span the last
edit produced is merged into it: typing `total` over `count` one key at a time is one edit
`count` -> `total`, the form a predictor wants. Across documents it keeps the recently
viewed files (most recent first). Everything is bounded in bytes; documents the data
boundary excludes are never recorded; a document's history goes when it closes.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor

#: Edits kept per document (Copilot's NES prompt carries 25 diff entries).
MAX_EDITS = 25
#: Bytes of edit text kept per document (old + new of every entry); the oldest go first.
MAX_EDIT_BYTES = 64 * 1024
#: A coalesced edit larger than this starts a new entry instead (a paste, a reformat).
MAX_COALESCED_CHARS = 4096
#: The session's starting text is kept for documents up to this size only.
MAX_START_CHARS = 512 * 1024
#: Recently viewed files remembered.
MAX_VIEWED = 10
#: All histories together: past it, the least recently viewed documents lose their
#: starting text, then their edits (checked at each open and every `_CHECK_EVERY` edits).
HISTORY_BYTES = 8 * 1024 * 1024
_CHECK_EVERY = 64


@dataclass(frozen=True)
class Edit:
    """One (coalesced) edit: at code-point `offset` of the text before it, `old` became
    `new`. `line` is the row of `offset`; `before`/`after` are the rest of the first and
    last affected lines around it (the context a unified diff shows)."""

    offset: int
    old: str
    new: str
    line: int
    before: str = ""
    after: str = ""
    version: int = 0
    #: The document's `change_batch` when recorded: changes of one didChange merge.
    batch: int = -1

    @property
    def end(self) -> int:
        """Where the edit's new text ends in the text after it."""
        return self.offset + len(self.new)

    @property
    def nbytes(self) -> int:
        return len(self.old) + len(self.new) + len(self.before) + len(self.after) + 64

    def unified(self, path: str) -> str:
        """The edit as a small unified diff (whole lines, no extra context)."""
        old_lines = (self.before + self.old + self.after).split("\n")
        new_lines = (self.before + self.new + self.after).split("\n")
        row = self.line + 1
        head = f"--- a/{path}\n+++ b/{path}\n@@ -{row},{len(old_lines)} +{row},{len(new_lines)} @@\n"
        return head + "".join(f"-{x}\n" for x in old_lines) + "".join(f"+{x}\n" for x in new_lines)


def _line_context(doc: Document, line: int, offset: int, end: int) -> tuple[str, str]:
    """The text of the first affected line (`line`) before `offset`, and of the last
    after `end` (cut at 200 characters: a minified line must not fill the history)."""
    text = doc.text
    before = text[max(doc.line_start(line), offset - 200) : offset]
    # Looked for within 200 characters only: on a minified line of megabytes a search to
    # the line's end would cost a scan per keystroke.
    stop = text.find("\n", end, end + 200)
    after = text[end : min(len(text), end + 200) if stop < 0 else stop]
    return before, after


def merge(
    last: Edit, text: str, offset: int, removed: str, inserted: str, *, disjoint: bool = False
) -> Edit | None:
    """`last` with the change (`offset`, `removed` -> `inserted`, `text` being the document
    after it) folded in, when the change touches the span `last` produced (or anywhere,
    when `disjoint`: the changes of one didChange are one edit); else None.

    The merged edit covers the union of both spans and the unchanged text between them:
    its old text is what stood there before `last`, its new text what stands there now."""
    if not disjoint and (offset > last.end or offset + len(removed) < last.offset):
        return None
    a = min(offset, last.offset)
    b1 = max(offset + len(removed), last.end)  # end of the union, before the change
    delta = len(inserted) - len(removed)
    # The union's text before the change: unchanged parts come from `text`.
    region1 = text[a:offset] + removed + text[offset + len(inserted) : b1 + delta]
    old = region1[: last.offset - a] + last.old + region1[last.offset - a + len(last.new) :]
    new = text[a : b1 + delta]
    if len(old) + len(new) > MAX_COALESCED_CHARS:
        return None
    return replace(last, offset=a, old=old, new=new)


class DocumentHistory:
    """One document's session: its starting text and its edits, oldest first."""

    def __init__(self, uri: str, path: str | None, start_text: str | None) -> None:
        self.uri = uri
        self.path = path
        self.start_text = start_text
        self.edits: deque[Edit] = deque(maxlen=MAX_EDITS)
        self.edit_bytes = 0

    @property
    def last(self) -> Edit | None:
        return self.edits[-1] if self.edits else None

    @property
    def nbytes(self) -> int:
        return self.edit_bytes + len(self.start_text or "") + 200

    def record(self, doc: Document, start: Cursor, offset: int, removed: str, inserted: str) -> None:
        last = self.last
        merged = None
        if last is not None:
            same_batch = last.batch == doc.change_batch
            merged = merge(last, doc.text, offset, removed, inserted, disjoint=same_batch)
        if merged is not None and last is not None:
            self._pop()
            if merged.old == merged.new:
                return  # typed back to what it was: nothing happened there
            # The union starts at the change when the change starts first, else at `last`.
            line = start.line if offset < last.offset else last.line
            before, after = _line_context(doc, line, merged.offset, merged.end)
            batch = doc.change_batch
            self._push(
                replace(merged, line=line, before=before, after=after, version=doc.version, batch=batch)
            )
            return
        before, after = _line_context(doc, start.line, offset, offset + len(inserted))
        edit = Edit(offset, removed, inserted, start.line, before, after, doc.version, doc.change_batch)
        self._push(edit)

    def _push(self, edit: Edit) -> None:
        if len(self.edits) == self.edits.maxlen:
            self.edit_bytes -= self.edits[0].nbytes
        self.edits.append(edit)
        self.edit_bytes += edit.nbytes
        while self.edit_bytes > MAX_EDIT_BYTES and len(self.edits) > 1:
            self.edit_bytes -= self.edits.popleft().nbytes

    def _pop(self) -> None:
        self.edit_bytes -= self.edits.pop().nbytes


class EditHistory:
    """Every recorded document's history, and the recently viewed files.

    `excluded(path)` is the data boundary's verdict: an excluded document is never
    recorded (its edits are not even looked at)."""

    def __init__(self, excluded: Callable[[str | None], bool] = lambda path: False) -> None:
        self.excluded = excluded
        self._docs: dict[str, DocumentHistory] = {}
        self._viewed: OrderedDict[str, None] = OrderedDict()
        self._since_check = 0

    def open(self, doc: Document) -> None:
        """A didOpen: a new session starts (a re-open forgets the old one)."""
        self._docs.pop(doc.uri, None)
        self._viewed.pop(doc.uri, None)
        if self.excluded(doc.path):
            return
        start = doc.text if len(doc.text) <= MAX_START_CHARS else None
        self._docs[doc.uri] = DocumentHistory(doc.uri, doc.path, start)
        self._view(doc.uri)
        self._bound()

    def on_edit(self, doc: Document, start: Cursor, offset: int, removed: str, inserted: str) -> None:
        """A change applied by the store (its `on_edit` hook)."""
        history = self._docs.get(doc.uri)
        if history is None:
            return  # excluded, or opened before this history existed
        history.record(doc, start, offset, removed, inserted)
        self._view(doc.uri)
        self._since_check += 1
        if self._since_check >= _CHECK_EVERY:
            self._bound()

    def _bound(self) -> None:
        """Keep all histories under `HISTORY_BYTES`, taking from the least recently viewed."""
        self._since_check = 0
        total = self.nbytes
        if total <= HISTORY_BYTES:
            return
        order = [u for u in self._viewed if u in self._docs]
        order += [u for u in self._docs if u not in self._viewed]
        for uri in order:  # oldest first: their starting texts
            h = self._docs[uri]
            if h.start_text is not None and total > HISTORY_BYTES:
                total -= len(h.start_text)
                h.start_text = None
        for uri in order:  # then their edits
            h = self._docs[uri]
            while h.edits and total > HISTORY_BYTES:
                total -= h.edits[0].nbytes
                h.edit_bytes -= h.edits.popleft().nbytes

    def close(self, uri: str) -> None:
        self._docs.pop(uri, None)
        self._viewed.pop(uri, None)

    def refilter(self) -> None:
        """Drop what the boundary excludes now (after a configuration change)."""
        for uri, history in list(self._docs.items()):
            if self.excluded(history.path):
                self.close(uri)

    def get(self, uri: str) -> DocumentHistory | None:
        return self._docs.get(uri)

    def viewed(self) -> Iterator[str]:
        """Recorded documents, most recently viewed or edited first."""
        return reversed(list(self._viewed))

    @property
    def nbytes(self) -> int:
        return sum(h.nbytes for h in self._docs.values()) + 100 * len(self._viewed)

    def _view(self, uri: str) -> None:
        self._viewed.pop(uri, None)
        self._viewed[uri] = None
        while len(self._viewed) > MAX_VIEWED:
            self._viewed.popitem(last=False)
