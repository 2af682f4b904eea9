"""Symbol extraction per language and the incremental per-document cache."""

from __future__ import annotations

import random

import pytest

from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.structure.symbols import SymbolIndex, TreeSymbolCache, extract_symbols, parse_text

SOURCES = {
    "python": (
        "import os\n\nclass A(B):\n    def m(self, x):\n        return x\n\ndef f(a):\n    pass\nX = 1\n",
        {("A", "class"), ("m", "method"), ("f", "function"), ("X", "variable")},
    ),
    "javascript": (
        "class A {\n  m(x) { return x; }\n}\nexport function f(a) {}\nconst g = () => 1;\n",
        {("A", "class"), ("m", "method"), ("f", "function"), ("g", "variable")},
    ),
    "typescript": (
        "interface I { a: number }\nexport class C { m(): void {} }\ntype T = string;\n",
        {("I", "type"), ("C", "class"), ("m", "method"), ("T", "type")},
    ),
    "go": (
        "package m\ntype S struct{ a int }\nfunc (s *S) M() int { return 1 }\nfunc F() {}\n",
        {("S", "type"), ("M", "method"), ("F", "function")},
    ),
    "rust": (
        "struct P { x: i32 }\nimpl P {\n    fn new() -> Self { P { x: 0 } }\n}\nfn main() {}\n",
        {("P", "class"), ("new", "method"), ("main", "function")},
    ),
    "java": ("class A {\n  void m(int a) {}\n}\n", {("A", "class"), ("m", "method")}),
    "c": ("struct S { int a; };\nint f(int a) { return a; }\n", {("S", "class"), ("f", "function")}),
    "cpp": ("namespace n { class A { void m(); }; }\n", {("n", "module"), ("A", "class")}),
}


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_extract(lang: str) -> None:
    text, expected = SOURCES[lang]
    parsed = parse_text(text, lang)
    assert parsed is not None
    got = {(s.name, s.kind) for s in extract_symbols(parsed[0], parsed[1], lang, "f")}
    assert expected <= got


def test_signature_has_no_body() -> None:
    parsed = parse_text("def f(a,\n      b) -> int:\n    return a\n", "python")
    assert parsed is not None
    (sym,) = extract_symbols(parsed[0], parsed[1], "python", "f")
    assert sym.signature == "def f(a,\n      b) -> int:" and (sym.sig_start_row, sym.sig_end_row) == (0, 1)


def test_cache_matches_full_extraction_after_edits() -> None:
    text = "".join(f"def f{i}(a):\n    return a\n\n" for i in range(30))
    store = DocumentStore()
    doc = store.open("file:///c.py", "python", 1, text)
    cache = TreeSymbolCache("python", "c.py")
    tree = doc.tree()
    assert tree is not None
    cache.find(tree, doc.data())
    store.change(doc.uri, 2, [TextChange(Cursor(10, 0), Cursor(10, 0), "def inserted(b):\n    pass\n\n")])
    store.change(doc.uri, 3, [TextChange(Cursor(0, 4), Cursor(0, 6), "renamed")])
    tree = doc.tree()
    assert tree is not None
    assert cache.find(tree, doc.data()) == extract_symbols(tree, doc.data(), "python", "c.py")
    assert [s.name for s in cache.find(tree, doc.data(), {"inserted"})] == ["inserted"]


@pytest.mark.parametrize("seed", range(8))
def test_tracked_cache_matches_full_extraction_after_random_edits(seed: int) -> None:
    # The cache replays the document's byte edits (and the ranges whose syntax changed) to
    # keep the groups of untouched nodes; after every kind of edit (inside a name, across
    # lines, unbalanced quotes and brackets, a full replacement) it must agree with a fresh
    # extraction.
    rng = random.Random(seed)
    text = "".join(
        f"def f{i}(a):\n    return a\n\nclass C{i}:\n    x{i} = 1\n    def m(self): pass\n\n"
        for i in range(15)
    )
    store = DocumentStore()
    doc = store.open("file:///t.py", "python", 1, text)
    cache = TreeSymbolCache("python", "t.py")
    pieces = [
        "x",
        "\n",
        "def g(b):\n    pass\n",
        "",
        ":",
        "é",
        "    ",
        "\n\nclass D:\n",
        '"""',
        "(",
        ")",
        "'",
    ]
    for version in range(2, 120):
        if version == 60:
            store.change(doc.uri, version, [TextChange(None, None, doc.text)])
        else:
            row = rng.randrange(doc.line_count)
            col = rng.randrange(len(doc.line(row)) + 1)
            end = Cursor(row + rng.choice([0, 0, 0, 1, 2]), rng.randrange(4))
            store.change(doc.uri, version, [TextChange(Cursor(row, col), end, rng.choice(pieces))])
        if rng.random() < 0.5:
            continue  # several edits between two scans
        cache.track(doc.syntax)
        tree = doc.tree()
        assert tree is not None
        assert cache.find(tree, doc.data()) == extract_symbols(tree, doc.data(), "python", "t.py")


def test_typing_on_one_row_reuses_the_last_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    # A request while the user types along one row: no line added or removed, so every
    # symbol's rows hold and the walk (a whole big class per keystroke) is not redone.
    from lsp_assist.structure import symbols as symbols_module

    walks: list[int] = []
    counting_on = [False]  # only the cache's walks count, not the fresh extraction's
    real = symbols_module._extract_top

    def counting(*args: object, **kwargs: object) -> object:
        if counting_on[0]:
            walks.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    text = "".join(f"def f{i}(a):\n    return a\n\n" for i in range(30))
    store = DocumentStore()
    doc = store.open("file:///t.py", "python", 1, text)
    cache = TreeSymbolCache("python", "t.py")

    def find(names: set[str] | None, row: int) -> list[object]:
        cache.track(doc.syntax)
        tree = doc.tree()
        assert tree is not None
        counting_on[0] = True
        try:
            return list(cache.find(tree, doc.data(), names, typing_row=row))
        finally:
            counting_on[0] = False

    def fresh(names: set[str] | None = None) -> list[object]:
        tree = doc.tree()
        assert tree is not None
        got = extract_symbols(tree, doc.data(), "python", "t.py")
        return [s for s in got if names is None or s.name in names]

    find(None, 4)  # the first scan
    monkeypatch.setattr(symbols_module, "_extract_top", counting)
    version = 1
    for ch in "abc":  # typing at the end of `    return a` on row 4
        version += 1
        col = len(doc.line(4))
        store.change(doc.uri, version, [TextChange(Cursor(4, col), Cursor(4, col), ch)])
        assert find({"f1", "f20"}, 4) == fresh({"f1", "f20"})
    assert walks == []
    # An unclosed bracket on the typed row: the definitions below it are kept.
    version += 1
    store.change(doc.uri, version, [TextChange(Cursor(4, 4), Cursor(4, 4), "(")])
    assert [s.name for s in find({"f29"}, 4)] == ["f29"]  # type: ignore[attr-defined]
    assert walks == []
    # An edit on another row scans again (replaying every edit since the last scan) ...
    version += 1
    store.change(doc.uri, version, [TextChange(Cursor(4, 4), Cursor(4, 5), "")])
    version += 1
    store.change(doc.uri, version, [TextChange(Cursor(31, 4), Cursor(31, 4), "x")])
    assert find(None, 31) == fresh()
    assert walks
    # ... and so does a line added on the typed row.
    walks.clear()
    version += 1
    store.change(doc.uri, version, [TextChange(Cursor(31, 5), Cursor(31, 5), "\ndef g():\n    pass")])
    assert find(None, 31) == fresh()
    assert walks and "g" in [s.name for s in find({"g"}, 31)]  # type: ignore[attr-defined]


def test_keystrokes_of_one_word_replay_as_one_edit() -> None:
    # The groups are moved once per coalesced edit: a word typed a character at a time
    # (each one inside the text the previous one wrote) is one edit, and the symbols after
    # replaying it still agree with a fresh extraction.
    from lsp_assist.structure.symbols import _coalesce

    text = "".join(f"def f{i}(a):\n    return a\n\n" for i in range(20))
    store = DocumentStore()
    doc = store.open("file:///w.py", "python", 1, text)
    cache = TreeSymbolCache("python", "w.py")
    cache.track(doc.syntax)
    tree = doc.tree()
    assert tree is not None and doc.syntax is not None
    cache.find(tree, doc.data())
    start = doc.syntax.generation
    for version, ch in enumerate("value", 2):
        col = len(doc.line(4))
        store.change(doc.uri, version, [TextChange(Cursor(4, col), Cursor(4, col), ch)])
    store.change(doc.uri, 7, [TextChange(Cursor(4, 13), Cursor(4, 15), "")])  # a deletion inside it
    edits = doc.syntax.edits_since(start)
    assert edits is not None and len(edits) == 6 and len(_coalesce(edits)) == 1
    store.change(doc.uri, 8, [TextChange(Cursor(40, 0), Cursor(40, 0), "\n")])  # elsewhere: its own
    edits = doc.syntax.edits_since(start)
    assert edits is not None and len(_coalesce(edits)) == 2
    tree = doc.tree()
    assert tree is not None
    assert cache.find(tree, doc.data()) == extract_symbols(tree, doc.data(), "python", "w.py")


def test_index_lookup_is_sorted_and_updates() -> None:
    index = SymbolIndex()
    index.update_file("/b.py", "def f():\n    pass\n", "python")
    index.update_file("/a.py", "def f():\n    pass\n", "python")
    assert [s.path for s in index.lookup("f")] == ["/a.py", "/b.py"]
    index.update_file("/a.py", "def g():\n    pass\n", "python")
    assert [s.path for s in index.lookup("f")] == ["/b.py"]
    index.update_file("/x.txt", "whatever", "plaintext")
    assert index.symbols("/x.txt") == []


def test_the_index_never_holds_a_file_its_boundary_refuses() -> None:
    from lsp_assist.structure.symbols import SymbolIndex

    index = SymbolIndex()
    index.update_file("/ws/open.py", "def shown(): pass\n", "python")
    index.update_file("/ws/secret/keys.py", "def hidden(): pass\n", "python")
    assert index.has_path("/ws/secret/keys.py")
    index.admits = lambda path: "/secret/" not in path
    assert index.purge() == 1  # what it held before the boundary changed is dropped
    assert not index.has_path("/ws/secret/keys.py") and index.lookup("hidden") == []
    index.update_file("/ws/secret/keys.py", "def hidden(): pass\n", "python")  # offered again
    assert not index.has_path("/ws/secret/keys.py") and index.outline("/ws/secret/keys.py") is None
    assert [s.name for s in index.lookup("shown")] == ["shown"]
