"""Open documents: text, version, language and an incrementally updated syntax tree.

`DocumentStore` applies `didOpen`/`didChange`/`didClose` in code-point positions (the
protocol layer converts client units with `positions`). A change is applied by splicing
the text and patching the line-start table in place, so a one-character edit on a
10,000-line document does not re-split the document; the tree-sitter tree receives the
matching `Tree.edit` and re-parses lazily on the next request. Positions past the end
clamp, they never raise.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from tree_sitter import Tree

from lsp_assist.documents.syntax import SyntaxState
from lsp_assist.domain import Cursor, DocumentSnapshot
from lsp_assist.languages import get_language

_log = logging.getLogger(__name__)

#: Documents larger than this (in characters) get no syntax tree: line-based context only.
DEFAULT_MAX_SYNTAX_CHARS = 1_000_000

_NEWLINE = re.compile("\n")
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f]")


@dataclass(frozen=True)
class TextChange:
    """One LSP content change in code points; start/end None means a full replacement."""

    start: Cursor | None
    end: Cursor | None
    text: str


#: Changes that are one typed opening bracket or quote with the editor's closing one.
_AUTO_CLOSED = frozenset({"()", "[]", "{}", '""', "''", "``"})


def looks_binary(text: str) -> bool:
    """True for text that is probably not source code (NUL bytes or many control characters)."""
    head = text[:8192]
    if "\x00" in head:
        return True
    return len(head) > 0 and len(_CONTROL.findall(head)) > len(head) // 20


def _encode(text: str) -> bytes:
    # surrogatepass keeps lone surrogates (sent by some UTF-16 clients) at 3 bytes each,
    # the same count the byte offsets in `Tree.edit` assume.
    return text.encode("utf-8", "surrogatepass")


def _blen(text: str) -> int:
    return len(text) if text.isascii() else len(_encode(text))


def path_from_uri(uri: str) -> str | None:
    """The filesystem path of a file: URI, else None."""
    if not uri.startswith("file:"):
        return None
    return unquote(urlparse(uri).path) or None


class Document:
    """One open document. Mutated only by `DocumentStore`; read through its methods."""

    def __init__(
        self,
        uri: str,
        language_id: str,
        version: int,
        text: str,
        path: str | None = None,
        *,
        max_syntax_chars: int = DEFAULT_MAX_SYNTAX_CHARS,
    ) -> None:
        self.uri = uri
        self.language_id = language_id
        self.version = version
        self.path = path if path is not None else path_from_uri(uri)
        self._text = text
        self._starts: list[int] | None = None
        self._lengths: list[int] | None = None
        self._bytes: bytes | None = None
        self._max_syntax_chars = max_syntax_chars
        self.syntax: SyntaxState | None = None
        # didChange notifications applied: the changes of one notification share a value,
        # which lets edit observers treat them as one edit (VS Code sends a rename as
        # several minimal ranges in one notification).
        self.change_batch = 0
        self._setup_syntax()
        #: Where the cursor of the user who typed the last applied change most likely is:
        #: the end of its text, or inside a bracket pair the editor closed (`()` typed as
        #: one change); None after a full replacement. The prompt prebuilder builds there.
        self.edit_end: Cursor | None = None
        # The rows the last didChange replaced, change by change (each: its first row, its
        # last row before and the rows of its new text less one; None: the whole text), and
        # the text it started from (while the `on_change` hooks run): per-version tables of
        # rows (`Lexicon`, the related lines' windows) follow the edit instead of being read
        # again.
        self.batch_before: str | None = None
        self.row_edits: list[tuple[int, int, int] | None] = []

    # -- reading -------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        return self._text

    @property
    def display_path(self) -> str:
        return self.path or self.uri

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0, *(m.end() for m in _NEWLINE.finditer(self._text))]
        return self._starts

    @property
    def line_count(self) -> int:
        return len(self._line_starts())

    def line_start(self, line: int) -> int:
        """Code-point offset of the start of `line` (clamped)."""
        starts = self._line_starts()
        if line < 0:
            return 0
        if line >= len(starts):
            return len(self._text)
        return starts[line]

    def line(self, line: int) -> str:
        """The text of `line` without its line ending; "" past the end."""
        starts = self._line_starts()
        if line < 0 or line >= len(starts):
            return ""
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self._text)
        s = self._text[starts[line] : end]
        return s[:-1] if s.endswith("\r") else s

    def line_length(self, line: int) -> int:
        """The length of `line()` (without its line ending), from the line-start table: no
        copy of the row, which matters on a minified line of megabytes; 0 past the end."""
        starts = self._line_starts()
        if line < 0 or line >= len(starts):
            return 0
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self._text)
        if end > starts[line] and self._text[end - 1] == "\r":
            end -= 1
        return end - starts[line]

    def row_lengths(self) -> list[int]:
        """`line_length` of every row, worked out once per text (the context build's row
        costs, at every position of a version)."""
        if self._lengths is None:
            starts, text = self._line_starts(), self._text
            lengths = [b - a - 1 for a, b in itertools.pairwise(starts)]
            lengths.append(len(text) - starts[-1])
            if "\r" in text:
                for row, a in enumerate(starts):
                    end = a + lengths[row]
                    if end > a and text[end - 1] == "\r":
                        lengths[row] -= 1
            self._lengths = lengths
        return self._lengths

    def lines(self, start: int, stop: int) -> list[str]:
        """The texts of rows `start`..`stop` (exclusive, clamped), without line endings.

        One slice and split of the document instead of a `line()` call per row.
        """
        starts = self._line_starts()
        n = len(starts)
        start, stop = max(0, start), min(stop, n)
        if start >= stop:
            return []
        end = starts[stop] - 1 if stop < n else len(self._text)
        out = self._text[starts[start] : end].split("\n")
        if "\r" in self._text[starts[start] : end]:
            out = [x[:-1] if x.endswith("\r") else x for x in out]
        return out

    def clamp(self, cursor: Cursor) -> Cursor:
        """The nearest valid position: past-the-end lines and columns move to the end."""
        n = self.line_count
        if cursor.line < 0:
            return Cursor(0, 0)
        if cursor.line >= n:
            last = n - 1
            return Cursor(last, self.line_length(last))
        return Cursor(cursor.line, max(0, min(cursor.character, self.line_length(cursor.line))))

    def offset(self, cursor: Cursor) -> int:
        """Code-point offset of a (clamped) position."""
        c = self.clamp(cursor)
        return self.line_start(c.line) + c.character

    def data(self) -> bytes:
        """The UTF-8 text (cached until the next change), as tree-sitter wants it."""
        if self._bytes is None:
            self._bytes = _encode(self._text)
        return self._bytes

    def tree(self) -> Tree | None:
        """The up-to-date syntax tree, or None (no grammar, too large, binary, parse failure)."""
        if self.syntax is None:
            return None
        return self.syntax.tree(self.data)

    def snapshot(self) -> DocumentSnapshot:
        return DocumentSnapshot(self.uri, self.language_id, self.version, self._text, self.path)

    # -- writing (through DocumentStore) -------------------------------------------------------

    def _setup_syntax(self) -> None:
        if len(self._text) > self._max_syntax_chars or looks_binary(self._text):
            self.syntax = None
            return
        lang = get_language(self.language_id)
        self.syntax = SyntaxState(lang) if lang is not None else None

    def _replace_all(self, text: str) -> None:
        self._text = text
        self._starts = None
        self._lengths = None
        self._bytes = None
        self._setup_syntax()

    def row_edits_since(self, text: str) -> list[tuple[int, int, int]] | None:
        """The rows each change of the last didChange replaced, when `text` (an object) is
        the text it started from and none replaced the whole text; else None."""
        if text is not self.batch_before or None in self.row_edits:
            return None
        return self.row_edits  # type: ignore[return-value]  # None is not in it

    def _apply(self, change: TextChange) -> None:
        if change.start is None or change.end is None:
            self._replace_all(change.text)
            self.edit_end = None
            self.row_edits.append(None)
            return
        a, b = self.clamp(change.start), self.clamp(change.end)
        if (b.line, b.character) < (a.line, a.character):
            a, b = b, a
        self.row_edits.append((a.line, b.line, change.text.count("\n")))
        starts = self._line_starts()
        s = starts[a.line] + a.character
        e = starts[b.line] + b.character
        text = self._text
        ins = change.text
        syntax = self.syntax
        if syntax is not None:
            start_byte = s if text.isascii() else len(_encode(text[:s]))
            start_col = a.character if text.isascii() else _blen(self.line(a.line)[: a.character])
            old_end_byte = start_byte + _blen(text[s:e])
            end_col = b.character if text.isascii() else _blen(self.line(b.line)[: b.character])
            new_end_byte = start_byte + _blen(ins)
            nl = ins.rfind("\n")
            if nl < 0:
                new_end_point = (a.line, start_col + _blen(ins))
            else:
                new_end_point = (a.line + ins.count("\n"), _blen(ins[nl + 1 :]))
        self._text = text[:s] + ins + text[e:]
        self._bytes = None
        self._lengths = None
        last_nl = ins.rfind("\n")
        if ins in _AUTO_CLOSED:  # the editor closed the bracket or quote the user typed
            self.edit_end = Cursor(a.line, a.character + 1)
        elif last_nl < 0:
            self.edit_end = Cursor(a.line, a.character + len(ins))
        else:
            self.edit_end = Cursor(a.line + ins.count("\n"), len(ins) - last_nl - 1)
        # Patch the line-start table: replace the starts of the lines inside the old range,
        # then shift the following ones by the length difference.
        new_starts = [s + m.end() for m in _NEWLINE.finditer(ins)]
        starts[a.line + 1 : b.line + 1] = new_starts
        delta = len(ins) - (e - s)
        first = a.line + 1 + len(new_starts)
        if delta and first < len(starts):
            starts[first:] = [x + delta for x in starts[first:]]
        if syntax is not None:
            if len(self._text) > self._max_syntax_chars:
                self.syntax = None
            else:
                syntax.edit(
                    start_byte,
                    old_end_byte,
                    new_end_byte,
                    (a.line, start_col),
                    (b.line, end_col),
                    new_end_point,
                )


Hook = Callable[[Document], None]
#: (document after the change, where the change starts, its code-point offset, the text it
#: removed, the text it inserted): one call per applied range (a full replacement comes as
#: its changed middle, found by common prefix and suffix).
EditHook = Callable[[Document, Cursor, int, str, str], None]


def _changed_middle(old: str, new: str) -> tuple[int, str, str]:
    """(offset, removed, inserted): `new` is `old` with old[offset:offset+len(removed)]
    replaced by `inserted` (full-text sync clients send whole documents)."""
    n = min(len(old), len(new))
    a = 0
    while a < n and old[a] == new[a]:
        a += 1
    b = 0
    while b < n - a and old[len(old) - 1 - b] == new[len(new) - 1 - b]:
        b += 1
    return a, old[a : len(old) - b], new[a : len(new) - b]


class DocumentStore:
    """All open documents by URI, plus hooks that see every open and change."""

    def __init__(self, *, max_syntax_chars: int = DEFAULT_MAX_SYNTAX_CHARS) -> None:
        self._docs: dict[str, Document] = {}
        self.max_syntax_chars = max_syntax_chars
        #: Called after each open and change (the workspace symbol index subscribes here).
        self.on_change: list[Hook] = []
        #: Called with the document just before it is forgotten.
        self.on_close: list[Hook] = []
        #: Called after each didOpen (before `on_change`): a new editing session.
        self.on_open: list[Hook] = []
        #: Called after each applied change with what it replaced (the next-edit history).
        self.on_edit: list[EditHook] = []

    def _notify(self, hooks: list[Hook], doc: Document) -> None:
        for hook in list(hooks):
            try:
                hook(doc)
            except Exception:  # one broken subscriber must not break editing
                _log.exception("document hook failed")

    def open(self, uri: str, language_id: str, version: int, text: str, path: str | None = None) -> Document:
        doc = Document(uri, language_id, version, text, path, max_syntax_chars=self.max_syntax_chars)
        self._docs[uri] = doc
        self._notify(self.on_open, doc)
        self._notify(self.on_change, doc)
        return doc

    def is_stale(self, uri: str, version: int) -> bool:
        """True when a didChange for `version` must not be applied: the document is already
        at that version or a later one.

        LSP versions only increase (by any step: Neovim's changedtick jumps), and a
        re-opened document comes as didOpen, which resets the version. So a change for a
        version we already passed arrived late or twice. An incremental one would splice
        ranges computed against a text we no longer have; a full-text one would roll the
        text back to one the client has already moved on from, and the client's next
        incremental edit would land on the wrong text. Both are dropped.
        """
        doc = self._docs.get(uri)
        return doc is not None and version <= doc.version

    def change(self, uri: str, version: int, changes: Sequence[TextChange]) -> Document | None:
        """Apply changes in order (LSP semantics); None if the document is not open or
        `version` is older than the document's (dropped with a log line, see `is_stale`).

        The same version is accepted again: one didChange with several content changes is
        applied one call per change, each converted against the text the previous left.
        """
        doc = self._docs.get(uri)
        if doc is None:
            return None
        if version < doc.version:
            _log.warning("stale change for version %d after %d dropped", version, doc.version)
            return None
        doc.change_batch += 1
        doc.batch_before, doc.row_edits = doc.text, []
        for change in changes:
            if self.on_edit:
                self._apply_observed(doc, change)
            else:
                doc._apply(change)
        doc.version = version
        self._notify(self.on_change, doc)
        doc.batch_before = None  # read by the hooks only: the old text is not kept alive
        return doc

    def _apply_observed(self, doc: Document, change: TextChange) -> None:
        """Apply `change` and tell the edit hooks what it replaced (the removed text is read
        from the range before the splice: no whole-document diff for a ranged change)."""
        before = doc.text
        if change.start is None or change.end is None:
            doc._apply(change)
            offset, removed, inserted = _changed_middle(before, doc.text)
            start = Cursor(before.count("\n", 0, offset), offset - (before.rfind("\n", 0, offset) + 1))
        else:
            a, b = doc.clamp(change.start), doc.clamp(change.end)
            if (b.line, b.character) < (a.line, a.character):
                a, b = b, a
            offset, end = doc.offset(a), doc.offset(b)
            removed, inserted, start = before[offset:end], change.text, a
            doc._apply(change)
        if removed == inserted:
            return
        for hook in list(self.on_edit):
            try:
                hook(doc, start, offset, removed, inserted)
            except Exception:  # one broken subscriber must not break editing
                _log.exception("document edit hook failed")

    def close(self, uri: str) -> None:
        doc = self._docs.pop(uri, None)
        if doc is not None:
            self._notify(self.on_close, doc)

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def snapshot(self, uri: str) -> DocumentSnapshot | None:
        doc = self._docs.get(uri)
        return doc.snapshot() if doc is not None else None

    def line_text(self, uri: str, line: int) -> str:
        """The text of one line without its ending ("" if unknown), for client unit conversion."""
        doc = self._docs.get(uri)
        return doc.line(line) if doc is not None else ""

    def documents(self) -> Iterator[Document]:
        return iter(list(self._docs.values()))

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, uri: object) -> bool:
        return uri in self._docs
