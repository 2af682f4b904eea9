"""`ContextEngine`: the smallest prompt that holds what a completion needs.

Within a character budget, keep in priority order: the cursor line and the lines around
it; the enclosing function or class whole when it fits, else its signature and the
nearest statements; the imports; the signatures (not bodies) of the definitions in this
file that the code near the cursor refers to; then more prefix and a shorter suffix, cut
at statement boundaries. Cross-file snippets (definitions from the symbol index, then
windows of other documents similar to the code at the cursor) use what is left, within a
deadline. Synchronous and fast: it runs on the request path.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tree_sitter import Node, Point, Tree

from lsp_assist.context.crossfile import IDENT, STOPWORDS, CrossFileRanker, SourceDoc, names_that_fit
from lsp_assist.context.editor_definitions import (
    EDITOR_SHARE,
    EditorDefinitionStore,
    EditorFiles,
    pick_editor_definitions,
)
from lsp_assist.context.import_rules import HEAD_ROWS, index_imports
from lsp_assist.context.layout import StableLayout
from lsp_assist.context.long_lines import LONG_LINE_CHARS, is_long_row, long_line_context, row_head
from lsp_assist.context.mode import ModeDecision, decide_mode
from lsp_assist.context.neighbours import Gathered, assemble, gather_candidates, imports_memo_bytes
from lsp_assist.context.outline import (
    Relevance,
    families_of,
    family_of,
    name_memo_bytes,
    outline_of,
    words_of,
)
from lsp_assist.context.package_prior import PACKAGE_REASON
from lsp_assist.context.prose import ProseSpans, end_row
from lsp_assist.context.symbols import (
    SymbolIndex,
    TreeSymbolCache,
    admit_all,
    definition_names,
    extract_symbols,
    parse_text,
    signature_of,
    spec_for,
)
from lsp_assist.context.trimming import LineSelection, cut_left, cut_right
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext, PromptPart, Snippet
from lsp_assist.languages import canonical, index_language, line_comment, tuning_for
from lsp_assist.languages.rules import LangSpec
from lsp_assist.memory import ByteLRU, set_bytes, text_names_bytes

# Shares of the local budget each optional item may take, so no one item starves the others.
NEAR_ABOVE_ROWS = 6
NEAR_BELOW_ROWS = 8
NEAR_ABOVE_SHARE = 0.3
NEAR_BELOW_SHARE = 0.25  # lines just below the cursor are the densest in names (seed 2)
ENCLOSING_SHARE = 0.6
IMPORTS_SHARE = 0.2
# Imports that name nothing near the cursor: the fewest names per character of any part
# (measured: 0.04-0.13 unique names per 1,000 chars; the JDK's 30-line import blocks took 530).
IMPORTS_OTHER_SHARE = 0.05
IMPORTS_OTHER_MIN = 150  # chars: a small budget keeps a short import block whole
SIGNATURES_SHARE = 0.25
OUTLINE_SHARE = 0.1
# ... none when the file gets a names line (unless its names, once read, gave none): that
# line carries the file's most used names at ~8 characters each, where this outline spends a
# whole signature line on each. Measured with 3 tabs + index, 150 positions, same session,
# in-file recall (seed 1): Go 75.3 -> 76.7%, rich 82.3 -> 83.0%, JDK 83.4 -> 83.8% (see README).
OUTLINE_SHARE_WITH_NAMES = 0.0
RELATED_SHARE = 0.2
RELATED_REACH = 200  # rows each side searched for related lines (bounded work per keystroke)
RELATED_WINDOW = 6
RELATED_STEP = 3
SKIP_PROSE = 1
SNIPPET_SHARE = 0.07  # similar windows of other files (only from what the outlines leave)
# The cross-file budget (outlines of other files) adapts to what the local code needs:
# Measured with benchmarks/context_recall.py (stdlib + rich): 0.3 reaches more cross-file
# names but costs in-file recall; 0.2 the reverse (see README, "Cross-file context").
CROSS_SHARE = 0.25  # of the budget, by default
CROSS_MIN_SHARE = 0.2  # when the enclosing function needs the room
CROSS_MAX_SHARE = 0.85  # when the whole file fits in what is left
SHORT_FILE_MARGIN = 200  # chars kept free for the local file's own trimming
SIMILAR_MIN_CHARS = 400  # similar windows only when the outlines leave this much
USED_REACH = 300  # rows of the enclosing function whose names are looked up
NEAR_REACH_ABOVE = 12  # rows around the cursor whose classes' members rank first
NEAR_REACH_BELOW = 4
MENTION_REACH = 20_000  # rows of the current file read for "names this file spells"
MENTION_STALE_EDITS = 60  # edits before that set is read again
MENTION_STALE_LINES = 10
MENTION_DOCS = 4
MENTION_SLICE = 512  # rows read per request (a first read) or per edit (a re-read)
SUFFIX_SHARE_MULTI = 0.45  # of what is left after the priority items (measured best)
SUFFIX_SHARE_SINGLE = 0.2
MAX_DEFINITION_SNIPPETS = 6
IDENTS_BYTES = 6 << 20  # the names of ~9,000 line texts: the rows around a few cursors, and more
WINDOWS_BYTES = 3 << 20  # ~3,000 related windows' names (~130 per request)
# The file's own names line (`# in this file: a,b,c`): the names the file spells on the
# most code rows that nothing else in the prompt shows, most used first. ~8 characters a
# name, where the far prefix and suffix bring about one new name per 30-40 characters.
NAMES_SHARE = 0.08  # of the budget (0.05 measured lower on stdlib and JDK, Go within noise)
NAMES_MIN_BUDGET = 1000  # below this the contiguous window matters more
NAMES_GIVE_BACK = 40  # a line this much shorter than its share gives the rest back to the file
NAMES_HEAD = "in this file: "
_COMMENT_START = ("#", "//", "/*", "*", "--", ";")
# What the names line never carries: words inside string literals (a token or key split
# into words would pass the redaction that the whole literal would not), and names spelled
# on one row only (a PEM block's or a multi-line string's words).
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`")
NAMES_MIN_ROWS = 2

_FALLBACK_IMPORT = re.compile(
    r"^\s*(import\s|from\s+\S+\s+import\s|#\s*include\b|use\s|package\s|extern\s+crate\s)"
    r"|\brequire\(['\"]"
)
_STRINGISH = ("string", "comment", "char_literal", "template")


def _window_bytes(rows: tuple[frozenset[str], ...], names: frozenset[str]) -> int:
    # The rows' sets are `_idents` values, counted here too: they outlive their entries there.
    return sys.getsizeof(rows) + sum(map(sys.getsizeof, rows)) + set_bytes(names)


def _near_identifiers(text: str) -> Counter[str]:
    return Counter(t for t in IDENT.findall(text) if len(t) > 1 and t not in STOPWORDS)


@dataclass
class _Mentions:
    """The names one document spells, read in slices of rows until whole (`names`)."""

    doc: Document
    version: int
    lines: int
    next_row: int = 0
    partial: set[str] = field(default_factory=set)
    names: frozenset[str] | None = None
    # The name families of `partial`, read with each slice (see `_read_slice`), and of `names`.
    partial_families: set[str] = field(default_factory=set)
    families: frozenset[str] = frozenset()
    counts: Counter[str] = field(default_factory=Counter)  # code rows (not comments) per name
    ranked: tuple[str, ...] = ()  # by those counts, most first (ties by name)
    # A re-read of a stale set, a slice per edit (`_advance_mentions`): until it is whole
    # the previous `names` and `ranked` stand; it started at this version and line count.
    rereading: bool = False
    read_version: int = 0
    read_lines: int = 0


class _Parts:
    """Characters per labelled part, in the order parts were first added."""

    def __init__(self) -> None:
        self._chars: dict[str, int] = {}
        self._why: dict[str, str] = {}
        self._line_labels: set[str] = set()

    def line(self, label: str, reason: str, chars: int) -> None:
        """A part made of whole rows of the file (its size is measured at the end)."""
        self._line_labels.add(label)
        self.add(label, reason, chars)

    def add(self, label: str, reason: str, chars: int) -> None:
        if chars <= 0:
            return
        self._chars[label] = self._chars.get(label, 0) + chars
        self._why.setdefault(label, reason)

    def items(self, measured: dict[str, int]) -> list[PromptPart]:
        """Parts in order; line-based parts take their measured size from the selection."""
        for label, reason in (
            (
                "gap_markers",
                "one marker line per skipped stretch of the file (long docstrings and"
                " block comments of other definitions are skipped to keep more code)",
            ),
            ("gap_fill", "blank lines kept instead of a marker (no dearer)"),
        ):
            if measured.get(label):
                self._chars.setdefault(label, 0)
                self._why.setdefault(label, reason)
        out = []
        for k, v in self._chars.items():
            chars = measured.get(k, 0) if k in self._line_labels or k.startswith("gap_") else v
            if chars > 0:
                out.append(PromptPart(k, self._why[k], chars))
        return out


class ContextEngine:
    """Builds `PromptContext`s; holds the caches that make repeated builds cheap."""

    def __init__(
        self,
        *,
        symbol_index: SymbolIndex | None = None,
        ranker: CrossFileRanker | None = None,
        snippet_share: float = SNIPPET_SHARE,
    ) -> None:
        self._admits: Callable[[str], bool] = admit_all
        self._symbols = symbol_index if symbol_index is not None else SymbolIndex()
        self.ranker = ranker if ranker is not None else CrossFileRanker()
        self.snippet_share = snippet_share
        self._trees: OrderedDict[str, TreeSymbolCache] = OrderedDict()
        # Identifiers per line text, and the related windows' names by their rows' names:
        # every edit adds a row's new text (and its windows), so both are bounded in bytes.
        self._idents: ByteLRU[str, frozenset[str]] = ByteLRU(IDENTS_BYTES, text_names_bytes)
        self._windows: ByteLRU[tuple[frozenset[str], ...], frozenset[str]] = ByteLRU(
            WINDOWS_BYTES, _window_bytes
        )
        self.prose = ProseSpans()  # docstrings and block comments the windows step over
        self._stale: dict[str, Document] = {}  # changed since their symbols were indexed
        self._recent: OrderedDict[str, None] = OrderedDict()  # paths edited, latest last
        self._versions_seen: dict[str, int] = {}
        # names the current file spells (see `_mentioned`): (document, version, lines, names)
        # Names each recent document spells (`_mentioned`), by document object: a prefetch's
        # one-off document does not evict the open one's.
        self._mentions: OrderedDict[int, _Mentions] = OrderedDict()
        self._cross_cache: tuple[object, list[Snippet], Gathered] | None = None
        self.last_gathered: Gathered | None = None  # for `lsp-assist context`
        self.layout = StableLayout()  # the embedded model's KV-stable layout (context/layout.py)
        # Definitions the editor's own language server resolved (lspAssist/definitions).
        self.editor_definitions = EditorDefinitionStore()
        self.editor_files = EditorFiles()  # files they point into, outlined like indexed ones
        self._editor_names: dict[str, tuple[str, ...]] = {}  # per path, for the labels

    # -- the data boundary ---------------------------------------------------------------------

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
    def boundary(self) -> Callable[[str], bool]:
        """The data boundary: True when text of the file at a path may reach a prompt."""
        return self._admits

    def set_boundary(self, admits: Callable[[str], bool]) -> None:
        """Install the data boundary (the runtime, from governance, at every rebuild): every
        file the index holds, and every later one, must pass it. Caches built from files it
        now refuses are dropped."""
        self._admits = admits
        self._symbols.admits = admits
        if self._symbols.purge():
            self._cross_cache = None
            self.layout = StableLayout()

    # -- symbol bookkeeping --------------------------------------------------------------------

    def _tree_symbols(self, doc: Document) -> TreeSymbolCache:
        cache = self._trees.get(doc.uri)
        if cache is None:
            cache = TreeSymbolCache(doc.language_id, doc.display_path)
            self._trees[doc.uri] = cache
            if len(self._trees) > 128:
                self._trees.popitem(last=False)
        else:
            self._trees.move_to_end(doc.uri)
        cache.track(doc.syntax)
        return cache

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
        if not self._admits(doc.display_path):
            self._versions_seen.pop(doc.uri, None)
            self._stale.pop(doc.uri, None)
            self._recent.pop(doc.display_path, None)
            self._symbols.remove_file(doc.display_path)
            return
        seen = self._versions_seen.get(doc.uri)
        self._versions_seen[doc.uri] = doc.version
        if seen is not None and seen != doc.version:  # an edit, not the open or a re-index
            self._recent[doc.display_path] = None
            self._recent.move_to_end(doc.display_path)
            if len(self._recent) > 16:
                self._recent.popitem(last=False)
        if seen is None:
            # didOpen: the names the file spells are read now, not by its first request
            # (whose deadline cut a big file's read short: no other files in that prompt).
            self._mentioned(doc, float("inf"))
        elif seen != doc.version:
            self._advance_mentions(doc)  # a stale set is read again a slice per edit
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
        data = doc.data()
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
        self.symbols.set_symbols(
            doc.display_path,
            self._tree_symbols(doc).find(tree, data),
            key,
            outline_of(tree, data, doc.language_id, doc.display_path, key),
            imports=index_imports(head, doc.language_id),
        )

    def forget_document(self, doc: Document) -> None:
        """Drop the per-document cache (a store `on_close` hook); the index keeps the file."""
        self._trees.pop(doc.uri, None)
        self.prose.forget(doc.uri)
        self._versions_seen.pop(doc.uri, None)
        self.layout.forget(doc.uri)
        self.editor_definitions.forget(doc.uri)
        stale = self._stale.pop(doc.uri, None)
        if stale is not None:
            self.refresh_document(stale)  # the index keeps the file as it was last seen

    def memory(self) -> dict[str, int]:
        """Estimated bytes of the memos bounded in bytes (each under its named constant)."""
        return {
            "context.idents": self._idents.nbytes,
            "context.windows": self._windows.nbytes,
            "context.similar": self.ranker.nbytes,
            "context.layout": self.layout.nbytes,
            "context.names": name_memo_bytes(),
            "context.imports": imports_memo_bytes(),
        }

    # -- building ------------------------------------------------------------------------------

    def prepare(
        self,
        doc: Document,
        cursor: Cursor,
        budget_chars: int | None = None,
        *,
        others: Iterable[Document] = (),
        deadline_ms: float = 10.0,
        layout: str = "trimmed",
    ) -> None:
        """What the next build at `cursor` would do first, done now (while a request's
        debounce timer waits): the incremental re-parse, the symbol scan of the new tree and,
        given the build's budget and other files, the cross-file step, whose result the build
        then finds in its cache (the first request in another function gathers and ranks
        other files' outlines: 2-4 ms)."""
        cur = doc.clamp(cursor)
        if is_long_row(doc, cur.line):
            return  # minified code: its build reads no tree (context/long_lines.py)
        tree = doc.tree()
        if tree is None:
            return
        data = doc.data()
        self._tree_symbols(doc).find(tree, data, (), typing_row=cur.line)
        if budget_chars is None or budget_chars <= 0:
            return
        deadline = time.perf_counter() + deadline_ms / 1000.0
        others_list = [o for o in others if o.uri != doc.uri]
        if not self._wants_snippets(doc, others_list):
            return
        spec = spec_for(doc.language_id)
        lang = canonical(doc.language_id) or doc.language_id
        line_prefix = doc.line(cur.line)[: cur.character]
        _node, chain, near = self._around(doc, tree, data, spec, cur.line, line_prefix)
        self._crossfile(
            doc,
            others_list,
            tree,
            data,
            chain,
            cur.line,
            lang,
            near,
            int(budget_chars),
            deadline,
            _Parts(),
            layout,
        )

    def build_from_text(
        self,
        text: str,
        language_id: str,
        path: str,
        cursor: Cursor,
        budget_chars: int,
        *,
        others: Iterable[Document] = (),
        deadline_ms: float = 10.0,
        crossfile: bool = True,
        layout: str = "trimmed",
    ) -> PromptContext:
        """`build` for a text that is not an open document (the CLI, benchmarks)."""
        doc = Document("file://" + path if path.startswith("/") else path, language_id, 0, text, path)
        return self.build(
            doc,
            cursor,
            budget_chars,
            others=others,
            deadline_ms=deadline_ms,
            crossfile=crossfile,
            layout=layout,
        )

    def build(
        self,
        doc: Document,
        cursor: Cursor,
        budget_chars: int,
        *,
        others: Iterable[Document] = (),
        deadline_ms: float = 10.0,
        crossfile: bool = True,
        layout: str = "trimmed",
    ) -> PromptContext:
        """The prompt context for `cursor` in `doc`: prefix ends and suffix starts at the cursor.

        `layout="stable"` (the embedded model) re-lays the prefix for KV-cache reuse."""
        budget = max(0, int(budget_chars))
        cur = doc.clamp(cursor)
        row = cur.line
        if is_long_row(doc, row):  # minified code: work bounded by the budget, not the line
            return long_line_context(doc, cur, budget)
        line = doc.line(row)
        line_prefix, line_suffix = line[: cur.character], line[cur.character :]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        lang = canonical(doc.language_id) or doc.language_id
        spec = spec_for(doc.language_id)
        tree = doc.tree()
        # The clock starts once the tree is current: the deadline bounds the optional
        # gathering below, not a (re-)parse every request needs anyway.
        deadline = time.perf_counter() + deadline_ms / 1000.0
        data = doc.data() if tree is not None else b""
        others_list = [o for o in others if o.uri != doc.uri] if crossfile else []
        want_snippets = crossfile and self._wants_snippets(doc, others_list)
        cursor_node, chain, near = self._around(doc, tree, data, spec, row, line_prefix)
        parts = _Parts()

        # 0. Other files first (the prompt sends them first, in a stable order): their size
        # adapts to the file and to how much the code at the cursor leans on other files;
        # every character they leave is the local file's.
        snippets: list[Snippet] = []
        self.last_gathered = None
        if want_snippets and budget > 0:
            snippets = self._crossfile(
                doc, others_list, tree, data, chain, row, lang, near, budget, deadline, parts, layout
            )
        local_budget = budget - sum(len(snip.text) for snip in snippets)
        marker = f"{line_comment(lang)} ..." if spec is not None else ""
        names_on = layout != "stable" and spec is not None and budget >= NAMES_MIN_BUDGET
        names_reserve = int(budget * NAMES_SHARE) if names_on else 0
        # A file opened before (its names read at didOpen) keeps the line's share out of
        # the local budget from the start: big functions and import blocks do not take it.
        early = names_reserve if self._names_ready(doc) else 0
        sel = LineSelection(doc, row, local_budget - early, marker)

        # 1. The cursor line, cut at token boundaries when it alone is too long (minified code).
        kept_prefix, kept_suffix = line_prefix, line_suffix
        if len(line) + 1 > local_budget * 0.8:
            kept_prefix = cut_left(line_prefix, int(local_budget * 0.6))
            kept_suffix = cut_right(line_suffix, max(0, int(local_budget * 0.8) - len(kept_prefix)))
        sel.cursor_chars = len(kept_prefix) + len(kept_suffix)
        parts.add("prefix.cursor_line", "the typed part of the cursor line", len(kept_prefix))
        parts.add("suffix.cursor_line", "the rest of the cursor line", len(kept_suffix))

        # 2. The lines right around the cursor.
        sel.label = "prefix.cursor_lines"
        parts.line(
            "prefix.cursor_lines",
            "lines just above the cursor",
            sel.grow(row - 1, row - 1 - NEAR_ABOVE_ROWS, -1, int(local_budget * NEAR_ABOVE_SHARE)),
        )
        sel.label = "suffix.cursor_lines"
        parts.line(
            "suffix.cursor_lines",
            "lines just below the cursor",
            sel.grow(row + 1, row + 1 + NEAR_BELOW_ROWS, 1, int(local_budget * NEAR_BELOW_SHARE)),
        )

        # 3. The enclosing definitions.
        if chain:
            self._add_enclosing(sel, parts, chain, data, local_budget, row)
        else:
            headers = self._indent_headers(doc, row)
            sel.label = "enclosing.headers"
            parts.line(
                "enclosing.headers",
                "lines that open the blocks around the cursor (by indentation)",
                sel.try_add(headers, int(local_budget * 0.15)),
            )
        # Optional items shrink at small budgets, where the contiguous window matters most.
        # Both this scale and the related lines' share are of the whole budget: what other
        # files take comes out of the far prefix and suffix (the fewest names per character
        # after the imports), not out of the lines that share the cursor's names.
        scale = min(1.0, max(0.25, (budget - 800) / 3200))

        # Long docstrings and block comments of other definitions are stepped over by the
        # growing windows below: a marker line instead, so the budget holds more code.
        if tree is not None and SKIP_PROSE:
            sel.skipper = self.prose.skipper(tree, doc, row, chain)

        # 4. Imports.
        import_budget = int(local_budget * IMPORTS_SHARE)
        used = 0
        sel.label = "imports"
        other_budget = max(IMPORTS_OTHER_MIN, int(local_budget * IMPORTS_OTHER_SHARE))
        other = 0
        for rows, hit in self._imports(doc, tree, spec, near, row):
            if hit:
                got = sel.try_add(rows, import_budget - used)
            else:
                got = sel.try_add(rows, min(import_budget - used, other_budget - other))
                other += got
            used += got
        parts.line("imports", "the file's imports", used)

        # 5. Signatures of in-file definitions the code near the cursor refers to.
        if tree is not None and near and time.perf_counter() < deadline:
            with_names = names_on and not self._no_names(doc)
            outline_share = OUTLINE_SHARE_WITH_NAMES if with_names else OUTLINE_SHARE
            self._add_signatures(
                sel, parts, doc, tree, data, near, chain, int(local_budget * scale), outline_share
            )

        # 5b. Lines elsewhere in the file (within reach) that use the same names.
        if near and time.perf_counter() < deadline:
            sel.label = "related"
            parts.line(
                "related",
                "lines elsewhere in this file that use the names near the cursor",
                self._add_related(sel, doc, row, near, int(budget * RELATED_SHARE * scale)),
            )

        # 6. The rest of the prefix and a shorter suffix, then statement-boundary cuts.
        mode = self._mode(doc, row, line_prefix, line_suffix, cursor_node)
        multi = mode.mode == "multi"
        # 6b. The file's own names line (its share out of what the far prefix and suffix
        # would have had); the stable layout re-lays the prefix, so it has none. A file not
        # read yet is read here, last: a big file's first read may run out the deadline.
        ranked = self._ranked_names(doc, deadline) if names_on else None
        if not ranked:
            names_reserve = 0
        local_limit = sel.budget + early
        sel.budget = local_limit - names_reserve
        self._add_rest(sel, parts, row, multi, tree)
        names_line = ""
        if ranked and spec is not None:
            shown_text = "\n".join([kept_prefix, kept_suffix, *(snip.text for snip in snippets)])
            names_line = self._names_line(
                ranked, sel, shown_text, f"{line_comment(lang)} {NAMES_HEAD}", sel.remaining + names_reserve
            )
            sel.budget = local_limit - len(names_line)
            if names_reserve - len(names_line) >= NAMES_GIVE_BACK:  # (nearly) all names shown
                self._add_rest(sel, parts, row, multi, tree)
            parts.add(
                "names", "names this file spells most that nothing else in the prompt shows", len(names_line)
            )
        sel.fill_cheap_gaps()
        prefix, suffix = sel.render(kept_prefix, kept_suffix)
        prefix = names_line + prefix

        ctx = PromptContext(
            language=lang,
            path=doc.display_path,
            prefix=prefix,
            suffix=suffix,
            snippets=tuple(snippets),
            mode=mode.mode,
            stop=mode.stop,
            max_tokens=mode.max_tokens,
            parts=tuple(parts.items(sel.chars_by_label())),
            line_prefix=line_prefix,
            line_suffix=line_suffix,
            indent=indent,
        )
        return self.layout.apply(ctx, doc, cur, budget) if layout == "stable" else ctx

    # -- steps ---------------------------------------------------------------------------------

    def _wants_snippets(self, doc: Document, others: list[Document]) -> bool:
        return bool(others) or self.symbols.file_count() > 0 or self.editor_definitions.has(doc.uri)

    def _around(
        self, doc: Document, tree: Tree | None, data: bytes, spec: LangSpec | None, row: int, line_prefix: str
    ) -> tuple[Node | None, list[tuple[Node, str]], Counter[str]]:
        """The node at the cursor, the definitions enclosing it (innermost first) and the
        names of the rows around it (with the enclosing definition's signature)."""
        cursor_node: Node | None = None
        chain: list[tuple[Node, str]] = []
        if tree is not None and spec is not None:
            bcol = len(line_prefix.encode("utf-8", "surrogatepass"))
            cursor_node = tree.root_node.descendant_for_point_range(Point(row, bcol), Point(row, bcol))
            chain = self._enclosing(cursor_node, spec, row)
        near_text_rows = (max(0, row - 12), min(doc.line_count, row + 4))
        near_text = "\n".join(row_head(doc, r) for r in range(*near_text_rows))
        if chain:
            near_text += "\n" + signature_of(chain[0][0], data, chain[0][1])[0]
        return cursor_node, chain, _near_identifiers(near_text)

    @staticmethod
    def _enclosing(node: Node | None, spec: LangSpec, row: int) -> list[tuple[Node, str]]:
        """Definitions around the cursor, innermost first, with their kinds."""
        out: list[tuple[Node, str]] = []
        cur = node
        while cur is not None:
            kind = spec.defs.get(cur.type)
            if kind in ("function", "method", "class", "module") and cur.start_point.row <= row:
                out.append((cur, kind))
            cur = cur.parent
        return out

    @staticmethod
    def _add_enclosing(
        sel: LineSelection,
        parts: _Parts,
        chain: list[tuple[Node, str]],
        data: bytes,
        budget: int,
        row: int,
    ) -> None:
        inner, kind = chain[0]
        start, end = inner.start_point.row, end_row(inner)
        sel.label = "enclosing"
        got = sel.try_add(range(start, end + 1), int(budget * ENCLOSING_SHARE))
        if got:
            parts.line("enclosing", f"the enclosing {kind}, whole", got)
        else:
            _, s_row, e_row = signature_of(inner, data, kind)
            sel.label = "enclosing.signature"
            parts.line(
                "enclosing.signature",
                f"the enclosing {kind}'s signature",
                sel.try_add(range(s_row, e_row + 1)),
            )
            sel.label = "enclosing.nearby"
            nearby = sel.grow(row - 1, max(start, e_row), -1, int(budget * 0.3))
            nearby += sel.grow(row + 1, end + 1, 1, int(budget * 0.08))
            parts.line("enclosing.nearby", f"statements of the enclosing {kind} nearest the cursor", nearby)
        outer = 0
        sel.label = "enclosing.outer"
        for node, k in chain[1:]:
            _, s_row, e_row = signature_of(node, data, k)
            outer += sel.try_add(range(s_row, e_row + 1))
        parts.line("enclosing.outer", "signatures of the outer definitions", outer)

    @staticmethod
    def _indent_headers(doc: Document, row: int, levels: int = 3) -> list[int]:
        """Line-based fallback: the nearest lines above with less indentation (block openers)."""
        line = doc.line(row)
        width = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())
        if not line.strip():
            width = 10_000
        out: list[int] = []
        r = row - 1
        while r >= 0 and len(out) < levels and row - r < 2000:
            text = row_head(doc, r).expandtabs(4)
            if text.strip():
                w = len(text) - len(text.lstrip())
                if w < width:
                    out.append(r)
                    width = w
                    if w == 0:
                        break
            r -= 1
        return out

    @staticmethod
    def _imports(
        doc: Document, tree: Tree | None, spec: LangSpec | None, near: Counter[str], row: int
    ) -> list[tuple[range, bool]]:
        """Import statements as row ranges, each with whether it names an identifier near
        the cursor: those first."""
        found: list[tuple[range, str]] = []
        if tree is not None and spec is not None:
            misses = 0
            for child in tree.root_node.named_children:
                if child.start_point.row >= row or misses > 40:
                    break
                if child.type in spec.imports:
                    found.append((range(child.start_point.row, end_row(child) + 1), ""))
                    misses = 0
                elif "comment" not in child.type:
                    misses += 1
        else:
            for r in range(min(row, 300)):
                if _FALLBACK_IMPORT.search(row_head(doc, r)):
                    found.append((range(r, r + 1), ""))
        ranked: list[tuple[int, int, range]] = []
        for rows, _ in found:
            text = " ".join(row_head(doc, r) for r in rows)
            hits = sum(1 for t in IDENT.findall(text) if t in near)
            ranked.append((-min(hits, 1), rows.start, rows))
        ranked.sort(key=lambda t: (t[0], t[1]))
        return [(r, h < 0) for h, _, r in ranked]

    def _add_signatures(
        self,
        sel: LineSelection,
        parts: _Parts,
        doc: Document,
        tree: Tree,
        data: bytes,
        near: Counter[str],
        chain: list[tuple[Node, str]],
        budget: int,
        outline_share: float = OUTLINE_SHARE,
    ) -> set[str]:
        # The cursor row's symbols as of the last scan while only that row was typed on
        # (`TreeSymbolCache`): rows hold, and the walk of a big class is not redone per key.
        typing = sel.cursor_row
        syms = self._tree_symbols(doc).find(tree, data, near, typing_row=typing)
        containers = {s.container for s in syms if s.container}
        headers = {
            s.name: s
            for s in self._tree_symbols(doc).find(tree, data, containers, typing_row=typing)
            if s.container is None and containers
        }
        own = {(n.start_point.row, n.end_point.row) for n, _ in chain}
        cursor_row = sel.cursor_row
        limit = int(budget * SIGNATURES_SHARE)
        used = 0
        sel.label = "signatures"
        ordered = sorted(syms, key=lambda s: (-near[s.name], s.start_row))
        for s in ordered:
            if (s.start_row, s.end_row) in own or s.start_row <= cursor_row <= s.end_row:
                continue
            rows = list(range(s.sig_start_row, s.sig_end_row + 1))
            head = headers.get(s.container) if s.container else None
            if head is not None:
                rows += range(head.sig_start_row, head.sig_end_row + 1)
            used += sel.try_add(rows, limit - used)
        parts.line("signatures", "signatures of definitions in this file used near the cursor", used)
        limit = int(budget * outline_share)
        if limit <= 0:
            return {s.name for s in syms}
        # Then an outline: the members of the enclosing class, then other top-level
        # definitions, nearest first (names the next line may use that are not near yet).
        classes = [n for n, k in chain if k == "class"]
        owner = None
        if classes:
            names = definition_names(classes[0], canonical(doc.language_id) or "")
            owner = names[0].text.decode("utf-8", "replace") if names and names[0].text else None
        outline = self._tree_symbols(doc).nearest(tree, data, cursor_row, owner, 40, typing_row=typing)
        extra = 0
        sel.label = "outline"
        for s in outline:
            if extra >= limit:
                break
            extra += sel.try_add(range(s.sig_start_row, s.sig_start_row + 1), limit - extra)
        parts.line("outline", "first lines of nearby definitions (the enclosing class's first)", extra)
        return {s.name for s in syms}

    def _code_idents(self, text: str) -> frozenset[str]:
        """`_line_idents` of a row without its string literals (read once per file read)."""
        return self._line_idents(_QUOTED.sub(" ", text[:LONG_LINE_CHARS]))

    def _line_idents(self, text: str) -> frozenset[str]:
        if len(text) > LONG_LINE_CHARS:  # a minified row: its start stands for it
            text = text[:LONG_LINE_CHARS]
        got = self._idents.get(text)
        if got is None:
            got = frozenset(t for t in IDENT.findall(text) if len(t) > 1 and t not in STOPWORDS)
            self._idents.put(text, got)
        return got

    def _add_related(
        self, sel: LineSelection, doc: Document, row: int, near: Counter[str], limit: int
    ) -> int:
        """Best windows (by Jaccard with the names near the cursor) outside the local window."""
        if limit <= 0:
            return 0
        query = set(near)
        lo, hi = max(0, row - RELATED_REACH), min(doc.line_count, row + RELATED_REACH)
        idents = self._line_idents
        per = [idents(t) for t in doc.lines(lo, hi)]
        scored: list[tuple[float, int]] = []
        windows = self._windows
        for start in range(lo, hi, RELATED_STEP):
            if start <= row < start + RELATED_WINDOW or any(r in sel.kept for r in (start, start + 4)):
                continue
            # A window's names by the names of its rows: an edit touches one or two windows,
            # the other ~130 reuse their union from the last keystroke (and across versions).
            rows_ids = tuple(per[start - lo : start - lo + RELATED_WINDOW])
            ids = windows.get(rows_ids)
            if ids is None:
                ids = frozenset().union(*rows_ids)
                windows.put(rows_ids, ids)
            inter = len(ids & query)
            if inter:
                scored.append((inter / (len(ids) + len(query) - inter), start))
        scored.sort(key=lambda t: (-t[0], abs(t[1] - row)))
        used = 0
        skip = sel.skipper
        for _, start in scored[:8]:
            rows = range(start, min(hi, start + RELATED_WINDOW))
            if skip is not None:  # never half a docstring: no dangling quotes in the prompt
                rows_kept = [r for r in rows if skip(r) is None]
            else:
                rows_kept = list(rows)
            used += sel.try_add(rows_kept, limit - used)
            if used >= limit:
                break
        return used

    @staticmethod
    def _add_rest(sel: LineSelection, parts: _Parts, row: int, multi: bool, tree: Tree | None) -> None:
        rem = sel.remaining
        if rem <= 0:
            sel.trim_to_statements(tree)
            return
        share = SUFFIX_SHARE_MULTI if multi else SUFFIX_SHARE_SINGLE
        below = row
        while below + 1 in sel.kept:
            below += 1
        above = row
        while above - 1 in sel.kept:
            above -= 1
        sel.label = "*rest"
        suf = sel.grow(below + 1, sel.n, 1, int(rem * share))
        pre = sel.grow(above - 1, -1, -1, sel.remaining)
        suf += sel.grow(below + 1, sel.n, 1, sel.remaining)  # the prefix ran out of file
        sel.trim_to_statements(tree)
        parts.line("prefix.rest", "more of the file above the cursor, cut at a statement", pre)
        parts.line("suffix.rest", "more of the file below the cursor, cut at a statement", suf)

    @staticmethod
    def _mode(doc: Document, row: int, line_prefix: str, line_suffix: str, node: Node | None) -> ModeDecision:
        prev_line = next_line = None
        for r in range(row - 1, max(-1, row - 20), -1):
            if row_head(doc, r).strip():
                prev_line = row_head(doc, r)
                break
        for r in range(row + 1, min(doc.line_count, row + 20)):
            if row_head(doc, r).strip():
                next_line = row_head(doc, r)
                break
        inside = False
        cur = node
        for _ in range(3):
            if cur is None:
                break
            t = cur.type
            if any(k in t for k in _STRINGISH):
                start, end = cur.start_point, cur.end_point
                pos = (row, len(line_prefix.encode("utf-8", "surrogatepass")))
                if (start.row, start.column) < pos and (
                    pos < (end.row, end.column) or ("comment" in t and pos == (end.row, end.column))
                ):
                    inside = True
                    break
            cur = cur.parent
        return decide_mode(
            doc.language_id, line_prefix, line_suffix, prev_line, next_line, in_comment_or_string=inside
        )

    def _crossfile(
        self,
        doc: Document,
        others: list[Document],
        tree: Tree | None,
        data: bytes,
        chain: list[tuple[Node, str]],
        row: int,
        lang: str,
        near: Counter[str],
        total: int,
        deadline: float,
        parts: _Parts,
        layout: str,
    ) -> list[Snippet]:
        """Outlines of the files the cursor needs, then (with what is left) similar windows.

        Everything read here was prepared at open/change/index time (outlines, symbols);
        per request only names are collected and entries ranked. The cursor's own row is
        left out of every name set, so typing on it does not reorder the cross-file text.
        """
        enclosing_chars = chain[0][0].end_byte - chain[0][0].start_byte if chain else 0
        # The stable layout keeps a fixed reservation for other files: choose the best
        # entries for that size, not the best for a larger share then cut at a line.
        cap = self.layout.reservation(total) if layout == "stable" else total
        for other in sorted(others, key=lambda d: d.uri):
            if time.perf_counter() > deadline:
                break
            if self.symbols.version(other.display_path) != (other.uri, other.version):
                self.refresh_document(other)  # edited since: its outline is one version old
        self.editor_files.ensure(self.symbols)  # after an index swap: the editor's files again
        used = self._used_names(doc, chain, row)
        open_paths = sorted(o.display_path for o in others)
        recent = [p for p in reversed(self._recent) if p != doc.display_path][:6]
        mentioned = self._mentioned(doc, deadline)
        if mentioned is None:
            return []  # a big file's first request: its names are read over the next ones
        near_rows = frozenset(self._used_names(doc, [], row, NEAR_REACH_ABOVE, NEAR_REACH_BELOW))
        # Editor-sent definitions (context/editor_definitions.py): only the cursor line's
        # names that one of them defines feed the key, so typing keeps the cached text.
        editor = self.editor_definitions.current(doc.uri, doc.version)
        editor_line = (
            frozenset(self._line_idents(doc.line(row))) & frozenset(d.name for d in editor)
            if editor
            else frozenset()
        )
        # The share, from the file's and the function's sizes in steps of 128 characters:
        # the key holds the share itself, so typing that changes neither leaves it be.
        budget = min(cap, cross_file_budget(total, len(doc.text) // 128 * 128, enclosing_chars // 128 * 128))
        # Typing on one row changes none of these: the same cross-file text, at no cost.
        key = (
            doc.uri,
            id(self.symbols),
            self.symbols.generation,
            frozenset(used),
            near_rows,
            id(mentioned),
            tuple(open_paths),
            tuple(recent),
            budget,
            self.editor_definitions.generation(doc.uri),
            editor_line,
        )
        hit = self._cross_cache
        if hit is not None and hit[0] == key:
            self.last_gathered = hit[2]
            return self._label(list(hit[1]), hit[2], parts)
        defined_here: frozenset[str] = frozenset()
        if tree is not None:
            defined_here = frozenset(
                s.name for s in self._tree_symbols(doc).find(tree, data, used, typing_row=row)
            )
        cands = gather_candidates(
            path=doc.display_path,
            language=lang,
            head_lines=self._head(doc, row),
            open_paths=open_paths,
            recent=recent,
            index=self.symbols,
            used=used,
            defined_here=defined_here,
            deadline=deadline,
            mentioned=mentioned,
        )
        rel = Relevance(
            used=frozenset(used),
            mentioned=mentioned,
            near=near_rows,
            families=self._families(doc, mentioned),
            near_words=words_of(near_rows) if tuning_for(lang).near_words else frozenset(),
        )
        editor_snippets: list[Snippet] = []
        if editor:  # what no outline of ours has, first on the shared cross-file budget
            picked = pick_editor_definitions(
                editor,
                current_path=doc.display_path,
                near=near_rows,
                used=frozenset(used),
                cursor_line=editor_line,
                budget=int(budget * EDITOR_SHARE),
                outlined=self._outlined,
            )
            editor_snippets = picked.snippets
            self._editor_names = {p: tuple(n) for p, n in picked.names.items()}
            budget -= sum(len(x.text) for x in editor_snippets)
        current = self.symbols.outline(doc.display_path)  # its fields' types (`used_types`)
        got = assemble(cands, self.symbols.outline, rel, budget, deadline, current, lang)
        self.last_gathered = got
        snippets = list(got.snippets) + editor_snippets
        left = budget - sum(len(x.text) for x in got.snippets)
        if others and left >= SIMILAR_MIN_CHARS and time.perf_counter() < deadline:
            sources = [SourceDoc(o.display_path, o.uri, o.version, o.text) for o in others]
            snippets += self.ranker.rank(set(near), sources, left, deadline=deadline)
        if time.perf_counter() <= deadline:  # a result cut by the deadline is not reused
            self._cross_cache = (key, list(snippets), got)
        return self._label(snippets, got, parts)

    def _names_ready(self, doc: Document) -> bool:
        m = self._mentions.get(id(doc))
        return m is not None and m.doc is doc and m.names is not None

    def _no_names(self, doc: Document) -> bool:
        """Whether the file's names were read and none is spelled on enough code rows to be
        listed: no names line (one not read yet is expected to have one, so the first and
        the later requests of a file lay out its rows alike)."""
        return self._names_ready(doc) and not self._mentions[id(doc)].ranked

    def _ranked_names(self, doc: Document, deadline: float) -> tuple[str, ...] | None:
        """The names the file spells on code rows, most rows first (the `_mentioned` read)."""
        if self._mentioned(doc, deadline) is None:
            return None
        return self._mentions[id(doc)].ranked

    def _names_line(
        self, ranked: tuple[str, ...], sel: LineSelection, shown_text: str, head: str, limit: int
    ) -> str:
        """`head` and the most used names of `ranked` that neither the kept rows nor
        `shown_text` spell, within `limit` characters (with its newline); "" when none."""
        cost = len(head) + 1
        if limit <= cost:
            return ""
        shown = set(IDENT.findall(shown_text))
        idents = self._line_idents
        lines = sel.lines
        for r in sel.kept:
            shown |= idents(lines.line(r))
        out = names_that_fit((n for n in ranked if n not in shown), limit - cost, ",")
        return head + ",".join(out) + "\n" if out else ""

    def _families(self, doc: Document, mentioned: frozenset[str]) -> frozenset[str]:
        """The name families the file spells, read with its names a slice at a time (at
        didOpen and in the didChange hook), never all at once by a request: a 10,000-line
        file spells ~5,000 names, ~7 ms of `family_of` when one request did them all."""
        m = self._mentions.get(id(doc))
        if m is not None and m.doc is doc and m.names is mentioned:
            return m.families
        return families_of(mentioned)

    def _outlined(self, path: str, name: str) -> bool:
        outline = self.symbols.outline(path)
        return outline is not None and name in outline.names()

    def _label(self, snippets: list[Snippet], got: Gathered, parts: _Parts) -> list[Snippet]:
        for snip in snippets:
            if snip.reason == "editor":
                names = ", ".join(self._editor_names.get(snip.path, ()))
                parts.add(
                    f"editor:{os.path.basename(snip.path)}",
                    f"from the editor's language server: definitions of {names} in {snip.path}",
                    len(snip.text),
                )
            elif snip.reason == "outline":
                why = got.why.get(snip.path, "")
                parts.add(
                    f"outline:{os.path.basename(snip.path)}", f"outline of {snip.path}: {why}", len(snip.text)
                )
            elif snip.reason == PACKAGE_REASON:
                why = got.why.get(snip.path, "")
                parts.add("package:names", f"package {snip.path}: {why}", len(snip.text))
            else:
                parts.add(f"snippet.{snip.reason}", f"from {snip.path}", len(snip.text))
        return snippets

    def _used_names(
        self, doc: Document, chain: list[tuple[Node, str]], row: int, above: int = 20, below: int = 10
    ) -> set[str]:
        """Names the enclosing function uses (its whole body, bounded), not the cursor row's;
        without one, the names of the rows around the cursor."""
        func = next((n for n, k in chain if k in ("function", "method")), None)
        if func is not None:
            lo, hi = func.start_point.row, min(end_row(func) + 1, func.start_point.row + USED_REACH)
        else:
            lo, hi = max(0, row - above), min(doc.line_count, row + below)
        out: set[str] = set()
        idents = self._line_idents
        for r, text in enumerate(doc.lines(lo, hi), lo):
            if r != row:
                out |= idents(text)
        return out

    def _mentioned(self, doc: Document, deadline: float) -> frozenset[str] | None:
        """Every name the file spells. Reading a 10,000-line file costs milliseconds, so
        the set is kept for the same document object until it is `MENTION_STALE_EDITS`
        edits or `MENTION_STALE_LINES` lines away: names typed since are not in it, which
        also keeps the cross-file text stable while a line is being typed. A stale set is
        read again a slice per edit (`_advance_mentions`, the didChange hook), never by a
        request: the old one stands until the new one is whole. The first read of a big
        file (one never opened) stops at the deadline and goes on at the next request
        (None until it is whole)."""
        m = self._mentions.get(id(doc))
        if m is not None and m.doc is not doc:
            m = None  # an id reused by a new object
        if m is not None and m.names is not None:
            self._mentions.move_to_end(id(doc))
            if not m.rereading and self._stale_mentions(m, doc):
                self._start_reread(m, doc)
            return m.names
        if m is None:
            m = _Mentions(doc, doc.version, doc.line_count)
        self._mentions[id(doc)] = m
        self._mentions.move_to_end(id(doc))
        while len(self._mentions) > MENTION_DOCS:
            self._mentions.popitem(last=False)
        while not self._read_slice(m, doc):
            if time.perf_counter() > deadline:
                return None
        return m.names

    @staticmethod
    def _stale_mentions(m: _Mentions, doc: Document) -> bool:
        return not (
            0 <= doc.version - m.version <= MENTION_STALE_EDITS
            and abs(doc.line_count - m.lines) <= MENTION_STALE_LINES
        )

    @staticmethod
    def _start_reread(m: _Mentions, doc: Document) -> None:
        m.rereading, m.next_row, m.partial, m.counts = True, 0, set(), Counter()
        m.partial_families = set()
        m.read_version, m.read_lines = doc.version, doc.line_count

    def _advance_mentions(self, doc: Document) -> None:
        """On an edit: a stale names set starts or goes on being read again, one slice."""
        m = self._mentions.get(id(doc))
        if m is None or m.doc is not doc or m.names is None:
            return
        if not m.rereading:
            if not self._stale_mentions(m, doc):
                return
            self._start_reread(m, doc)
        self._read_slice(m, doc)

    def _read_slice(self, m: _Mentions, doc: Document) -> bool:
        """Read the next `MENTION_SLICE` rows into `m`; True once the read is whole (then
        its names and ranking replace the previous ones)."""
        idents = self._line_idents
        end = min(doc.line_count, MENTION_REACH)
        stop = min(end, m.next_row + MENTION_SLICE)
        counts = m.counts
        partial, partial_families = m.partial, m.partial_families
        for text in doc.lines(m.next_row, stop):
            got = idents(text)
            if not got <= partial:
                partial_families.update(family_of(n) for n in got - partial)
                partial |= got
            if got and not text.lstrip().startswith(_COMMENT_START):
                counts.update(self._code_idents(text) if ("'" in text or '"' in text or "`" in text) else got)
        m.next_row = stop
        if stop < end:
            return False
        m.names = frozenset(m.partial)
        m.families = frozenset(f for f in m.partial_families if f)
        m.partial, m.partial_families = set(), set()
        kept = [n for n, c in m.counts.items() if c >= NAMES_MIN_ROWS]
        m.ranked = tuple(sorted(kept, key=lambda n: (-m.counts[n], n)))
        m.counts = Counter()
        if m.rereading:  # staleness counts from where the read started
            m.version, m.lines, m.rereading = m.read_version, m.read_lines, False
        else:
            m.version, m.lines = doc.version, doc.line_count
        return True

    def _head(self, doc: Document, row: int) -> tuple[str, ...]:
        """The rows where imports live, without the cursor row (their parse is cached by text)."""
        lines = [t for r, t in enumerate(doc.lines(0, min(doc.line_count, HEAD_ROWS))) if r != row]
        return tuple(lines)


def cross_file_budget(budget: int, file_chars: int, enclosing_chars: int) -> int:
    """Characters for other files' outlines: `CROSS_SHARE` of the budget; more when the
    whole file fits in what is left; less (down to `CROSS_MIN_SHARE`) when the function
    around the cursor needs the room (its whole text is the best local context). What the
    outlines do not use goes back to the file."""
    if budget <= 0:
        return 0
    share = budget * CROSS_SHARE
    if file_chars + SHORT_FILE_MARGIN < budget:
        share = max(share, budget - file_chars - SHORT_FILE_MARGIN)
    room = budget - share
    if enclosing_chars > room * ENCLOSING_SHARE:
        share = max(budget * CROSS_MIN_SHARE, budget - enclosing_chars / ENCLOSING_SHARE)
    return int(min(share, budget * CROSS_MAX_SHARE))
