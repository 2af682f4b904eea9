"""Other files' outlines: the cross-file source (with the package prior and, with what the
outlines leave, windows of open files similar to the code at the cursor).

Everything read here was prepared at open/change/index time (outlines, symbols, the names
each file spells); per request only names are collected, candidate files chosen
(`context/candidates.py`) and entries ranked (`context/cross_ranking.py`). The cursor's own
row is left out of every name set, so typing on it does not reorder the cross-file text,
and the result is cached while its inputs hold.

A request at a fresh position of an unchanged document mostly asks what an earlier one in
the same scope asked: the candidate files depend on the enclosing function's names, not
on the rows near the cursor, so they are kept per scope (`Scope`, in `scopes`). The names
and words of their outlines that the rows near the cursor can change the ranking by depend on
the candidate list alone: they are kept once per list (`scope_names`), not per scope (a
file's hundreds of scopes share a few dozen lists). The
ranked outline text is kept per scope and per the near names it reads
(`near & names`): two positions whose near rows differ only in names no candidate
outline has get the same text, bit for bit, at no cost. Both memos are bounded in bytes
(`SCOPES_BYTES`, `SCOPE_NAMES_BYTES`, `OUTLINES_BYTES`) and listed in the server's memory
report.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tree_sitter import Tree

from lsp_assist.context.candidates import Candidate, CandidateQuery, gather_candidates
from lsp_assist.context.cross_ranking import MAX_FILES, Gathered, Here, assemble
from lsp_assist.context.crossfile import CrossFileRanker, SourceDoc
from lsp_assist.context.editor_definitions import EditorDefinition, EditorDefinitionStore, EditorFiles
from lsp_assist.context.head_imports import HeadImports
from lsp_assist.context.lexicon import Lexicon
from lsp_assist.context.open_files import OpenFiles
from lsp_assist.context.outline_rank import Relevance
from lsp_assist.context.package_prior import PACKAGE_REASON
from lsp_assist.context.parts import Part, snippet_chars
from lsp_assist.context.prose import end_row
from lsp_assist.context.sources.editor import EditorDefinitions
from lsp_assist.context.sources.local import Chain
from lsp_assist.context.sources.names import FileNames
from lsp_assist.documents.store import Document
from lsp_assist.domain import Snippet
from lsp_assist.languages import tuning_for
from lsp_assist.languages.imports import ImportRef
from lsp_assist.memory import ByteLRU, set_bytes, strings_bytes
from lsp_assist.structure.imports import HEAD_ROWS
from lsp_assist.structure.outline import FileOutline, tail_words, words_of
from lsp_assist.structure.symbols import SymbolIndex

# The cross-file budget (outlines of other files) adapts to what the local code needs:
# 0.3 reaches more cross-file names but costs in-file recall; 0.2 the reverse.
CROSS_SHARE = 0.25  # of the budget, by default
CROSS_MIN_SHARE = 0.2  # when the enclosing function needs the room
CROSS_MAX_SHARE = 0.85  # when the whole file fits in what is left
ENCLOSING_SHARE = 0.6  # what the local window gives the enclosing definition (`sources/local.py`)
SHORT_FILE_MARGIN = 200  # chars kept free for the local file's own trimming
SIMILAR_MIN_CHARS = 400  # similar windows only when the outlines leave this much
USED_REACH = 300  # rows of the enclosing function whose names are looked up
USED_ABOVE = 20  # no enclosing function: the rows around the cursor instead
USED_BELOW = 10
NEAR_REACH_ABOVE = 12  # rows around the cursor whose classes' members rank first
NEAR_REACH_BELOW = 4
RECENT_FILES = 6  # recently edited files offered as candidates
BUDGET_STEP = 128  # file and function sizes are read in steps of this (a stable cache key)
# Every row of a file is a scope once the background fill has run (module-level rows each
# their own): stdlib files of 500-1,400 rows need 1.0-3.2 MB of scopes (~3.1 KB each),
# 0.5-1.4 MB of names (12-34 candidate lists) and 1.0-3.5 MB of outlines; the bounds hold
# two such files.
SCOPES_BYTES = 8 << 20  # candidates per scope
SCOPE_NAMES_BYTES = 4 << 20  # the near-weighable names per candidate list (~40 KB each)
OUTLINES_BYTES = 8 << 20  # ranked outline text per scope and near names (~3.4 KB each)


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


@dataclass(frozen=True)
class CrossRequest:
    """One request's inputs to the cross-file step."""

    doc: Document
    others: list[Document]
    tree: Tree | None
    data: bytes
    chain: Chain
    row: int
    lang: str
    near: Counter[str]
    budget: int  # the whole prompt's
    cap: int  # the most other files may take (the stable layout's reservation)
    deadline: float


@dataclass(frozen=True)
class _Inputs:
    """What the cross-file text depends on; `key` holds all of it (typing on one row
    changes none of these: the same text, at no cost)."""

    used: set[str]
    open_paths: list[str]
    recent: list[str]
    mentioned: frozenset[str]
    near_rows: frozenset[str]
    editor: list[EditorDefinition]
    editor_line: frozenset[str]
    budget: int
    key: tuple[object, ...]


@dataclass(frozen=True)
class Scope:
    """The candidate files for one scope's names; `names_key` finds what of their outlines
    the rows near the cursor can weigh (`ScopeNames`, shared by every scope with the same
    candidate list)."""

    candidates: tuple[Candidate, ...]
    names_key: tuple[object, ...]  # the index generation and the ranked candidates' paths
    mentioned: frozenset[str]  # held, not counted: the key has its id, so it is not reused


@dataclass(frozen=True)
class ScopeNames:
    """What of a candidate list's outlines the rows near the cursor can weigh: the names
    `Relevance.near` is compared with (containers, declaration groups, the names typed
    entries give types and those types) and the entries' tail words
    (`Relevance.near_words`). Near names outside these change nothing `assemble` computes."""

    names: frozenset[str]
    words: frozenset[str]


def _scope_bytes(key: tuple[object, ...], scope: Scope) -> int:
    # The names (sorted tuples: a fifth of a set's table) are the lexicon's strings, one
    # object per identifier of the file, shared by every scope's key: their containers count.
    used, defined, imports = key[4], key[5], key[6]
    n = sys.getsizeof(used) + sys.getsizeof(defined) + sys.getsizeof(imports) + sys.getsizeof(key)
    n += sys.getsizeof(scope.names_key)  # its paths are the candidates' (counted below)
    for c in scope.candidates:
        n += sys.getsizeof(c) + sys.getsizeof(c.path) + strings_bytes(c.reasons) + set_bytes(c.imported_names)
    return n


def _scope_names_bytes(key: tuple[object, ...], value: ScopeNames) -> int:
    return (
        sys.getsizeof(key)
        + strings_bytes(p for p in key if isinstance(p, str))
        + set_bytes(value.names)
        + set_bytes(value.words)
    )


@dataclass(frozen=True)
class _Outlines:
    """`assemble`'s result for one scope and near names, with the objects its key names by id."""

    got: Gathered
    scope: Scope
    current: FileOutline | None
    families: frozenset[str]


def _outlines_bytes(key: tuple[object, ...], value: _Outlines) -> int:
    near, words = key[1], key[2]
    assert isinstance(near, frozenset) and isinstance(words, frozenset)
    got = value.got
    n = set_bytes(near) + set_bytes(words) + sys.getsizeof(key)
    n += sum(
        sys.getsizeof(snip) + sys.getsizeof(snip.text) + sys.getsizeof(snip.path) for snip in got.snippets
    )
    n += sys.getsizeof(got.why) + strings_bytes(got.why.values()) + strings_bytes(got.candidates)
    return n


def scope_names(
    candidates: Sequence[Candidate], outline_of: Callable[[str], FileOutline | None]
) -> ScopeNames:
    """The names and words of the candidates' outlines that near names can weigh."""
    names: set[str] = set()
    words: set[str] = set()
    for cand in candidates[:MAX_FILES]:
        outline = outline_of(cand.path)
        if outline is None:
            continue
        names.update(p for p in outline.parents() if p is not None)
        for group in outline.group_names().values():
            names |= group
        for name, types in outline.types_by_name().items():
            names.add(name)
            names |= types
        for e in outline.entries:
            words |= tail_words(e.name)
    return ScopeNames(frozenset(names), frozenset(words))


class OtherFiles:
    """The cross-file source: outlines of the files the cursor needs, the package's names
    line, the editor's definitions no outline has, then similar windows of open files."""

    name = "other files"

    def __init__(self, files: OpenFiles, names: FileNames, lexicon: Lexicon, ranker: CrossFileRanker) -> None:
        self.files = files
        self.names = names
        self.lexicon = lexicon
        self.ranker = ranker
        # Definitions the editor's own language server resolved (lspAssist/definitions).
        self.editor_definitions = EditorDefinitionStore()
        self.editor_files = EditorFiles()  # files they point into, outlined like indexed ones
        self.editor = EditorDefinitions()
        self.head_imports = HeadImports()  # the head's import rows per document version
        self.cache: tuple[object, list[Snippet], Gathered] | None = None
        self.last_gathered: Gathered | None = None  # for `lsp-assist context`
        # Per scope and per near names (see the module): bounded, dropped with the index.
        self.scopes: ByteLRU[tuple[object, ...], Scope] = ByteLRU(SCOPES_BYTES, _scope_bytes)
        self.scope_names: ByteLRU[tuple[object, ...], ScopeNames] = ByteLRU(
            SCOPE_NAMES_BYTES, _scope_names_bytes
        )
        self.outlines: ByteLRU[tuple[object, ...], _Outlines] = ByteLRU(OUTLINES_BYTES, _outlines_bytes)
        self._memo_index: SymbolIndex | None = None  # the index the memos were filled from
        self.scope_hits = 0
        self.outline_hits = 0

    def clear(self) -> None:
        """Drop every memo (the data boundary changed)."""
        self.cache = None
        self.scopes.clear()
        self.scope_names.clear()
        self.outlines.clear()

    def memory(self) -> dict[str, int]:
        return {
            "context.scopes": self.scopes.nbytes,
            "context.scope_names": self.scope_names.nbytes,
            "context.outlines": self.outlines.nbytes,
        }

    def wanted(self, doc: Document, others: list[Document]) -> bool:
        return bool(others) or self.files.symbols.file_count() > 0 or self.editor_definitions.has(doc.uri)

    def offer(self, req: CrossRequest) -> tuple[list[Snippet], Gathered | None]:
        """The snippets for the cursor, and what the outline step chose (for the labels)."""
        self._refresh(req)
        inputs = self._inputs(req)
        if inputs is None:
            return [], None  # a big file's first request: its names are read over the next ones
        hit = self.cache
        if hit is not None and hit[0] == inputs.key:
            self.last_gathered = hit[2]
            return list(hit[1]), hit[2]
        snippets, got = self._gather(req, inputs)
        if time.perf_counter() <= req.deadline:  # a result cut by the deadline is not reused
            self.cache = (inputs.key, list(snippets), got)
        return snippets, got

    def _inputs(self, req: CrossRequest) -> _Inputs | None:
        doc, symbols = req.doc, self.files.symbols
        used = self.used_names(doc, req.chain, req.row)
        open_paths = sorted(o.display_path for o in req.others)
        recent = self.files.recent(doc.display_path, RECENT_FILES)
        mentioned = self.names.mentioned(doc, req.deadline)
        if mentioned is None:
            return None
        near_rows = frozenset(self.used_names(doc, [], req.row, (NEAR_REACH_ABOVE, NEAR_REACH_BELOW)))
        # Editor-sent definitions: only the cursor line's names that one of them defines
        # feed the key, so typing keeps the cached text.
        editor = self.editor_definitions.current(doc.uri, doc.version)
        editor_line = (
            frozenset(self.lexicon.line(doc.line(req.row))) & frozenset(d.name for d in editor)
            if editor
            else frozenset()
        )
        # The share, from the file's and the function's sizes in steps: the key holds the
        # share itself, so typing that changes neither leaves it be.
        enclosing_chars = req.chain[0][0].end_byte - req.chain[0][0].start_byte if req.chain else 0
        step = BUDGET_STEP
        share = cross_file_budget(req.budget, len(doc.text) // step * step, enclosing_chars // step * step)
        budget = min(req.cap, share)
        key = (
            doc.uri, id(symbols), symbols.generation, frozenset(used), near_rows, id(mentioned),
            tuple(open_paths), tuple(recent), budget,
            self.editor_definitions.generation(doc.uri), editor_line,
        )  # fmt: skip
        return _Inputs(used, open_paths, recent, mentioned, near_rows, editor, editor_line, budget, key)

    def _gather(self, req: CrossRequest, inputs: _Inputs) -> tuple[list[Snippet], Gathered]:
        got, editor_snippets, budget = self._ranked(req, inputs)
        self.last_gathered = got
        snippets = list(got.snippets) + editor_snippets
        left = budget - snippet_chars(got.snippets)
        if req.others and left >= SIMILAR_MIN_CHARS and time.perf_counter() < req.deadline:
            sources = [SourceDoc(o.display_path, o.uri, o.version, o.text) for o in req.others]
            snippets += self.ranker.rank(set(req.near), sources, left, deadline=req.deadline)
        return snippets, got

    def warm(self, req: CrossRequest) -> None:
        """The memos filled at `req`'s row (background work while the user does not type:
        `ContextEngine.warm_rows`): the scope's candidates and the ranked outlines; no
        similar windows, and the single-entry cache of the last request left as it is."""
        self._refresh(req)
        inputs = self._inputs(req)
        if inputs is not None and not inputs.editor:
            self._ranked(req, inputs)

    def _refresh(self, req: CrossRequest) -> None:
        for other in sorted(req.others, key=lambda d: d.uri):
            if time.perf_counter() > req.deadline:
                break
            if self.files.symbols.version(other.display_path) != (other.uri, other.version):
                self.files.refresh_document(other)  # edited since: its outline is one version old
        self.editor_files.ensure(self.files.symbols)  # after an index swap: the editor's files again

    def _ranked(self, req: CrossRequest, inputs: _Inputs) -> tuple[Gathered, list[Snippet], int]:
        """The outline step's choice, the editor's definitions, and the budget left for both."""
        doc, symbols = req.doc, self.files.symbols
        if symbols is not self._memo_index:  # another index: its ids and generations start over
            self.scopes.clear()
            self.scope_names.clear()
            self.outlines.clear()
            self._memo_index = symbols
        scope_key, scope = self._scope(req, inputs)
        near_names = self._names_of(scope)
        families = self.names.families(doc, inputs.mentioned)
        near_words = words_of(inputs.near_rows) if tuning_for(req.lang).near_words else frozenset()
        budget = inputs.budget
        editor_snippets: list[Snippet] = []
        if inputs.editor:  # what no outline of ours has, first on the shared cross-file budget
            names = (inputs.near_rows, frozenset(inputs.used), inputs.editor_line)
            editor_snippets = self.editor.offer(
                inputs.editor, names, doc.display_path, budget, self._outlined
            )
            budget -= snippet_chars(editor_snippets)
        current = symbols.outline(doc.display_path)  # its fields' types (`used_types`)
        # What `assemble` reads of the near names is their part in the scope's outlines.
        key = (
            scope_key, inputs.near_rows & near_names.names, near_words & near_names.words, budget,
            id(current), id(families), req.lang,
        )  # fmt: skip
        hit = self.outlines.get(key) if scope_key is not None else None
        if hit is not None and hit.current is current and hit.families is families:
            self.outline_hits += 1
            return hit.got, editor_snippets, budget
        rel = Relevance(
            used=frozenset(inputs.used),
            mentioned=inputs.mentioned,
            near=inputs.near_rows,
            families=families,
            near_words=near_words,
        )
        got = assemble(scope.candidates, symbols.outline, rel, budget, req.deadline, Here(current, req.lang))
        if scope_key is not None and time.perf_counter() <= req.deadline:  # a cut result is not kept
            self.outlines.put(key, _Outlines(got, scope, current, families))
        return got, editor_snippets, budget

    def _scope(self, req: CrossRequest, inputs: _Inputs) -> tuple[tuple[object, ...] | None, Scope]:
        """The candidate files for the cursor's scope, from the memo when an earlier request
        asked with the same inputs (its key; None when the result was cut by the deadline)."""
        doc, symbols = req.doc, self.files.symbols
        defined_here: frozenset[str] = frozenset()
        if req.tree is not None:
            found = self.files.tree_symbols(doc).find(req.tree, req.data, inputs.used, typing_row=req.row)
            defined_here = frozenset(s.name for s in found)
        imports = self.head_imports.without_row(doc, req.row, req.lang)
        head_lines = self._head(doc, req.row) if imports is None else ()
        refs: tuple[ImportRef, ...] | tuple[str, ...] = imports if imports is not None else head_lines
        key: tuple[object, ...] = (
            doc.uri, doc.display_path, req.lang, symbols.generation, tuple(sorted(inputs.used)),
            tuple(sorted(defined_here)),
            refs, tuple(inputs.open_paths), tuple(inputs.recent), id(inputs.mentioned),
        )  # fmt: skip
        hit = self.scopes.get(key)
        if hit is not None and hit.mentioned is inputs.mentioned:
            self.scope_hits += 1
            return key, hit
        cands = gather_candidates(
            CandidateQuery(
                path=doc.display_path,
                language=req.lang,
                head_lines=head_lines,
                imports=imports,
                open_paths=inputs.open_paths,
                recent=inputs.recent,
                index=symbols,
                used=inputs.used,
                defined_here=defined_here,
                deadline=req.deadline,
                mentioned=inputs.mentioned,
            )
        )
        names_key = (symbols.generation, *(c.path for c in cands[:MAX_FILES]))
        scope = Scope(tuple(cands), names_key, inputs.mentioned)
        if time.perf_counter() > req.deadline:
            return None, scope  # cut by the deadline: not kept
        self.scopes.put(key, scope)
        return key, scope

    def _names_of(self, scope: Scope) -> ScopeNames:
        """The scope's near-weighable names, shared with every scope of the same candidates
        (computed again if the memo let them go: the same sets, from the same outlines)."""
        got = self.scope_names.get(scope.names_key)
        if got is None:
            got = scope_names(scope.candidates, self.files.symbols.outline)
            self.scope_names.put(scope.names_key, got)
        return got

    def parts(self, snippets: list[Snippet], got: Gathered | None) -> list[Part]:
        """Each snippet as a part: which source sent it and why (its label), its file, its
        value (the snippet's score) and its size."""
        why = got.why if got is not None else {}
        out = []
        for snip in snippets:
            if snip.reason == "editor":
                label, reason = self.editor.label(snip)
            elif snip.reason == "outline":
                label = f"outline:{os.path.basename(snip.path)}"
                reason = f"outline of {snip.path}: {why.get(snip.path, '')}"
            elif snip.reason == PACKAGE_REASON:
                label, reason = "package:names", f"package {snip.path}: {why.get(snip.path, '')}"
            else:
                label, reason = f"snippet.{snip.reason}", f"from {snip.path}"
            out.append(Part(label, reason, snip.path, snip.score, len(snip.text), snip))
        return out

    def _outlined(self, path: str, name: str) -> bool:
        outline = self.files.symbols.outline(path)
        return outline is not None and name in outline.names()

    def used_names(
        self, doc: Document, chain: Chain, row: int, reach: tuple[int, int] = (USED_ABOVE, USED_BELOW)
    ) -> set[str]:
        """Names the enclosing function uses (its whole body, bounded), not the cursor row's;
        without one, the names of the rows around the cursor (`reach`: above, below)."""
        func = next((n for n, k in chain if k in ("function", "method")), None)
        if func is not None:
            lo, hi = func.start_point.row, min(end_row(func) + 1, func.start_point.row + USED_REACH)
        else:
            lo, hi = max(0, row - reach[0]), min(doc.line_count, row + reach[1])
        out: set[str] = set()
        for r, names in enumerate(self.lexicon.rows(doc, lo, hi), lo):
            if r != row:
                out |= names
        return out

    @staticmethod
    def _head(doc: Document, row: int) -> tuple[str, ...]:
        """The rows where imports live, without the cursor row (their parse is cached by text)."""
        return tuple(t for r, t in enumerate(doc.lines(0, min(doc.line_count, HEAD_ROWS))) if r != row)
