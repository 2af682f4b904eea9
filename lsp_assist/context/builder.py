"""`ContextEngine`: the smallest prompt that holds what a completion needs.

The engine is a facade over three parts (docs/context.md, "How the engine is built"):

- the **sources** (`context/sources/`), one per kind of context: the local window, the
  imports, the in-file outline, the related lines, the file's names line, other files'
  outlines (with the package prior and the editor's definitions);
- the **assembler** (`context/assembler.py`), which spends one build's character budget
  on what they offer, in order of value, each within its share;
- the **gateway** (`context/gateway.py`), which every part passes before it is placed.

Here: the document hooks (didOpen/didChange/didClose keep the symbol index and the names
each file spells up to date, off the request), the data boundary's installation, and the
two entry points, `prepare` (during the debounce) and `build`. Synchronous and fast: it
runs on the request path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, TypedDict

from lsp_assist.context.assembler import Assembler, BuildRequest, Sources
from lsp_assist.context.cross_ranking import Gathered
from lsp_assist.context.crossfile import CrossFileRanker
from lsp_assist.context.editor_definitions import EditorDefinitionStore, EditorFiles
from lsp_assist.context.gateway import Gateway
from lsp_assist.context.layout import StableLayout
from lsp_assist.context.lexicon import Lexicon
from lsp_assist.context.members import MemberScope
from lsp_assist.context.open_files import OpenFiles, Seen
from lsp_assist.context.parts import PartLedger, Placer
from lsp_assist.context.prose import ProseSpans
from lsp_assist.context.sources.names import FileNames, Mentions
from lsp_assist.context.sources.other_files import OtherFiles
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext, Snippet
from lsp_assist.languages import profile
from lsp_assist.memory import ByteLRU
from lsp_assist.structure.imports import import_rows_memo_bytes, imports_memo_bytes
from lsp_assist.structure.outline import name_memo_bytes
from lsp_assist.structure.symbols import SymbolIndex

if TYPE_CHECKING:
    from collections import OrderedDict

    from typing_extensions import Unpack

    from lsp_assist.context.trimming import LineSelection


class BuildOptions(TypedDict, total=False):
    """The optional inputs of a build (keywords of `build`, `build_from_text`, `prepare`)."""

    others: Iterable[Document]  # other open documents (cross-file context)
    deadline_ms: float  # the optional gathering stops by then (default 10 ms)
    crossfile: bool  # False: the current file only
    layout: str  # "trimmed", or "stable" (the embedded model's KV-cache-friendly prefix)


# A larger file's rows are read as builds ask for them: its whole table would crowd the
# other documents' out of `lexicon.ROW_TABLES_BYTES`.
WARM_ROWS = 2000


def _request(doc: Document, cursor: Cursor, budget: int, options: BuildOptions) -> BuildRequest:
    return BuildRequest(
        doc,
        cursor,
        budget,
        tuple(options.get("others", ())),
        options.get("deadline_ms", 10.0),
        options.get("crossfile", True),
        options.get("layout", "trimmed"),
    )


class ContextEngine:
    """Builds `PromptContext`s; holds the caches that make repeated builds cheap."""

    def __init__(
        self, *, symbol_index: SymbolIndex | None = None, ranker: CrossFileRanker | None = None
    ) -> None:
        self.files = OpenFiles(symbol_index)
        self.lexicon = Lexicon()
        self.names = FileNames(self.lexicon)
        self.ranker = ranker if ranker is not None else CrossFileRanker()
        self.other_files = OtherFiles(self.files, self.names, self.lexicon, self.ranker)
        self.gateway = Gateway(self.files.admits)
        self.assembler = Assembler(
            Sources(self.files, self.lexicon, self.names, self.other_files), self.gateway
        )

    # -- the data boundary ---------------------------------------------------------------------

    @property
    def symbols(self) -> SymbolIndex:
        return self.files.symbols

    @symbols.setter
    def symbols(self, index: SymbolIndex) -> None:
        """Install another index (the workspace index swaps in a rebuilt one): it keeps the
        boundary, and drops what the boundary refuses if it was filled without it."""
        self.files.symbols = index

    @property
    def boundary(self) -> Callable[[str], bool]:
        """The data boundary: True when text of the file at a path may reach a prompt."""
        return self.files.admits

    def set_boundary(self, admits: Callable[[str], bool]) -> None:
        """Install the data boundary (the runtime, from governance, at every rebuild): every
        file the index holds, and every later one, must pass it, and so must every part at
        the assembler (the gateway). Caches built from files it now refuses are dropped."""
        self.gateway.admits = admits
        if self.files.set_boundary(admits):
            self.other_files.clear()
            self.assembler.layout = StableLayout()

    # -- what the sources hold (the runtime, the CLI and tests read them) ----------------------

    @property
    def layout(self) -> StableLayout:
        return self.assembler.layout

    @layout.setter
    def layout(self, layout: StableLayout) -> None:
        self.assembler.layout = layout

    @property
    def prose(self) -> ProseSpans:
        return self.assembler.prose

    @property
    def editor_definitions(self) -> EditorDefinitionStore:
        """Definitions the editor's own language server resolved (lspAssist/definitions)."""
        return self.other_files.editor_definitions

    @property
    def editor_files(self) -> EditorFiles:
        """The files they point into, outlined like indexed ones."""
        return self.other_files.editor_files

    @property
    def last_gathered(self) -> Gathered | None:
        """What the last build's cross-file step chose (for `lsp-assist context`)."""
        return self.other_files.last_gathered

    @property
    def _mentions(self) -> OrderedDict[int, Mentions]:
        return self.names.mentions

    @property
    def _cross_cache(self) -> tuple[object, list[Snippet], Gathered] | None:
        return self.other_files.cache

    @property
    def _idents(self) -> ByteLRU[str, frozenset[str]]:
        return self.lexicon.memo

    @property
    def _windows(self) -> ByteLRU[tuple[frozenset[str], ...], frozenset[str]]:
        return self.assembler.sources.related.windows

    def _line_idents(self, text: str) -> frozenset[str]:
        return self.lexicon.line(text)

    def _add_related(
        self, sel: LineSelection, doc: Document, row: int, near: Counter[str], limit: int
    ) -> int:
        """The related lines of `sel` (`row`: its cursor row), as a build places them."""
        assert row == sel.cursor_row
        return self.assembler.sources.related.place(Placer(sel, PartLedger()), doc, near, limit)

    # -- the document hooks --------------------------------------------------------------------

    def index_document(self, doc: Document) -> None:
        """Bring the index up to date with `doc` (a store `on_change` hook: runs per keystroke).

        The first time (or after the index was swapped, or held the file's disk version)
        it indexes now, so an open buffer's symbols win at once. After that it only notes
        the change: the symbols are re-read (`refresh_document`) when another document's
        request looks definitions up, or when the document closes, not on every keystroke;
        the document's own requests read its symbols straight from its tree.

        A document behind the data boundary is not recorded at all (no symbols, no names,
        no recent edit): nothing of it can reach another file's prompt.
        """
        self.lexicon.follow_edit(doc)  # the version's tables of rows follow the edit
        self.assembler.sources.related.follow_edit(doc)
        seen = self.files.note(doc)
        if seen is Seen.REFUSED:
            return
        if seen is Seen.OPENED:
            # didOpen: the names the file spells are read now, not by its first request
            # (whose deadline cut a big file's read short: no other files in that prompt).
            self.names.mentioned(doc, float("inf"))
        elif seen is Seen.EDITED:
            self.names.advance(doc)  # a stale set is read again a slice per edit
        self.files.sync(doc)

    def refresh_document(self, doc: Document) -> None:
        """Bring the symbol index up to date with one open document now."""
        self.files.refresh_document(doc)

    def warm(self, doc: Document) -> None:
        """What a build at any position of this version reads first, read now (the prompt
        prebuilder, after didOpen or a whole replacement): each row's names and length
        (`Lexicon.rows`, `Document.row_lengths`) and the related lines' windows
        (`RelatedLines.warm`), for a file within `WARM_ROWS`."""
        if doc.line_count <= WARM_ROWS:
            doc.row_lengths()
            self.lexicon.rows(doc, 0, doc.line_count)
            self.assembler.sources.related.warm(doc)

    def warm_rows(
        self, doc: Document, start: int, budget_chars: int, until: float, **options: Unpack[BuildOptions]
    ) -> int | None:
        """What a build at each row of this version, from `start` on, reads of other files
        (the candidates per scope, their ranked outlines: `OtherFiles.warm`), done now until
        `until` (a `time.perf_counter()` value); the next row to do, None when done. A file
        past `WARM_ROWS` is left to its requests."""
        if doc.line_count > WARM_ROWS:
            return None
        cursor = Cursor(min(start, doc.line_count - 1), 0)
        return self.assembler.warm_rows(_request(doc, cursor, budget_chars, options), start, until)

    def forget_document(self, doc: Document) -> None:
        """Drop the per-document cache (a store `on_close` hook); the index keeps the file."""
        self.assembler.prose.forget(doc.uri)
        self.assembler.layout.forget(doc.uri)
        self.editor_definitions.forget(doc.uri)
        self.lexicon.forget(doc.uri)
        self.assembler.sources.related.forget(doc.uri)
        self.other_files.head_imports.forget(doc.uri)
        self.files.forget(doc)

    def memory(self) -> dict[str, int]:
        """Estimated bytes of the memos bounded in bytes (each under its named constant)."""
        return {
            "context.idents": self.lexicon.memo.nbytes,
            "context.row_names": self.lexicon.tables_bytes,
            "context.windows": self._windows.nbytes,
            "context.window_rows": self.assembler.sources.related.versions_bytes,
            "context.similar": self.ranker.nbytes,
            "context.layout": self.layout.nbytes,
            "context.names": name_memo_bytes(),
            "context.imports": imports_memo_bytes(),
            "context.import_rows": import_rows_memo_bytes(),
            **self.other_files.memory(),
        }

    # -- building ------------------------------------------------------------------------------

    def prepare(
        self, doc: Document, cursor: Cursor, budget_chars: int | None = None, **options: Unpack[BuildOptions]
    ) -> None:
        """What the next build at `cursor` would do first, done now (while a request's
        debounce timer waits): the incremental re-parse, the symbol scan of the new tree and,
        given the build's budget and other files, the cross-file step, whose result the build
        then finds in its cache (the first request in another function gathers and ranks
        other files' outlines: 2-4 ms)."""
        self.assembler.prepare(_request(doc, cursor, int(budget_chars or 0), options))

    def build_from_text(
        self,
        text: str,
        language_id: str,
        path: str,
        cursor: Cursor,
        budget_chars: int,
        **options: Unpack[BuildOptions],
    ) -> PromptContext:
        """`build` for a text that is not an open document (the CLI, benchmarks)."""
        doc = Document("file://" + path if path.startswith("/") else path, language_id, 0, text, path)
        return self.build(doc, cursor, budget_chars, **options)

    def build(
        self, doc: Document, cursor: Cursor, budget_chars: int, **options: Unpack[BuildOptions]
    ) -> PromptContext:
        """The prompt context for `cursor` in `doc`: prefix ends and suffix starts at the cursor.

        `layout="stable"` (the embedded model) re-lays the prefix for KV-cache reuse."""
        ctx = self.assembler.build(_request(doc, cursor, budget_chars, options))
        spelled = profile(doc.language_id)
        if spelled is not None and spelled.member_scope:  # receivers for the member constraint (lazy)
            outlines = [s.text for s in ctx.snippets if s.reason == "outline"]
            ctx = replace(ctx, members=MemberScope(doc.text, cursor.line, outlines))
        return ctx
