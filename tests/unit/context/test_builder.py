"""ContextEngine: budget, priorities, determinism, deadline and bad input."""

from __future__ import annotations

import random

import pytest

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.crossfile import CrossFileRanker, SourceDoc
from lsp_assist.context.long_lines import LONG_LINE_CHARS
from lsp_assist.context.mode import decide_mode
from lsp_assist.documents.store import Document, DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.languages.tuning import CrossFileTuning
from lsp_assist.structure.symbols import SymbolIndex

HEADER = "import os\nimport sys\nfrom collections import OrderedDict\n\n"


def _filler(n: int) -> str:
    return "".join(
        f"def filler_{i}(a, b):\n    value = a * {i} + b\n    return value\n\n\n" for i in range(n)
    )


def _module() -> tuple[str, Cursor]:
    text = (
        HEADER
        + "def helper_parse(text, strict=True):\n    return text.split()\n\n\n"
        + _filler(60)
        + "def target(path):\n"
        + "    data = open(path).read()\n"
        + "    words = helper_parse(data)\n"
        + "    \n"
        + "    return words\n\n\n"
        + _filler(40)
    )
    lines = text.split("\n")
    row = lines.index("    words = helper_parse(data)") + 1
    return text, Cursor(row, 4)


def _check(ctx_text: str, cursor: Cursor, prefix: str, suffix: str) -> None:
    lines = ctx_text.split("\n")
    line = lines[cursor.line]
    assert prefix.endswith(line[: cursor.character])
    assert suffix.startswith(line[cursor.character :])


@pytest.mark.parametrize("budget", [0, 50, 300, 1000, 2500, 8000])
def test_budget_and_cursor_invariants(budget: int) -> None:
    text, cursor = _module()
    ctx = ContextEngine().build_from_text(text, "python", "/p/m.py", cursor, budget)
    assert ctx.size <= budget
    if budget == 0:
        assert ctx.prefix == ctx.suffix == ""
    else:
        _check(text, cursor, ctx.prefix, ctx.suffix)
    assert sum(p.chars for p in ctx.parts) == ctx.size


def test_priorities_keep_enclosing_imports_and_referenced_signature() -> None:
    text, cursor = _module()
    ctx = ContextEngine().build_from_text(text, "python", "/p/m.py", cursor, 1200, crossfile=False)
    labels = {p.label for p in ctx.parts}
    assert "def target(path):\n    data = open(path).read()\n    words = helper_parse(data)\n" in ctx.prefix
    assert "import os" in ctx.prefix and "from collections import OrderedDict" in ctx.prefix
    assert "def helper_parse(text, strict=True):" in ctx.prefix
    assert "return text.split()" not in ctx.prefix  # the signature, not the body
    assert {"imports", "signatures"} <= labels
    assert ctx.mode == "multi" and ctx.max_tokens


def test_cut_never_mid_line_and_statement_start() -> None:
    text, cursor = _module()
    ctx = ContextEngine().build_from_text(text, "python", "/p/m.py", cursor, 700, crossfile=False)
    whole = set(text.split("\n")) | {"# ..."}
    for line in ctx.prefix.split("\n")[:-1]:
        assert line in whole
    for line in ctx.suffix.split("\n")[1:]:
        assert line in whole


def test_suffix_share_adapts_to_cursor_position() -> None:
    text, _ = _module()
    n = text.count("\n")
    near_end = ContextEngine().build_from_text(text, "python", "/p/m.py", Cursor(n - 1, 0), 2000)
    near_start = ContextEngine().build_from_text(text, "python", "/p/m.py", Cursor(0, 0), 2000)
    assert len(near_end.prefix) > len(near_end.suffix)
    assert len(near_start.suffix) > len(near_start.prefix)


def _others() -> list[Document]:
    return [
        Document(
            f"file:///p/o{i}.py",
            "python",
            1,
            f"def parse_words_{i}(data):\n    words = data.split()\n"
            f"    return [w for w in words if w]\n\nCONST_{i} = {i}\n",
            f"/p/o{i}.py",
        )
        for i in range(5)
    ]


def test_crossfile_snippets_deterministic_and_within_budget() -> None:
    text, cursor = _module()
    others = _others()
    # A generous deadline: this is about order, and a loaded CI machine must not cut one build.
    a = ContextEngine().build_from_text(
        text, "python", "/p/m.py", cursor, 3000, others=others, deadline_ms=2000
    )
    shuffled = list(others)
    random.Random(3).shuffle(shuffled)
    b = ContextEngine().build_from_text(
        text, "python", "/p/m.py", cursor, 3000, others=shuffled, deadline_ms=2000
    )
    assert a.snippets and a.snippets == b.snippets
    outlines = [s for s in a.snippets if s.reason == "outline"]
    similar = [s for s in a.snippets if s.reason == "similar"]
    assert a.snippets == tuple(outlines + similar)  # outlines first, then similar windows
    assert [s.path for s in outlines] == sorted(s.path for s in outlines)  # equal weights: by path
    assert [s.path for s in similar] == sorted(s.path for s in similar)
    assert a.size <= 3000 and a.key("fast", "m") == b.key("fast", "m")


def test_definition_from_symbol_index_reaches_the_prompt() -> None:
    index = SymbolIndex()
    index.update_file("/lib/util.py", "def far_away(x, y):\n    return x\n", "python")
    text = "from util import far_away\n\ndef g():\n    r = far_away(1, 2)\n    \n"
    ctx = ContextEngine(symbol_index=index).build_from_text(text, "python", "/p/g.py", Cursor(4, 4), 2000)
    outs = [s for s in ctx.snippets if s.reason == "outline"]
    assert outs and outs[0].text == "def far_away(x, y):" and outs[0].path == "/lib/util.py"
    index.remove_file("/lib/util.py")
    assert index.lookup("far_away") == []


def test_deadline_zero_still_answers_without_snippets_work() -> None:
    text, cursor = _module()
    ctx = ContextEngine().build_from_text(
        text, "python", "/p/m.py", cursor, 3000, others=_others(), deadline_ms=0.0
    )
    assert ctx.prefix and len(ctx.snippets) <= 1  # at most the strongest file's ready outline
    assert ctx.size <= 3000


def test_ranker_respects_deadline_and_order() -> None:
    docs = [SourceDoc(f"/d/{i}.py", f"k{i}", 1, "alpha beta gamma\n" * 40) for i in range(20)]
    ranker = CrossFileRanker()
    assert ranker.rank({"alpha", "beta"}, docs, 5000, deadline=0.0) == []
    got = ranker.rank({"alpha", "beta"}, docs, 5000)
    assert got == ranker.rank({"alpha", "beta"}, list(reversed(docs)), 5000)
    assert [(s.path) for s in got] == sorted(s.path for s in got)


BAD_INPUTS = [
    ("python", "def (:\n  ))) class [\n\tx = = 1\n  \t y\n" * 50, Cursor(30, 3)),
    (
        "javascript",
        "var a=1;" + ";".join(f"function f{i}(x){{return x+{i}}}" for i in range(3000)),
        Cursor(0, 25_000),
    ),
    ("python", "def f():\n\tif x:\n        y = 1\n\t    z = 2\n", Cursor(3, 5)),
    ("python", 'x = "inside a string"\n# a comment here\n', Cursor(0, 8)),
    ("python", 'x = "inside a string"\n# a comment here\n', Cursor(1, 5)),
    ("python", "s = '\ud800 lone \udfff' + '\ufffd\ufffd'\nt = 1\n", Cursor(0, 7)),
    ("python", "", Cursor(0, 0)),
    ("python", "", Cursor(5, 9)),
    ("go", "package main\n\x00\x01binary\xff\n", Cursor(1, 2)),
    ("cobol", "IDENTIFICATION DIVISION.\n  PROGRAM-ID. HELLO.\n", Cursor(1, 4)),
    ("rust", "fn main() {\r\n    let x = 1;\r\n    \r\n}\r\n", Cursor(2, 4)),
    ("typescriptreact", "const A = () => <div>{x}</div>;\n", Cursor(0, 22)),
]


@pytest.mark.parametrize(("lang", "text", "cursor"), BAD_INPUTS)
@pytest.mark.parametrize("budget", [200, 4000])
def test_bad_input_gives_a_sensible_prompt(lang: str, text: str, cursor: Cursor, budget: int) -> None:
    ctx = ContextEngine().build_from_text(text, lang, "/p/bad", cursor, budget)
    assert ctx.size <= budget
    doc = Document("file:///x", lang, 0, text)
    c = doc.clamp(cursor)
    line = doc.line(c.line)
    if len(line) > LONG_LINE_CHARS:  # minified: the pieces the prompt shows, cut at tokens
        assert line[: c.character].endswith(ctx.line_prefix)
        assert line[c.character :].startswith(ctx.line_suffix)
        assert ctx.prefix.endswith(ctx.line_prefix) and ctx.suffix.startswith(ctx.line_suffix)
    else:
        assert ctx.line_prefix == line[: c.character] and ctx.line_suffix == line[c.character :]
    if text and budget >= 4000 and len(text) < 4000:
        assert ctx.prefix.endswith(ctx.line_prefix) and ctx.suffix.startswith(ctx.line_suffix)


def test_minified_line_is_cut_at_token_boundaries() -> None:
    text = ";".join(f"function f{i}(x){{return x+{i}}}" for i in range(3000))
    ctx = ContextEngine().build_from_text(text, "javascript", "/p/min.js", Cursor(0, 25_000), 1000)
    assert 0 < ctx.size <= 1000
    assert text[:25_000].endswith(ctx.prefix) and text[25_000:].startswith(ctx.suffix)
    start = 25_000 - len(ctx.prefix)
    assert not (text[start - 1].isalnum() and text[start].isalnum())
    end = 25_000 + len(ctx.suffix)
    assert not (text[end - 1].isalnum() and text[end].isalnum())


def test_cursor_in_string_or_comment_is_single_line() -> None:
    text = 'x = "inside a string"\n# a comment here\nif y:\n'
    eng = ContextEngine()
    assert eng.build_from_text(text, "python", "/p/s.py", Cursor(0, 8), 1000).mode == "single"
    assert eng.build_from_text(text, "python", "/p/s.py", Cursor(1, 16), 1000).mode == "single"
    assert eng.build_from_text(text, "python", "/p/s.py", Cursor(2, 5), 1000).mode == "multi"


@pytest.mark.parametrize(
    ("prefix", "suffix", "prev", "nxt", "mode"),
    [
        ("    x = foo(", ")", None, None, "single"),
        ("    x = ", " + 1", None, None, "single"),
        ("def f():", "", None, None, "multi"),
        ("function f() {", "}", None, None, "multi"),
        ("    ", "", "def f():", None, "multi"),
        ("    return x", "", None, None, "single"),
    ],
)
def test_decide_mode(prefix: str, suffix: str, prev: str | None, nxt: str | None, mode: str) -> None:
    got = decide_mode("python", prefix, suffix, prev, nxt)
    assert got.mode == mode
    assert ("\n" in got.stop) == (mode == "single")


def test_symbol_index_follows_edits_lazily() -> None:
    # The on_change hook only notes the change; a request in another document (or the
    # document closing) brings the index up to date before definitions are looked up.
    store = DocumentStore()
    engine = ContextEngine()
    store.on_change.append(engine.index_document)
    store.on_close.append(engine.forget_document)
    lib = store.open("file:///p/lib.py", "python", 1, "def old_name(a):\n    return a\n", "/p/lib.py")
    user = store.open("file:///p/user.py", "python", 1, "def g():\n    new_name(1)\n    \n", "/p/user.py")
    store.change(lib.uri, 2, [TextChange(Cursor(0, 4), Cursor(0, 12), "new_name")])
    assert engine.symbols.lookup("new_name") == []  # nothing parsed on the keystroke
    ctx = engine.build(user, Cursor(2, 4), 2000, others=[lib])
    assert [s.name for s in engine.symbols.lookup("new_name")] == ["new_name"]
    assert engine.symbols.lookup("old_name") == []
    assert any(s.reason == "outline" and s.text.startswith("def new_name") for s in ctx.snippets)
    store.change(lib.uri, 3, [TextChange(Cursor(0, 4), Cursor(0, 12), "renamed_")])
    store.close(lib.uri)
    assert [s.name for s in engine.symbols.lookup("renamed_")] == ["renamed_"]


def test_javadoc_of_other_methods_is_stepped_over_like_a_docstring() -> None:
    doc = "    /**\n" + "".join(f"     * prose line {i} about the method\n" for i in range(12)) + "     */\n"
    methods = "".join(f"{doc}    int far{i}(int x) {{ return x + {i}; }}\n\n" for i in range(30))
    text = "class Big {\n" + methods + "    int here(int y) {\n        \n    }\n}\n"
    row = text.split("\n").index("    int here(int y) {") + 1
    ctx = ContextEngine().build_from_text(text, "java", "/p/Big.java", Cursor(row, 8), 1500)
    # The marker replaces the comments, so more methods fit in the same budget.
    assert ctx.prefix.count("prose line") <= 12 and "// ..." in ctx.prefix  # one javadoc at most
    assert sum(f"int far{i}(" in ctx.prefix for i in range(30)) >= 8


def test_imports_naming_nothing_near_the_cursor_take_a_small_share() -> None:
    imports = "".join(f"import java.util.concurrent.atomic.AtomicThing{i};\n" for i in range(40))
    body = "".join(f"    int field{i} = {i};\n" for i in range(200))
    text = (
        "package p;\n\nimport java.util.concurrent.locks.ReentrantLock;\n"
        + imports
        + "\nclass Box {\n"
        + body
        + "    void run() {\n        ReentrantLock lock = new ReentrantLock();\n        \n    }\n}\n"
    )
    row = text.split("\n").index("        ReentrantLock lock = new ReentrantLock();") + 1
    ctx = ContextEngine().build_from_text(text, "java", "/p/Box.java", Cursor(row, 8), 4000, crossfile=False)
    assert "import java.util.concurrent.locks.ReentrantLock;" in ctx.prefix  # names the code here
    chars = {p.label: p.chars for p in ctx.parts}["imports"]
    assert chars < 4000 * 0.1  # not the 800 characters (20%) the unused 40 may have had
    assert "AtomicThing0;" in ctx.prefix  # the first ones still fit in the small share


def test_typing_that_leaves_the_cross_file_share_as_it_is_reuses_the_cross_file_text() -> None:
    """The cross-file text is cached by what it depends on: the share, not the file's length
    (a long file's share is 25% whatever its length; keyed by length in steps of 128
    characters, every 128th keystroke gathered and ranked other files again)."""
    store = DocumentStore()
    engine = ContextEngine()
    store.on_change.append(engine.index_document)
    lib = store.open(
        "file:///p/lib.py",
        "python",
        1,
        "class Store:\n    def fetch(self, key):\n        return key\n",
        "/p/lib.py",
    )
    text, cursor = _module()
    doc = store.open("file:///p/user.py", "python", 1, "from .lib import Store\n" + text, "/p/user.py")
    row = cursor.line + 1
    first = engine.build(doc, Cursor(row, 4), 2000, others=[lib], deadline_ms=10_000)
    cached = engine._cross_cache
    assert cached is not None and first.snippets
    typed = "s" * 130  # one edit on the cursor row (no row around it changes): the same share
    store.change(doc.uri, 2, [TextChange(Cursor(row, 4), Cursor(row, 4), typed)])
    again = engine.build(doc, Cursor(row, 4 + len(typed)), 2000, others=[lib], deadline_ms=10_000)
    assert engine._cross_cache is cached
    assert again.snippets == first.snippets


def test_prepare_reads_the_symbols_before_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """`prepare` (run while the request's debounce timer waits) re-parses and scans the
    symbols at the cursor's row, so the build after it walks no definition again."""
    from lsp_assist.documents.store import DocumentStore, TextChange
    from lsp_assist.structure import symbols as symbols_module

    text = "".join(f"def f{i}(a):\n    return a\n\n" for i in range(40))
    store = DocumentStore()
    engine = ContextEngine()
    store.on_change.append(engine.index_document)
    doc = store.open("file:///p/m.py", "python", 1, text, "/p/m.py")
    engine.build(doc, Cursor(4, 12), 2000)
    store.change(doc.uri, 2, [TextChange(Cursor(4, 12), Cursor(4, 12), "b")])
    store.change(doc.uri, 3, [TextChange(Cursor(70, 12), Cursor(70, 12), "b")])  # a second row: a scan
    engine.prepare(doc, Cursor(70, 13))
    walks: list[int] = []
    real = symbols_module._extract_top

    def counting(*args: object, **kwargs: object) -> object:
        walks.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(symbols_module, "_extract_top", counting)
    ctx = engine.build(doc, Cursor(70, 13), 2000)
    assert walks == [] and ctx.prefix.endswith("return ab")


def test_prepare_gathers_the_other_files_the_build_then_reuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Given the build's budget and other files, `prepare` runs the cross-file step (the
    first request in another function gathers and ranks outlines, 2-4 ms), so the build
    after the debounce finds its result and gathers nothing."""
    from lsp_assist.context.sources import other_files as other_files_module

    other = Document(
        "file:///p/shapes.py",
        "python",
        1,
        "class Box:\n    def area(self):\n        return 1\n",
        "/p/shapes.py",
    )
    text = "from shapes import Box\n\n" + "".join(
        f"def f{i}(b):\n    box = Box()\n    return box\n\n" for i in range(20)
    )
    doc = Document("file:///p/m.py", "python", 1, text, "/p/m.py")
    engine = ContextEngine()
    engine.index_document(other)
    engine.index_document(doc)
    cursor = Cursor(40, 4)
    calls: list[int] = []
    real = other_files_module.gather_candidates

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(other_files_module, "gather_candidates", counting)
    engine.prepare(doc, cursor, 4000, others=[other], deadline_ms=10_000)
    assert calls == [1]
    ctx = engine.build(doc, cursor, 4000, others=[other], deadline_ms=10_000)
    assert calls == [1]  # the prepared result
    assert any("area" in snip.text for snip in ctx.snippets)


def test_an_open_c_header_is_outlined_as_the_index_reads_it() -> None:
    """VS Code opens a `.h` as "c"; the index reads headers with C++'s grammar (it reads C
    headers too, and C's reads no class or namespace). The open header's outline must be
    the one its indexed copy has, not the C grammar's error (no entries)."""
    header = (
        "#pragma once\n"
        "namespace geo {\n"
        "class Shape {\n"
        " public:\n"
        "  double area_in_square_meters() const;\n"
        "  int corner_count;\n"
        "};\n"
        "}  // namespace geo\n"
    )
    engine = ContextEngine()
    doc = Document("file:///w/src/shape.h", "c", 1, header, "/w/src/shape.h")
    engine.index_document(doc)
    outline = engine.symbols.outline("/w/src/shape.h")
    assert outline is not None
    names = {e.name for e in outline.entries}
    assert {"Shape", "area_in_square_meters", "corner_count"} <= names
    assert "Shape" in {s.name for s in engine.symbols.symbols("/w/src/shape.h")}
    # A C source stays C.
    source = Document("file:///w/src/main.c", "c", 1, "int twice(int x) { return 2 * x; }\n", "/w/src/main.c")
    engine.index_document(source)
    main_outline = engine.symbols.outline("/w/src/main.c")
    assert main_outline is not None and main_outline.language == "c"


def test_a_c_headers_name_whose_words_the_rows_around_the_cursor_spell_ranks_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A C header's names share one prefix (`ts_language_*`), so their family says nothing of
    which one a line needs; the words after it do: under a `field_map` variable the line
    needs `ts_language_field_map`, not its thirty siblings."""
    import lsp_assist.context.sources.other_files as other_files_module

    words = ["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st"]
    decls = [f"int ts_language_{a}_{b}(const TSLanguage *self);\n" for a in words[:6] for b in words[6:]]
    header = "#pragma once\n" + "".join(decls[:12]) + "void ts_language_field_map(const TSLanguage *self);\n"
    header += "".join(decls[12:])
    text = (
        '#include "language.h"\n\n'
        "static void read_fields(const TSLanguage *language) {\n"
        "  const TSFieldMapEntry *field_map, *field_map_end;\n"
        "  \n"
        "}\n"
    )

    def outline_text() -> str:
        index = SymbolIndex()
        index.update_file("/w/src/language.h", header, "c")
        ctx = ContextEngine(symbol_index=index).build_from_text(
            text, "c", "/w/src/query.c", Cursor(4, 2), 700
        )
        return "\n".join(s.text for s in ctx.snippets if s.reason == "outline")

    assert "ts_language_field_map" in outline_text()
    monkeypatch.setattr(other_files_module, "tuning_for", lambda _lang: CrossFileTuning())  # near_words off
    got = outline_text()
    assert "ts_language_" in got and "ts_language_field_map" not in got  # before: a sibling
