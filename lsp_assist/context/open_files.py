"""The open documents as the context engine knows them: their symbols in the index, their
syntax trees' symbol caches, which were edited recently, and the data boundary they pass.

These are the didOpen/didChange/didClose hooks' side of the engine (`ContextEngine`
delegates to it); the sources read from here, never write.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from enum import Enum

from lsp_assist.documents.store import Document
from lsp_assist.languages import canonical, index_language
from lsp_assist.structure.imports import HEAD_ROWS, index_imports
from lsp_assist.structure.outline import outline_of
from lsp_assist.structure.symbols import SymbolIndex, TreeSymbolCache, admit_all, extract_symbols, parse_text

MAX_TREES = 128  # documents whose symbol caches are kept
MAX_RECENT = 16  # paths remembered as edited recently


class Seen(Enum):
    """What `OpenFiles.note` made of a document's hook call."""

    REFUSED = "refused"  # behind the data boundary: nothing of it is recorded
    OPENED = "opened"  # the first time (didOpen, or after the index was swapped)
    EDITED = "edited"  # a new version
    SAME = "same"  # a re-index of the same version


class OpenFiles:
    """The symbol index, the open documents' tree caches and recent edits, behind the boundary."""

    def __init__(self, symbols: SymbolIndex | None = None) -> None:
        self._admits: Callable[[str], bool] = admit_all
        self._symbols = symbols if symbols is not None else SymbolIndex()
        self._trees: OrderedDict[str, TreeSymbolCache] = OrderedDict()
        self._stale: dict[str, Document] = {}  # changed since their symbols were indexed
        self._recent: OrderedDict[str, None] = OrderedDict()  # paths edited, latest last
        self._versions_seen: dict[str, int] = {}

    @property
    def symbols(self) -> SymbolIndex:
        return self._symbols

    @symbols.setter
    def symbols(self, index: SymbolIndex) -> None:
        """Install another index (the workspace index swaps in a rebuilt one): it keeps the
        boundary, and drops what the boundary refuses if it was filled without it."""
        if index.admits is not self._admits:
            index.admits = self._admits
            index.purge()
        self._symbols = index

    @property
    def admits(self) -> Callable[[str], bool]:
        return self._admits

    def set_boundary(self, admits: Callable[[str], bool]) -> bool:
        """Install the data boundary; whether the index dropped files it now refuses."""
        self._admits = admits
        self._symbols.admits = admits
        return bool(self._symbols.purge())

    def tree_symbols(self, doc: Document) -> TreeSymbolCache:
        cache = self._trees.get(doc.uri)
        if cache is None:
            cache = TreeSymbolCache(doc.language_id, doc.display_path)
            self._trees[doc.uri] = cache
            if len(self._trees) > MAX_TREES:
                self._trees.popitem(last=False)
        else:
            self._trees.move_to_end(doc.uri)
        cache.track(doc.syntax)
        return cache

    def recent(self, exclude: str, n: int) -> list[str]:
        """The `n` paths edited most recently, latest first, without `exclude`."""
        return [p for p in reversed(self._recent) if p != exclude][:n]

    def note(self, doc: Document) -> Seen:
        """Record a hook call for `doc` (a refused document is forgotten instead)."""
        if not self._admits(doc.display_path):
            self._versions_seen.pop(doc.uri, None)
            self._stale.pop(doc.uri, None)
            self._recent.pop(doc.display_path, None)
            self._symbols.remove_file(doc.display_path)
            return Seen.REFUSED
        seen = self._versions_seen.get(doc.uri)
        self._versions_seen[doc.uri] = doc.version
        if seen is None:
            return Seen.OPENED
        if seen == doc.version:
            return Seen.SAME
        self._recent[doc.display_path] = None  # an edit, not the open or a re-index
        self._recent.move_to_end(doc.display_path)
        if len(self._recent) > MAX_RECENT:
            self._recent.popitem(last=False)
        return Seen.EDITED

    def sync(self, doc: Document) -> None:
        """Index `doc` now the first time (or after the index was swapped, or held the file's
        disk version); after that only note it stale (re-read when another document's request
        looks definitions up, or when it closes)."""
        current = self.symbols.version(doc.display_path)
        if isinstance(current, tuple) and current[:1] == (doc.uri,):
            self._stale[doc.uri] = doc
        else:
            self.refresh_document(doc)

    def refresh_document(self, doc: Document) -> None:
        """Bring the symbol index up to date with one open document now."""
        self._stale.pop(doc.uri, None)
        if not self._admits(doc.display_path):
            return
        key = (doc.uri, doc.version)
        if self.symbols.version(doc.display_path) == key:
            return
        tree = doc.tree()
        if tree is None:
            self.symbols.set_symbols(
                doc.display_path, (), key, outline_of(None, b"", doc.language_id, doc.display_path, key)
            )
            return
        head = doc.lines(0, min(doc.line_count, HEAD_ROWS))
        lang = index_language(doc.language_id, doc.display_path)
        if lang != (canonical(doc.language_id) or doc.language_id):
            # Read as the index reads it (a C header as C++): one full parse per version
            # another file's request needs, not the document's own tree.
            parsed = parse_text(doc.text, lang)
            if parsed is not None:
                other, source = parsed
                self.symbols.set_symbols(
                    doc.display_path,
                    extract_symbols(other, source, lang, doc.display_path),
                    key,
                    outline_of(other, source, lang, doc.display_path, key),
                    imports=index_imports(head, lang),
                )
                return
        data = doc.data()
        self.symbols.set_symbols(
            doc.display_path,
            self.tree_symbols(doc).find(tree, data),
            key,
            outline_of(tree, data, doc.language_id, doc.display_path, key),
            imports=index_imports(head, doc.language_id),
        )

    def forget(self, doc: Document) -> None:
        """Drop the per-document caches (didClose); the index keeps the file as last seen."""
        self._trees.pop(doc.uri, None)
        self._versions_seen.pop(doc.uri, None)
        stale = self._stale.pop(doc.uri, None)
        if stale is not None:
            self.refresh_document(stale)
