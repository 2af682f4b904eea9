"""Cross-file context: candidates and import resolution per language, the adaptive budget,
ranking across files, the deadline and stability while typing."""

from __future__ import annotations

import time

import pytest

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.candidates import Candidate, CandidateQuery, gather_candidates
from lsp_assist.context.cross_ranking import Here, assemble
from lsp_assist.context.import_paths import PathResolver
from lsp_assist.context.outline_rank import Relevance
from lsp_assist.context.sources.other_files import CROSS_MIN_SHARE, CROSS_SHARE, cross_file_budget
from lsp_assist.documents.store import Document, DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.structure.imports import parse_imports
from lsp_assist.structure.symbols import SymbolIndex

FAR = "def far_{0}(x):\n    return x + {0}\n\n\n"


def _index(files: dict[str, tuple[str, str]]) -> SymbolIndex:
    index = SymbolIndex()
    for path, (lang, text) in files.items():
        index.update_file(path, text, lang)
    return index


def _candidates(
    path: str,
    language: str,
    head: str,
    index: SymbolIndex,
    *,
    open_paths: tuple[str, ...] = (),
    used: frozenset[str] = frozenset(),
    mentioned: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """gather_candidates with no recent edits, nothing defined here and a deadline far off."""
    return gather_candidates(
        CandidateQuery(
            path=path,
            language=language,
            head_lines=(head,),
            open_paths=open_paths,
            recent=[],
            index=index,
            used=used,
            defined_here=frozenset(),
            deadline=time.perf_counter() + 1,
            mentioned=mentioned,
        )
    )


# (language, current path, import line, {path: text} of the workspace, the path it must resolve to)
IMPORTS = [
    (
        "python",
        "/w/pkg/a.py",
        "from .events import Loop",
        {"/w/pkg/events.py": "class Loop: pass\n"},
        "/w/pkg/events.py",
    ),
    ("python", "/w/pkg/a.py", "from . import events", {"/w/pkg/events.py": "X = 1\n"}, "/w/pkg/events.py"),
    ("python", "/w/app/a.py", "import pkg.events", {"/w/pkg/events.py": "X = 1\n"}, "/w/pkg/events.py"),
    (
        "javascript",
        "/w/src/a.js",
        "import { Box } from './box';",
        {"/w/src/box.js": "export class Box {}\n"},
        "/w/src/box.js",
    ),
    (
        "typescript",
        "/w/src/a.ts",
        "import type { Box } from '../lib/box'",
        {"/w/lib/box.ts": "export class Box {}\n"},
        "/w/lib/box.ts",
    ),
    (
        "go",
        "/w/cmd/main.go",
        'import "example.com/proj/shapes"',
        {"/w/shapes/p.go": "package shapes\nfunc New() {}\n"},
        "/w/shapes/p.go",
    ),
    (
        "rust",
        "/w/src/main.rs",
        "mod geometry;",
        {"/w/src/geometry.rs": "pub fn area() {}\n"},
        "/w/src/geometry.rs",
    ),
    (
        "rust",
        "/w/src/main.rs",
        "use crate::shapes::Circle;",
        {"/w/src/shapes.rs": "pub struct Circle;\n"},
        "/w/src/shapes.rs",
    ),
    (
        "java",
        "/w/src/a/App.java",
        "import com.acme.geo.Box;",
        {"/w/src/com/acme/geo/Box.java": "class Box {}\n"},
        "/w/src/com/acme/geo/Box.java",
    ),
    ("c", "/w/src/main.c", '#include "util.h"', {"/w/src/util.h": "int twice(int x);\n"}, "/w/src/util.h"),
    (
        "cpp",
        "/w/src/main.cpp",
        '#include "geo/shape.hpp"',
        {"/w/include/geo/shape.hpp": "class Shape {};\n"},
        "/w/include/geo/shape.hpp",
    ),
]


@pytest.mark.parametrize(("lang", "current", "line", "files", "want"), IMPORTS)
def test_imports_resolve_per_language(
    lang: str, current: str, line: str, files: dict[str, str], want: str
) -> None:
    index = _index({p: (lang, t) for p, t in files.items()})
    refs = parse_imports([line], lang)
    assert refs, line
    got = [p for ref in refs for p in PathResolver(index, []).resolve(ref, current, lang)]
    assert want in got


def test_import_resolution_is_kept_until_the_index_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each request gathering candidates used to resolve every import line again (~0.5 ms);
    # the files an import reaches only change with the index, the open files or the lines.
    index = _index({"/w/pkg/events.py": ("python", "class Loop: pass\n")})
    calls: list[str] = []
    real = PathResolver.resolve

    def counting(self: PathResolver, ref: object, current: str, language: str) -> list[str]:
        calls.append(current)
        return real(self, ref, current, language)  # type: ignore[arg-type]

    monkeypatch.setattr(PathResolver, "resolve", counting)
    for _ in range(3):
        got = _candidates("/w/pkg/a.py", "python", "from .events import Loop", index)
        assert got[0].path == "/w/pkg/events.py"
    assert len(calls) == 1
    index.update_file("/w/pkg/other.py", "X = 1\n", "python")  # the index changed: again
    _candidates("/w/pkg/a.py", "python", "from .events import Loop", index)
    assert len(calls) == 2


def test_absolute_import_inside_a_package_is_not_a_sibling() -> None:
    index = _index({"/w/pkg/__init__.py": ("python", ""), "/w/pkg/subprocess.py": ("python", "X = 1\n")})
    (ref,) = parse_imports(["import subprocess"], "python")
    assert PathResolver(index, []).resolve(ref, "/w/pkg/a.py", "python") == []


def test_candidates_order_imported_then_package_then_tabs() -> None:
    index = _index(
        {
            "/w/pkg/events.py": ("python", "class Loop:\n    def run(self): pass\n"),
            "/w/pkg/other.py": ("python", "def unrelated(): pass\n"),
            "/w/pkg/tabbed.py": ("python", "def shown(): pass\n"),
        }
    )
    cands = _candidates(
        "/w/pkg/a.py",
        "python",
        "from .events import Loop",
        index,
        open_paths=("/w/pkg/tabbed.py",),
        used=frozenset({"Loop"}),
    )
    assert [c.path for c in cands] == ["/w/pkg/events.py", "/w/pkg/tabbed.py", "/w/pkg/other.py"]
    assert "imported by this file" in cands[0].reasons[0] and cands[0].imported_names == {"Loop"}
    assert cands[1].reasons == ["open in the editor", "in the same directory (workspace index)"]


def test_go_and_java_see_their_package_without_imports() -> None:
    index = _index({"/w/shapes/point.go": ("go", "package shapes\ntype Point struct{ X int }\n")})
    cands = _candidates("/w/shapes/main.go", "go", "package shapes", index)
    assert cands and cands[0].path == "/w/shapes/point.go" and "same package" in cands[0].reasons[0]


def test_budget_adapts_to_the_file_and_the_enclosing_function() -> None:
    b = 4000
    assert cross_file_budget(b, 50_000, 500) == int(b * CROSS_SHARE)  # a long file, small function
    assert cross_file_budget(b, 1000, 300) > b // 2  # a short file leaves room for other files
    assert cross_file_budget(b, 50_000, 3000) < int(b * CROSS_SHARE)  # the function needs the room
    assert cross_file_budget(b, 50_000, 50_000) == int(b * CROSS_MIN_SHARE)
    assert cross_file_budget(0, 10, 10) == 0


def _workspace() -> tuple[ContextEngine, list[Document], str, Cursor]:
    index = SymbolIndex()
    lib = (
        "class Reader:\n"
        "    def __init__(self, path):\n        self.path = path\n        self.buffer_size = 4096\n"
        "    def read_block(self, n):\n        return n\n"
        "    def seek_to(self, pos):\n        return pos\n\n" + "".join(FAR.format(i) for i in range(40))
    )
    index.update_file("/w/pkg/reader.py", lib, "python")
    text = (
        "from .reader import Reader\n\n"
        + "".join(FAR.format(100 + i) for i in range(200))
        + "def load(path):\n    r = Reader(path)\n    data = r.read_block(10)\n    \n    return data\n"
    )
    row = text.split("\n").index("    data = r.read_block(10)") + 1
    tab = Document("file:///w/pkg/tab.py", "python", 1, "def tab_helper(a):\n    return a\n", "/w/pkg/tab.py")
    return ContextEngine(symbol_index=index), [tab], text, Cursor(row, 4)


def test_outline_of_imported_module_reaches_the_prompt_with_labels() -> None:
    engine, tabs, text, cursor = _workspace()
    ctx = engine.build_from_text(
        text, "python", "/w/pkg/load.py", cursor, 4000, others=tabs, deadline_ms=2000
    )
    outs = [s for s in ctx.snippets if s.reason == "outline"]
    assert outs[0].path == "/w/pkg/reader.py"
    body = outs[0].text
    assert "class Reader:" in body and "def read_block(self, n):" in body  # used: its signature
    assert "seek_to" in body and "buffer_size" in body  # members the next line may need
    assert "return n" not in body
    labels = {p.label: p.reason for p in ctx.parts}
    assert "outline:reader.py" in labels and "imported by this file" in labels["outline:reader.py"]
    assert sum(p.chars for p in ctx.parts) == ctx.size <= 4000


def test_cross_file_text_is_stable_while_typing_on_the_cursor_line() -> None:
    engine, tabs, text, cursor = _workspace()
    store = DocumentStore()
    doc = store.open("file:///w/pkg/load.py", "python", 1, text, "/w/pkg/load.py")
    first = engine.build(doc, cursor, 4000, others=tabs, deadline_ms=2000)
    col = cursor.character
    for v, ch in enumerate("seek_to(", start=2):
        store.change(doc.uri, v, [TextChange(Cursor(cursor.line, col), Cursor(cursor.line, col), ch)])
        col += 1
        ctx = engine.build(doc, Cursor(cursor.line, col), 4000, others=tabs, deadline_ms=2000)
        assert ctx.snippets == first.snippets  # same bytes first: prompt caches keep hitting


def test_deadline_past_keeps_only_the_strongest_outline_and_answers() -> None:
    engine, tabs, _, _ = _workspace()
    text = "from .reader import Reader\n\ndef load(path):\n    r = Reader(path)\n    \n    return r\n"
    cursor = Cursor(4, 4)
    ctx = engine.build_from_text(text, "python", "/w/pkg/load.py", cursor, 4000, others=tabs, deadline_ms=0.0)
    # Past the deadline only the imported module's ready outline is ranked; the tab is not.
    assert [s.path for s in ctx.snippets] == ["/w/pkg/reader.py"]
    assert ctx.prefix.endswith("    ") and ctx.size <= 4000


def test_unused_cross_budget_goes_back_to_the_file() -> None:
    engine, _, text, cursor = _workspace()
    with_x = engine.build_from_text(text, "python", "/w/pkg/load.py", cursor, 4000, deadline_ms=2000)
    alone = ContextEngine().build_from_text(text, "python", "/w/pkg/load.py", cursor, 4000)
    assert with_x.snippets and not alone.snippets
    local_x = len(with_x.prefix) + len(with_x.suffix)
    assert local_x + sum(len(s.text) for s in with_x.snippets) > 3800  # nothing left on the table
    assert len(alone.prefix) + len(alone.suffix) > local_x


def test_a_big_files_names_are_read_across_requests_within_their_deadline() -> None:
    engine, tabs, text, cursor = _workspace()
    big = "".join(FAR.format(1000 + i) for i in range(800)) + text  # ~4,000 rows
    row = cursor.line + 800 * 4
    store = DocumentStore()
    doc = store.open("file:///w/pkg/big.py", "python", 1, big, "/w/pkg/big.py")
    rows_read = []
    for _ in range(3):  # a deadline already past: each request reads one more slice, answers at once
        ctx = engine.build(doc, Cursor(row, 4), 4000, others=tabs, deadline_ms=0.0)
        assert not ctx.snippets and ctx.size <= 4000 and ctx.prefix
        partial = engine._mentions[id(doc)]
        assert partial.names is None
        rows_read.append(partial.next_row)
    assert rows_read == sorted(rows_read) and rows_read[0] < rows_read[-1] < doc.line_count
    ctx = engine.build(doc, Cursor(row, 4), 4000, others=tabs, deadline_ms=2000)
    assert any(s.path == "/w/pkg/reader.py" for s in ctx.snippets)
    assert engine._mentions[id(doc)].names is not None
    # A one-off document (a prefetch) with the same URI does not evict the open one's names.
    engine.build_from_text(big, "python", "/w/pkg/big.py", Cursor(row, 4), 4000, deadline_ms=2000)
    assert engine._mentions[id(doc)].names is not None


def test_the_stable_layout_chooses_outlines_for_its_reservation() -> None:
    from lsp_assist.context.layout import StableLayout

    engine, tabs, text, cursor = _workspace()
    doc = Document("file:///w/pkg/load.py", "python", 1, text, "/w/pkg/load.py")
    trimmed = engine.build(doc, cursor, 1500, others=tabs, deadline_ms=2000)
    stable = engine.build(doc, cursor, 1500, others=tabs, deadline_ms=2000, layout="stable")
    reserved = StableLayout.reservation(1500)
    assert sum(len(s.text) for s in trimmed.snippets) > reserved  # the builder's own share is larger
    sent = len(stable.prefix) + sum(len(s.text) for s in stable.snippets)
    assert stable.snippets and sent <= 1500 and sum(len(s.text) for s in stable.snippets) <= reserved
    # Chosen for the reservation (not a larger outline cut at a line): the members the next
    # line may need are there, not only a class header.
    reader = next(s.text for s in stable.snippets if s.path == "/w/pkg/reader.py")
    assert "seek_to" in reader and "buffer_size" in reader and "__init__" not in reader


def test_a_file_defining_a_rare_used_name_outranks_one_defining_common_names() -> None:
    common = "".join(f"    public int {n}() {{ return 0; }}\n" for n in ("size", "get", "put", "isEmpty"))
    files = {f"/w/p/Big{i}.java": ("java", f"class Big{i} {{\n{common}}}\n") for i in range(4)}
    files["/w/p/TimeUnit.java"] = ("java", "enum TimeUnit { SECONDS; long toNanos(long d) { return d; } }\n")
    files["/w/p/Huge.java"] = ("java", "class Huge {\n" + common + "}\n")
    index = _index(files)
    cands = _candidates(
        "/w/p/Latch.java",
        "java",
        "package p;",
        index,
        used=frozenset({"TimeUnit", "unit", "size", "get", "put", "isEmpty"}),
        mentioned=frozenset({"size", "get", "put", "isEmpty", "TimeUnit"}),
    )
    assert cands[0].path == "/w/p/TimeUnit.java", [(c.path, c.affinity) for c in cands]


def test_names_the_file_already_spells_are_not_sent_as_bare_names() -> None:
    index = _index(
        {
            "/w/pkg/lib.py": (
                "python",
                "class Store:\n    def fetch(self): pass\n    def evict(self): pass\n"
                "    def known(self): pass\n",
            )
        }
    )
    (cand,) = _candidates(
        "/w/pkg/run.py", "python", "from .lib import Store", index, used=frozenset({"Store", "known"})
    )
    rel = Relevance(used=frozenset({"Store", "known", "s"}), mentioned=frozenset({"Store", "known", "s"}))
    # 80 characters: no room for signatures (FULL_SHARE), names only.
    got = assemble([cand], index.outline, rel, 80, time.perf_counter() + 1)
    assert [s.text for s in got.snippets] == ["# Store: fetch,evict"]


def test_a_small_modules_names_are_not_crowded_out_by_a_big_ones() -> None:
    big = "".join(f"def helper_{i}(x): pass\n" for i in range(60))
    small = "class CancelledError(Exception): pass\nclass InvalidStateError(Exception): pass\n"
    index = _index({"/w/pkg/big.py": ("python", big), "/w/pkg/errors.py": ("python", small)})
    cands = _candidates("/w/pkg/run.py", "python", "from . import big, errors", index)
    assert {c.path for c in cands} == {"/w/pkg/big.py", "/w/pkg/errors.py"}
    got = assemble(cands, index.outline, Relevance(), 150, time.perf_counter() + 1)
    text = {s.path: s.text for s in got.snippets}
    # P(file) x P(name | file): each of the small module's two names beats a big one's 20th.
    assert "CancelledError" in text["/w/pkg/errors.py"] and "InvalidStateError" in text["/w/pkg/errors.py"]
    assert "helper_0" in text["/w/pkg/big.py"] and sum(len(t) for t in text.values()) <= 150


def test_a_file_opened_has_its_names_read_at_open_not_by_its_first_request() -> None:
    engine, tabs, text, cursor = _workspace()
    big = "from .reader import Reader\n" + "".join(FAR.format(1000 + i) for i in range(800)) + text
    store = DocumentStore()
    store.on_change.append(engine.index_document)  # as the server wires it
    doc = store.open("file:///w/pkg/big.py", "python", 1, big, "/w/pkg/big.py")
    assert engine._mentions[id(doc)].names is not None  # read at didOpen
    # Its first request, with its deadline already past, still gets the strongest outline.
    ctx = engine.build(doc, Cursor(cursor.line + 1 + 800 * 4, 4), 4000, others=tabs, deadline_ms=0.0)
    assert [s.path for s in ctx.snippets] == ["/w/pkg/reader.py"]


USES = (
    "def use_{0}(path):\n    r = Reader(path)  # the reader of the path given, opened once per call\n"
    "    data = r.read_block({0})  # a block of the data read, at most this many bytes\n"
    "    return data\n\n\n"
)


def test_other_files_take_their_share_from_the_far_lines_not_the_related_ones() -> None:
    engine, _, _, _ = _workspace()
    text = (
        "from .reader import Reader\n\n"
        + "".join(USES.format(i) for i in range(30))
        + "".join(FAR.format(100 + i) for i in range(20))
        + "def load(path):\n    r = Reader(path)\n    data = r.read_block(10)\n    \n    return data\n"
        + "".join(FAR.format(200 + i) for i in range(60))
    )
    cursor = Cursor(text.split("\n").index("    data = r.read_block(10)") + 1, 4)

    def parts(eng: ContextEngine) -> dict[str, int]:
        ctx = eng.build_from_text(text, "python", "/w/pkg/load.py", cursor, 4000, deadline_ms=2000)
        return {p.label: p.chars for p in ctx.parts} | {"others": sum(len(s.text) for s in ctx.snippets)}

    with_x, alone = parts(engine), parts(ContextEngine())
    assert with_x["others"] > 300 and not alone["others"]  # other files took their share
    assert with_x["related"] >= alone["related"] * 0.9  # ... not out of the related lines
    rest = ("prefix.rest", "suffix.rest")
    assert sum(with_x.get(k, 0) for k in rest) < sum(alone.get(k, 0) for k in rest)


def test_the_file_the_cursor_leans_on_gets_more_of_the_budget_than_a_tab_it_does_not() -> None:
    common = "package tls\n\nconst (\n" + "".join(f"\tsignatureKind{i} = {i}\n" for i in range(40)) + ")\n"
    other = "package tls\n\n" + "".join(f"func helperFunc{i}() {{}}\n" for i in range(12))
    index = _index({"/w/tls/common.go": ("go", common), "/w/tls/other.go": ("go", other)})
    # Equal standing (both open tabs of the package); the current file spells 30 names of common.go.
    cands = [
        Candidate("/w/tls/common.go", 0.8, affinity=30.0),
        Candidate("/w/tls/other.go", 0.8, affinity=0.0),
    ]
    got = assemble(cands, index.outline, Relevance(), 400, time.perf_counter() + 1)
    size = {s.path: len(s.text) for s in got.snippets}
    assert size["/w/tls/common.go"] > 3 * size.get("/w/tls/other.go", 0), size


def test_a_file_this_one_imports_names_from_keeps_its_share_next_to_a_hub_it_spells_more() -> None:
    hub = "".join(f"def console_helper_{i}(x): pass\n" for i in range(30))
    small = "class Box:\n    def get_top(self): pass\n    def get_bottom(self): pass\n"
    index = _index({"/w/pkg/console.py": ("python", hub), "/w/pkg/box.py": ("python", small)})
    cands = [
        Candidate("/w/pkg/console.py", 1.0, affinity=8.0),
        Candidate("/w/pkg/box.py", 1.0, imported_names={"Box"}, affinity=0.5),
    ]
    got = assemble(cands, index.outline, Relevance(), 120, time.perf_counter() + 1)
    text = {s.path: s.text for s in got.snippets}
    assert "get_top" in text.get("/w/pkg/box.py", ""), text
    # Without the import line the hub's share of the evidence wins the room.
    cands[1] = Candidate("/w/pkg/box.py", 1.0, affinity=0.5)
    got = assemble(cands, index.outline, Relevance(), 120, time.perf_counter() + 1)
    assert "get_top" not in {s.path: s.text for s in got.snippets}.get("/w/pkg/box.py", "")


def test_go_the_current_files_field_types_bring_their_methods_from_another_file() -> None:
    from lsp_assist.structure.outline import FileOutline, outline_from_text

    conn = "package tls\n\ntype Conn struct{}\n\nfunc (c *Conn) readRecord() error { return nil }\n"
    conn += "".join(f"func help{i}() {{}}\n" for i in range(30))
    index = _index({"/w/tls/conn.go": ("go", conn)})
    current = outline_from_text("package tls\n\ntype state struct {\n\tconn *Conn\n}\n", "go", "/w/tls/hs.go")
    rel = Relevance(used=frozenset({"state", "conn"}), mentioned=frozenset({"state", "conn"}))
    cand = Candidate("/w/tls/conn.go", 0.9)

    def text(current_outline: FileOutline | None) -> str:
        got = assemble([cand], index.outline, rel, 60, time.perf_counter() + 1, Here(current_outline))
        return "\n".join(s.text for s in got.snippets)

    # `s.conn.readRecord()`: the method of the type this file's field holds, before other names.
    assert "readRecord" in text(current)
    assert "readRecord" not in text(None) and "help1" in text(None)


def test_names_the_cursor_already_uses_do_not_dilute_the_rest_of_their_file() -> None:
    # The enclosing function calls ten functions of stack.py: the two it does not spell yet
    # are the likeliest next names. Those ten are shown only as signatures (for which there is
    # no room here), so they must not count in the file's total: it used to divide the two
    # unspelled names' value by sqrt(10 x 3.0 + 2) and let an unrelated module's names win.
    used = [f"stack_op_{i:02d}" for i in range(10)]
    stack = "".join(f"def {n}(s): pass\n" for n in [*used, "stack_new_a", "stack_new_b"])
    other = "".join(f"def other_fn_{i:02d}(x): pass\n" for i in range(12))
    index = _index({"/w/pkg/stack.py": ("python", stack), "/w/pkg/other.py": ("python", other)})
    cands = [Candidate("/w/pkg/other.py", 1.0), Candidate("/w/pkg/stack.py", 1.0)]
    rel = Relevance(used=frozenset(used), mentioned=frozenset(used))
    got = assemble(cands, index.outline, rel, 60, time.perf_counter() + 1)
    text = "\n".join(s.text for s in got.snippets)
    assert "stack_new_a" in text and "stack_new_b" in text, text


def test_assemble_takes_every_candidate_a_c_file_gets() -> None:
    # C gets eight candidates (MAX_CANDIDATES_BY_LANGUAGE); the outlines `assemble` reads
    # first were taken for five only, and the sixth file raised IndexError.
    files = {f"/ts/src/h{i}.h": ("c", f"void h{i}_open(void);\n") for i in range(8)}
    index = _index(files)
    cands = [Candidate(path, 1.0 - i / 10) for i, path in enumerate(files)]
    used = frozenset(f"h{i}_open" for i in range(8))
    got = assemble(cands, index.outline, Relevance(used=used), 2000, time.perf_counter() + 1)
    assert {s.path for s in got.snippets} == set(files)


def test_a_c_files_small_header_is_not_crowded_out_by_the_header_it_spells_most() -> None:
    # parser.c spells subtree.h's names hundreds of times and array.h's a few: the weights
    # gather_candidates gives already say so (AFFINITY_WEIGHTS); scaling the share again
    # (AFFINITY_SHARE) left array.h's unspelled macros nothing. C does not scale it twice.
    hub = "".join(f"void ts_subtree_op_{i:02d}(Subtree);\n" for i in range(40))
    small = "#define array_delete(a) x\n#define array_clear(a) y\n"
    index = _index({"/ts/src/subtree.h": ("c", hub), "/ts/src/array.h": ("c", small)})
    cands = [
        Candidate("/ts/src/subtree.h", 1.0, affinity=30.0),
        Candidate("/ts/src/array.h", 0.9, affinity=1.0),
    ]

    def text(language: str) -> str:
        got = assemble(cands, index.outline, Relevance(), 160, time.perf_counter() + 1, Here(None, language))
        return {s.path: s.text for s in got.snippets}.get("/ts/src/array.h", "")

    assert "array_delete" in text("c") and "array_clear" in text("c")
    assert "array_delete" not in text("python")  # elsewhere the share still follows the evidence


def test_a_c_function_declared_in_a_header_points_at_the_header_not_its_source() -> None:
    # ts_stack_push is declared in stack.h and defined in stack.c: parser.c includes the
    # header, and the source's other names are static helpers no other file can call.
    index = _index(
        {
            "/ts/src/stack.h": ("c", "void ts_stack_push(int);\n"),
            "/ts/src/stack.c": ("c", "static void helper(void) {}\nvoid ts_stack_push(int v) {}\n"),
        }
    )
    cands = _candidates("/ts/src/parser.c", "c", "", index, used=frozenset({"ts_stack_push"}))
    got = {c.path: c for c in cands}
    assert got["/ts/src/stack.h"].affinity == 1.0, [(c.path, c.affinity) for c in cands]
    source = got.get("/ts/src/stack.c")  # still a file of the same directory, no more
    assert source is None or (source.affinity == 0 and not any("defines" in r for r in source.reasons))


def test_a_c_file_weighs_nine_of_the_headers_it_includes() -> None:
    # parser.c includes fifteen headers; with eight candidates, reusable_node.h and lexer.h
    # fell past the ones whose names it spells most.
    headers = {f"/ts/src/h{i}.h": ("c", f"void h{i}_open(void);\nvoid h{i}_shut(void);\n") for i in range(12)}
    head = "".join(f'#include "./h{i}.h"\n' for i in range(12))
    index = _index(headers)
    cands = gather_candidates(
        CandidateQuery(
            path="/ts/src/parser.c",
            language="c",
            head_lines=tuple(head.splitlines()),
            open_paths=(),
            recent=[],
            index=index,
            used=frozenset(f"h{i}_open" for i in range(12)),
            defined_here=frozenset(),
            deadline=time.perf_counter() + 1,
        )
    )
    assert len(cands) == 9
