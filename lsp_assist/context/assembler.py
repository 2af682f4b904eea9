"""The assembler: one build's budget, spent on what the sources offer, in order of value.

The order is the measured one (docs/context.md, "The prompt"): other files first (the
prompt sends them first, in a stable order; their share adapts to the file and to how much
the code at the cursor leans on other files, and every character they leave is the local
file's); then the cursor line, the rows around it, the enclosing definitions, the imports,
the in-file signatures, the related lines; then the far prefix and suffix and the file's
names line. Each source has a share of the budget so no one starves the others.

Every part passes the gateway (`context/gateway.py`) before it is placed: the current
document's rows are placed only through a `Placer` made for a document it admitted, and
each snippet of another file is admitted by its path. No source writes into the prompt.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from tree_sitter import Tree

from lsp_assist.context.gateway import Gateway
from lsp_assist.context.layout import StableLayout
from lsp_assist.context.lexicon import Lexicon
from lsp_assist.context.long_lines import is_long_row, long_line_context
from lsp_assist.context.open_files import OpenFiles
from lsp_assist.context.parts import PartLedger, Placer, snippet_chars
from lsp_assist.context.prose import ProseSpans
from lsp_assist.context.sources.imports import Imports, statements
from lsp_assist.context.sources.local import Around, LocalWindow, around, mode_at
from lsp_assist.context.sources.names import (
    NAMES_GIVE_BACK,
    NAMES_HEAD,
    NAMES_MIN_BUDGET,
    NAMES_SHARE,
    FileNames,
    NamesLine,
)
from lsp_assist.context.sources.other_files import CrossRequest, OtherFiles
from lsp_assist.context.sources.related import RELATED_SHARE, RelatedLines
from lsp_assist.context.sources.signatures import (
    OUTLINE_SHARE,
    OUTLINE_SHARE_WITH_NAMES,
    InFileOutline,
    InFileQuery,
)
from lsp_assist.context.trimming import LineSelection, cut_left, cut_right
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext, Snippet
from lsp_assist.languages import canonical, line_comment
from lsp_assist.languages.rules import LangSpec
from lsp_assist.structure.symbols import spec_for

CURSOR_LINE_SHARE = 0.8  # a cursor line longer than this share of the local budget is cut
CURSOR_PREFIX_SHARE = 0.6  # ... its typed part to this share
SKIP_PROSE = 1  # long docstrings and block comments of other definitions are stepped over
# Optional items shrink at small budgets, where the contiguous window matters most:
# scale = (budget - SCALE_FROM) / SCALE_SPAN, between SCALE_MIN and 1.
SCALE_FROM = 800
SCALE_SPAN = 3200
SCALE_MIN = 0.25


@dataclass(frozen=True)
class BuildRequest:
    """One build: where, how big, with which other documents, until when, in which layout."""

    doc: Document
    cursor: Cursor
    budget: int
    others: tuple[Document, ...] = ()
    deadline_ms: float = 10.0
    crossfile: bool = True
    layout: str = "trimmed"


@dataclass
class _Build:
    """One build's state as the assembler spends its budget."""

    doc: Document
    row: int
    line: tuple[str, str]  # the cursor line's text before and after the cursor
    lang: str
    spec: LangSpec | None
    tree: Tree | None
    data: bytes
    deadline: float
    at: Around
    budget: int
    ledger: PartLedger = field(default_factory=PartLedger)
    snippets: list[Snippet] = field(default_factory=list)
    kept: tuple[str, str] = ("", "")  # the cursor line's kept prefix and suffix


@dataclass
class Sources:
    """Every source the assembler draws on (one engine's, with their caches)."""

    files: OpenFiles
    lexicon: Lexicon
    names: FileNames
    other_files: OtherFiles
    local: LocalWindow = field(default_factory=LocalWindow)
    imports: Imports = field(default_factory=Imports)
    in_file: InFileOutline = field(default_factory=InFileOutline)
    related: RelatedLines = field(init=False)
    names_line: NamesLine = field(init=False)

    def __post_init__(self) -> None:
        self.related = RelatedLines(self.lexicon)
        self.names_line = NamesLine(self.lexicon)


@dataclass(frozen=True)
class _NamesPlan:
    """The names line's share: reserved up front for a file read before (`early`)."""

    on: bool
    reserve: int
    early: int


class Assembler:
    """Spends one build's budget on the sources' parts, through the gateway."""

    def __init__(self, sources: Sources, gateway: Gateway) -> None:
        self.sources = sources
        self.gateway = gateway
        self.prose = ProseSpans()  # docstrings and block comments the windows step over
        self.layout = StableLayout()  # the embedded model's KV-stable layout (context/layout.py)

    def build(self, req: BuildRequest) -> PromptContext:
        """The prompt context for `req.cursor`: prefix ends and suffix starts at the cursor.

        `layout="stable"` (the embedded model) re-lays the prefix for KV-cache reuse."""
        doc, budget = req.doc, max(0, int(req.budget))
        cur = doc.clamp(req.cursor)
        if is_long_row(doc, cur.line):  # minified code: work bounded by the budget, not the line
            return long_line_context(doc, cur, budget)
        b = self._start(req, cur, budget)
        if b is None:  # the gateway refuses the file: nothing of it, nor of other files
            return PromptContext(
                language=canonical(doc.language_id) or doc.language_id,
                path=doc.display_path,
                prefix="",
                suffix="",
            )
        others = [o for o in req.others if o.uri != doc.uri] if req.crossfile else []
        self.sources.other_files.last_gathered = None
        if req.crossfile and self.sources.other_files.wanted(doc, others) and budget > 0:
            b.snippets = self._other_files(b, others, req.layout)
        sel, names = self._local(b, req.layout)
        mode = mode_at(doc, b.row, b.line, b.at.node)
        names_line = self._rest_and_names(b, sel, names, mode.mode == "multi")
        sel.fill_cheap_gaps()
        prefix, suffix = sel.render(*b.kept)
        line = doc.line(b.row)
        ctx = PromptContext(
            language=b.lang,
            path=doc.display_path,
            prefix=names_line + prefix,
            suffix=suffix,
            snippets=tuple(b.snippets),
            mode=mode.mode,
            stop=mode.stop,
            max_tokens=mode.max_tokens,
            parts=tuple(b.ledger.items(sel.chars_by_label())),
            line_prefix=b.line[0],
            line_suffix=b.line[1],
            indent=line[: len(line) - len(line.lstrip(" \t"))],
        )
        return self.layout.apply(ctx, doc, cur, budget) if req.layout == "stable" else ctx

    def prepare(self, req: BuildRequest) -> None:
        """What the build at the cursor would do first, done now (while a request's debounce
        timer waits): the re-parse, the symbol scan and, given the budget and other files,
        the cross-file step, whose result the build then finds cached."""
        doc = req.doc
        cur = doc.clamp(req.cursor)
        if is_long_row(doc, cur.line):
            return  # minified code: its build reads no tree (context/long_lines.py)
        tree = doc.tree()
        if tree is None:
            return
        self.sources.files.tree_symbols(doc).find(tree, doc.data(), (), typing_row=cur.line)
        if req.budget <= 0:
            return
        others = [o for o in req.others if o.uri != doc.uri]
        if not self.sources.other_files.wanted(doc, others):
            return
        b = self._start(req, cur, int(req.budget))
        if b is not None:
            self._other_files(b, others, req.layout)

    def warm_rows(self, req: BuildRequest, start: int, until: float) -> int | None:
        """The cross-file step's memos (`OtherFiles.warm`) at each row from `start` on, at
        its end, until `until` (a `time.perf_counter()` value): the next row to do, None when
        all are done or nothing is to be done."""
        doc, budget = req.doc, max(0, int(req.budget))
        others = [o for o in req.others if o.uri != doc.uri] if req.crossfile else []
        src = self.sources.other_files
        if not req.crossfile or budget <= 0 or not src.wanted(doc, others):
            return None
        for row in range(start, doc.line_count):
            if time.perf_counter() > until:
                return row
            if is_long_row(doc, row):
                continue
            line = doc.line(row)
            indent = len(line) - len(line.lstrip(" \t"))
            # At its end and at its indentation: the syntax around the cursor (the enclosing
            # definition) can differ there, at a definition's last row for one.
            for col in (len(line), indent) if indent < len(line) else (len(line),):
                b = self._start(req, Cursor(row, col), budget)
                if b is None:
                    return None
                cap = self.layout.reservation(b.budget) if req.layout == "stable" else b.budget
                src.warm(
                    CrossRequest(
                        b.doc,
                        others,
                        b.tree,
                        b.data,
                        b.at.chain,
                        b.row,
                        b.lang,
                        b.at.near,
                        b.budget,
                        cap,
                        b.deadline,
                    )
                )
        return None

    def _start(self, req: BuildRequest, cur: Cursor, budget: int) -> _Build | None:
        """The build's state: the syntax at the cursor (None: the gateway refuses the file)."""
        doc = req.doc
        if not self.gateway.document(doc.display_path):
            return None
        line = doc.line(cur.line)
        line_prefix = line[: cur.character]
        tree = doc.tree()
        # The clock starts once the tree is current: the deadline bounds the optional
        # gathering, not a (re-)parse every request needs anyway.
        deadline = time.perf_counter() + req.deadline_ms / 1000.0
        data = doc.data() if tree is not None else b""
        spec = spec_for(doc.language_id)
        at = around(doc, tree, data, spec, cur.line, line_prefix)
        lang = canonical(doc.language_id) or doc.language_id
        halves = (line_prefix, line[cur.character :])
        return _Build(doc, cur.line, halves, lang, spec, tree, data, deadline, at, budget)

    def _other_files(self, b: _Build, others: list[Document], layout: str) -> list[Snippet]:
        """Other files' parts, admitted by the gateway, labelled in the ledger."""
        src = self.sources.other_files
        # The stable layout keeps a fixed reservation for other files: choose the best
        # entries for that size, not the best for a larger share then cut at a line.
        cap = self.layout.reservation(b.budget) if layout == "stable" else b.budget
        req = CrossRequest(
            b.doc, others, b.tree, b.data, b.at.chain, b.row, b.lang, b.at.near, b.budget, cap, b.deadline
        )
        offered, got = src.offer(req)
        admitted = self.gateway.parts(src.parts(offered, got))
        for part in admitted:
            b.ledger.add(part.label, part.reason, part.size)
        return [part.snippet for part in admitted if part.snippet is not None]

    def _local(self, b: _Build, layout: str) -> tuple[LineSelection, _NamesPlan]:
        """The current file's rows in order of value, each within its share of what other
        files left; the names line's share kept out first for a file read before."""
        doc, src = b.doc, self.sources
        local_budget = b.budget - snippet_chars(b.snippets)
        marker = f"{line_comment(b.lang)} ..." if b.spec is not None else ""
        names_on = layout != "stable" and b.spec is not None and b.budget >= NAMES_MIN_BUDGET
        reserve = int(b.budget * NAMES_SHARE) if names_on else 0
        # A file opened before (its names read at didOpen) keeps the line's share out of
        # the local budget from the start: big functions and import blocks do not take it.
        early = reserve if src.names.ready(doc) else 0
        sel = LineSelection(doc, b.row, local_budget - early, marker)
        place = Placer(sel, b.ledger)
        self._cursor_line(b, sel, local_budget)
        src.local.near_rows(place, b.row, local_budget)
        if b.at.chain:
            src.local.enclosing(place, b.at.chain, b.data, local_budget)
        else:
            src.local.headers(place, doc, local_budget)
        # Both this scale and the related lines' share are of the whole budget: what other
        # files take comes out of the far prefix and suffix (the fewest names per character
        # after the imports), not out of the lines that share the cursor's names.
        scale = min(1.0, max(SCALE_MIN, (b.budget - SCALE_FROM) / SCALE_SPAN))
        if b.tree is not None and SKIP_PROSE:
            sel.skipper = self.prose.skipper(b.tree, doc, b.row, b.at.chain)
        src.imports.place(place, doc, statements(doc, b.tree, b.spec, b.at.near, b.row), local_budget)
        near = b.at.near
        if b.tree is not None and near and time.perf_counter() < b.deadline:
            share = OUTLINE_SHARE_WITH_NAMES if names_on and not src.names.none_listed(doc) else OUTLINE_SHARE
            q = InFileQuery(src.files.tree_symbols(doc), b.tree, b.data, doc.language_id, near, b.at.chain)
            src.in_file.place(place, q, int(local_budget * scale), share)
        if near and time.perf_counter() < b.deadline:
            got = src.related.place(place, doc, near, int(b.budget * RELATED_SHARE * scale))
            place.record("related", "lines elsewhere in this file that use the names near the cursor", got)
        return sel, _NamesPlan(names_on, reserve, early)

    @staticmethod
    def _cursor_line(b: _Build, sel: LineSelection, local_budget: int) -> None:
        """The cursor line, cut at token boundaries when it alone is too long (minified code)."""
        line_prefix, line_suffix = b.line
        kept_prefix, kept_suffix = line_prefix, line_suffix
        if len(line_prefix) + len(line_suffix) + 1 > local_budget * CURSOR_LINE_SHARE:
            kept_prefix = cut_left(line_prefix, int(local_budget * CURSOR_PREFIX_SHARE))
            kept_suffix = cut_right(
                line_suffix, max(0, int(local_budget * CURSOR_LINE_SHARE) - len(kept_prefix))
            )
        sel.cursor_chars = len(kept_prefix) + len(kept_suffix)
        b.ledger.add("prefix.cursor_line", "the typed part of the cursor line", len(kept_prefix))
        b.ledger.add("suffix.cursor_line", "the rest of the cursor line", len(kept_suffix))
        b.kept = (kept_prefix, kept_suffix)

    def _rest_and_names(self, b: _Build, sel: LineSelection, names: _NamesPlan, multi: bool) -> str:
        """The far prefix and suffix with what is left, and the file's names line (its share
        out of what they would have had); the names line's text. A file not read yet is read
        here, last: a big file's first read may run out the deadline."""
        src = self.sources
        place = Placer(sel, b.ledger)
        ranked = src.names.ranked(b.doc, b.deadline) if names.on else None
        reserve = names.reserve if ranked else 0
        local_limit = sel.budget + names.early
        sel.budget = local_limit - reserve
        src.local.rest(sel, place, multi, b.tree)
        if not ranked or b.spec is None:
            return ""
        shown_text = "\n".join([*b.kept, *(snip.text for snip in b.snippets)])
        head = f"{line_comment(b.lang)} {NAMES_HEAD}"
        rows = src.lexicon.names_at(b.doc, sel.kept)  # the version's table: read after didOpen
        names_line = src.names_line.text(ranked, rows, shown_text, head, sel.remaining + reserve)
        sel.budget = local_limit - len(names_line)
        if reserve - len(names_line) >= NAMES_GIVE_BACK:  # (nearly) all names shown
            src.local.rest(sel, place, multi, b.tree)
        b.ledger.add(
            "names", "names this file spells most that nothing else in the prompt shows", len(names_line)
        )
        return names_line
