"""Outlines per language: what each grammar's rules (data) pick, and how entries render."""

from __future__ import annotations

import pytest

from lsp_assist.context.outline_rank import OutlinePick, Relevance, rank_entries, render
from lsp_assist.structure.outline import (
    RULES,
    FileOutline,
    entries_from_rows,
    entries_to_rows,
    outline_from_text,
)

SOURCES: dict[str, tuple[str, str, dict[str, str], list[str]]] = {
    # language: (path, text, {name: kind that must be found}, lines the full render must hold)
    "python": (
        "/p/a.py",
        "import os\nMAX_SIZE = 10\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = 2\n"
        "class Loop(Base):\n    timeout: float = 1.0\n    def __init__(self, loop, *, debug=False):\n"
        "        self._loop = loop\n        self.debug: bool = debug\n"
        "    @property\n    def running(self) -> bool:\n        return True\n"
        "def helper(a, b=2) -> int:\n    return a\n",
        {
            "MAX_SIZE": "constant",
            "Color": "class",
            "RED": "field",
            "Loop": "class",
            "timeout": "field",
            "_loop": "attribute",
            "debug": "attribute",
            "running": "method",
            "helper": "function",
        },
        ["def helper(a, b=2) -> int:", "    def running(self) -> bool:", "    self._loop = loop"],
    ),
    "javascript": (
        "/p/a.js",
        "import { x } from './b';\nexport const LIMIT = 5;\nexport class Box extends Base {\n  width = 1;\n"
        "  constructor(w) { super(); this.height = w; }\n  resize(factor) { return this; }\n}\n"
        "export function make(w) { return new Box(w); }\n",
        {"LIMIT": "constant", "Box": "class", "width": "field", "height": "attribute", "resize": "method"},
        ["function make(w)", "    resize(factor)", "class Box extends Base"],
    ),
    "typescript": (
        "/p/a.ts",
        "export enum Kind { A, B = 2 }\nexport interface Shape { area(): number; name: string }\n"
        "export type Id = string | number;\nexport class Box {\n  width: number = 1;\n"
        "  resize(factor: number): Box { return this; }\n}\n"
        "export function make(w: number): Box { return new Box(w); }\n",
        {
            "Kind": "enum",
            "A": "member",
            "B": "member",
            "Shape": "type",
            "area": "method",
            "Id": "type",
            "width": "field",
        },
        ["function make(w: number): Box", "    resize(factor: number): Box", "type Id = string | number;"],
    ),
    "go": (
        "/p/a.go",
        "package shapes\nconst Pi = 3.14\ntype Point struct {\n\tX, Y int\n\tLabel string\n}\n"
        "type Shape interface {\n\tArea() float64\n}\n"
        "func (p *Point) Move(dx int) error { return nil }\nfunc New(x int) *Point { return nil }\n",
        {
            "Pi": "constant",
            "Point": "type",
            "Label": "field",
            "Shape": "type",
            "Area": "method",
            "Move": "method",
        },
        ["func (p *Point) Move(dx int) error", "type Shape interface", "type Point struct"],
    ),
    "rust": (
        "/p/a.rs",
        "use std::fmt;\npub const MAX: usize = 4;\npub struct Point { pub x: i32, y: i32 }\n"
        "pub enum Shape { Circle(f64), Square { side: f64 } }\n"
        "impl Point {\n    pub fn new(x: i32) -> Self { Point { x, y: 0 } }\n}\n"
        "pub trait Draw { fn draw(&self); }\npub fn area(s: &Shape) -> f64 { 0.0 }\n",
        {
            "MAX": "constant",
            "Point": "class",
            "x": "field",
            "Circle": "member",
            "new": "method",
            "draw": "method",
        },
        ["pub fn area(s: &Shape) -> f64", "impl Point", "    pub fn new(x: i32) -> Self"],
    ),
    "java": (
        "/p/Box.java",
        "package a.b;\npublic class Box {\n    public static final int MAX = 3;\n    private int width;\n"
        "    public Box(int w) { width = w; }\n    public int area() { return width; }\n"
        "    enum Kind { SMALL, LARGE }\n}\n",
        {
            "Box": "class",
            "MAX": "field",
            "width": "field",
            "area": "method",
            "Kind": "enum",
            "SMALL": "member",
        },
        ["public class Box", "    public int area()", "        // SMALL,LARGE"],
    ),
    "c": (
        "/p/a.c",
        '#include "a.h"\n#define LIMIT 4\nstruct point { int x; int y; };\nenum color { RED, GREEN };\n'
        "typedef struct { int w; } box_t;\nint area(const box_t *b);\nstatic int counter = 0;\n"
        "int area(const box_t *b) { return b->w; }\n",
        {
            "LIMIT": "constant",
            "point": "class",
            "x": "field",
            "RED": "member",
            "box_t": "type",
            "area": "function",
        },
        ["struct point", "typedef struct box_t", "int area(const box_t *b);"],
    ),
    "cpp": (
        "/p/a.cpp",
        "#include <vector>\nnamespace geo {\nclass Shape {\n public:\n  virtual double area() const = 0;\n"
        "  int id;\n  Shape(int i) : id(i) {}\n};\n}\n",
        {"geo": "module", "Shape": "class", "area": "method", "id": "field"},
        ["namespace geo", "    class Shape", "        virtual double area() const = 0;"],
    ),
}


def test_every_grammar_has_rules_and_a_case() -> None:
    assert set(SOURCES) <= set(RULES)
    assert {"python", "javascript", "typescript", "go", "rust", "java", "c", "cpp"} <= set(SOURCES)


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_outline_per_language(language: str) -> None:
    path, text, want, lines = SOURCES[language]
    outline = outline_from_text(text, language, path)
    found = {(e.name, e.kind) for e in outline.entries}
    for name, kind in want.items():
        assert (name, kind) in found, (name, kind, sorted(found))
    pick = OutlinePick(outline)
    for i, e in enumerate(outline.entries):
        if e.kind in ("member",):
            pick.add_short(i)
        else:
            pick.add_full(i)
    text_out = pick.text()
    assert len(text_out) == pick.cost  # the budget sees exactly what is sent
    for line in lines:
        assert line in text_out.split("\n"), (line, text_out)
    # No bodies: an outline holds signatures, never the statements inside functions.
    assert "return" not in text_out


def test_names_go_on_one_line_per_container_and_under_a_header_once_it_is_shown() -> None:
    path, text, _, _ = SOURCES["python"]
    outline = outline_from_text(text, "python", path)
    idx = {e.name: i for i, e in enumerate(outline.entries)}
    pick = OutlinePick(outline)
    pick.add_short(idx["running"])
    pick.add_short(idx["_loop"])
    pick.add_full(idx["helper"])
    pick.add_short(idx["MAX_SIZE"])
    out = pick.text()
    # Names only: no class header (it would cost more than the names), in file order.
    assert out == "# Loop: _loop,running\ndef helper(a, b=2) -> int:\n# MAX_SIZE"
    assert pick.cost == len(out)
    pick.add_full(idx["__init__"])  # a member shown whole brings its header; the names follow it
    out = pick.text()
    assert out == (
        "class Loop(Base):\n    def __init__(self, loop, *, debug=False):\n    # _loop,running\n"
        "def helper(a, b=2) -> int:\n# MAX_SIZE"
    )
    assert pick.cost == len(out)
    assert render(outline, [idx["helper"]]) == "def helper(a, b=2) -> int:"


def test_nested_containers_name_their_chain() -> None:
    text = "class A:\n    class B:\n        def m(self):\n            pass\n        def n(self): pass\n"
    outline = outline_from_text(text, "python", "/p/n.py")
    idx = {e.name: i for i, e in enumerate(outline.entries)}
    pick = OutlinePick(outline)
    pick.add_short(idx["m"])
    pick.add_short(idx["n"])
    assert pick.text() == "# A.B: m,n" and pick.cost == len(pick.text())
    pick.add_full(idx["A"])
    assert pick.text() == "class A:\n    # B: m,n" and pick.cost == len(pick.text())


def test_ranking_prefers_unspelled_names_and_members_of_used_classes() -> None:
    path, text, _, _ = SOURCES["python"]
    outline = outline_from_text(text, "python", path)
    idx = {e.name: i for i, e in enumerate(outline.entries)}
    rel = Relevance(
        used=frozenset({"Loop"}), imported=frozenset({"helper"}), mentioned=frozenset({"Loop", "RED"})
    )
    s = rank_entries(outline, rel)
    assert s[idx["helper"]] > s[idx["Loop"]] > s[idx["running"]] > s[idx["MAX_SIZE"]] > s[idx["RED"]]
    assert s[idx["GREEN"]] < s[idx["running"]]  # a member of a class nobody near uses


def test_python_name_mangled_members_are_not_sent() -> None:
    """`self.__x` is `_Owner__x` outside its class: no other file can spell `__x`."""
    text = "class Owner:\n    def __init__(self):\n        self.__secret = 1\n        self.shown = 2\n"
    text += "    def __helper(self):\n        pass\n\n__version = 3\n"
    outline = outline_from_text(text, "python", "/p/o.py")
    idx = {e.name: i for i, e in enumerate(outline.entries)}
    s = rank_entries(outline, Relevance(used=frozenset({"Owner"})))
    assert s[idx["__secret"]] == 0.0 and s[idx["__helper"]] == 0.0
    assert s[idx["shown"]] > 0 and s[idx["__version"]] > 0  # a module's `__x` is not mangled


def test_rows_round_trip_and_long_signatures_cut_at_a_token() -> None:
    long_sig = "def f(" + ", ".join(f"argument_{i}=None" for i in range(30)) + "):\n    pass\n"
    outline = outline_from_text(long_sig, "python", "/p/l.py")
    (entry,) = outline.entries
    assert len(entry.text) <= 150 and entry.text.endswith(" ...")
    assert entries_from_rows(entries_to_rows(outline.entries)) == outline.entries
    assert FileOutline("/x", "python", ()).names() == frozenset()


def test_unknown_language_and_broken_code_do_not_raise() -> None:
    assert outline_from_text("whatever", "plaintext", "/p/x.txt").entries == ()
    broken = outline_from_text("class (:\n  def ]]]\nx = = 1\n" * 30, "python", "/p/b.py")
    assert isinstance(broken.entries, tuple)


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_every_truncation_of_the_samples_outlines_without_raising(language: str) -> None:
    path, text, _, _ = SOURCES[language]
    for end in range(0, len(text), 3):  # half-typed code: empty bodies, error nodes
        outline = outline_from_text(text[:end], language, path)
        pick = OutlinePick(outline)
        for i in range(len(outline.entries)):
            pick.add_short(i) if i % 2 else pick.add_full(i)
        assert len(pick.text()) == pick.cost


def test_private_java_members_and_dunders_are_not_offered_to_other_files() -> None:
    text = (
        "public class Box {\n  private int secret;\n  public int width;\n"
        "  private static class Inner { int deep; }\n  public void grow(int n) {}\n}\n"
    )
    outline = outline_from_text(text, "java", "/p/Box.java")
    idx = {e.name: i for i, e in enumerate(outline.entries)}
    s = rank_entries(outline, Relevance(used=frozenset({"Box"})))
    assert s[idx["secret"]] == 0 and s[idx["Inner"]] == 0 and s[idx["deep"]] == 0
    assert s[idx["width"]] > 0 and s[idx["grow"]] > 0
    py = outline_from_text(SOURCES["python"][1], "python", "/p/a.py")
    pidx = {e.name: i for i, e in enumerate(py.entries)}
    ps = rank_entries(py, Relevance())
    assert ps[pidx["__init__"]] == 0 and ps[pidx["running"]] > 0  # no one calls __init__ by name
    ps = rank_entries(py, Relevance(used=frozenset({"Loop"})))
    assert ps[pidx["__init__"]] > 0  # ... but `Loop(...)` wants its arguments


def test_an_attribute_its_class_also_defines_as_a_member_is_listed_once() -> None:
    text = (
        "class Encoder:\n    def __init__(self, default=None):\n        self.default = default\n"
        "        self.indent = 2\n    def default(self, o):\n        raise TypeError(o)\n"
        "class Other:\n    def run(self):\n        self.default = 1\n"
    )
    outline = outline_from_text(text, "python", "/p/enc.py")
    members = [(outline.entries[e.owner].name, e.name, e.kind) for e in outline.entries if e.owner >= 0]
    assert members == [
        ("Encoder", "__init__", "method"),
        ("Encoder", "indent", "attribute"),
        ("Encoder", "default", "method"),
        ("Other", "run", "method"),
        ("Other", "default", "attribute"),  # another class's attribute of that name stays
    ]
    pick = OutlinePick(outline)
    for i in range(len(outline.entries)):
        pick.add_short(i)
    assert pick.text().count("default") == 2
    assert len(pick.text()) == pick.cost


def test_rust_test_modules_are_not_offered_to_other_files() -> None:
    # `#[cfg(test)] mod tests { ... }` is compiled only for the crate's own tests: nothing
    # in it can be a name another file needs, and its test functions took outline room.
    text = (
        "pub struct Flags { bits: u32 }\nimpl Flags {\n    pub fn set(&mut self, b: u32) {}\n}\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn setting() {}\n}\n"
        "#[cfg(test)]\nmod test {\n    fn unset_setting() {}\n}\n"
        "pub mod testing {\n    pub fn helper() {}\n}\n"
    )
    outline = outline_from_text(text, "rust", "/p/flags.rs")
    idx = {e.name: i for i, e in enumerate(outline.entries)}
    s = rank_entries(outline, Relevance(used=frozenset({"Flags"})))
    assert s[idx["tests"]] == 0 and s[idx["setting"]] == 0 and s[idx["unset_setting"]] == 0
    assert s[idx["set"]] > 0 and s[idx["helper"]] > 0 and s[idx["testing"]] > 0


def test_typescript_constructor_parameter_properties_are_members() -> None:
    # `constructor(protected scheduler: S)` declares the field `scheduler` (TypeScript's
    # parameter properties): `this.scheduler` / `action.scheduler` elsewhere need it.
    text = (
        "export class AsyncAction<T> extends Action<T> {\n  public delay: number;\n"
        "  constructor(protected scheduler: AsyncScheduler, readonly work: () => void,\n"
        "              private secret?: string, plain: number = 1) {\n    super(scheduler, work);\n  }\n"
        "  execute(state: T): any {\n    return null;\n  }\n}\n"
    )
    outline = outline_from_text(text, "typescript", "/p/AsyncAction.ts")
    by_name = {e.name: (i, e) for i, e in enumerate(outline.entries)}
    owner = {e.name: outline.entries[e.owner].name if e.owner >= 0 else None for e in outline.entries}
    assert owner["scheduler"] == "AsyncAction" and by_name["scheduler"][1].kind == "field"
    assert by_name["scheduler"][1].text == "protected scheduler: AsyncScheduler"
    assert owner["work"] == "AsyncAction" and "plain" not in by_name
    s = rank_entries(outline, Relevance(used=frozenset({"AsyncAction"})))
    assert s[by_name["secret"][0]] == 0 and s[by_name["work"][0]] > 0  # private stays in its class
    lines = render(outline, range(len(outline.entries))).split("\n")
    assert "    protected scheduler: AsyncScheduler" in lines


def test_javascript_members_assigned_at_top_level_are_outlined() -> None:
    # CommonJS modules (express, most of npm) define their API by assignment, not by
    # declaration: `req.accepts = function () {...}`, `exports.parse = parse`.
    text = (
        "var req = Object.create(http.IncomingMessage.prototype)\nmodule.exports = req\n"
        "req.get =\nreq.header = function header(name) {\n  return this.headers[name];\n};\n"
        "req.accepts = function(){\n  return accepts(this);\n};\n"
        "exports.compileETag = function(val) {\n  return val;\n};\n"
        "Route.prototype.dispatch = function dispatch(req, res, done) {\n  done();\n};\n"
        "app.enabled = true;\nfoo();\nx = 3;\n"
    )
    outline = outline_from_text(text, "javascript", "/p/request.js")
    names = [e.name for e in outline.entries]
    assert names == ["req", "get", "accepts", "compileETag", "dispatch", "enabled"], names
    lines = render(outline, range(len(outline.entries))).split("\n")
    assert "req.accepts = function(){ ..." in lines and "exports.compileETag = function(val) { ..." in lines
    assert "return" not in "\n".join(lines)


def test_cpp_anonymous_namespaces_are_looked_through_and_forward_declarations_give_way() -> None:
    # A .cc file keeps its classes in `namespace { ... }` (no name: it used to hide them
    # all), and a header declares `class InternalKey;` before defining it (the declaration
    # used to be the only entry, without any member).
    text = (
        "namespace leveldb {\nclass InternalKey;\nnamespace {\n"
        "class PosixWritableFile : public WritableFile {\n public:\n"
        "  virtual Status Append(const Slice& data) { return Status::OK(); }\n};\n}  // namespace\n"
        "class InternalKey {\n public:\n  void DecodeFrom(const Slice& s) { rep_.assign(s.data()); }\n"
        " private:\n  std::string rep_;\n};\n}  // namespace leveldb\n"
    )
    outline = outline_from_text(text, "cpp", "/p/dbformat.h")
    owner = {e.name: outline.entries[e.owner].name if e.owner >= 0 else None for e in outline.entries}
    assert owner["PosixWritableFile"] == "leveldb" and owner["Append"] == "PosixWritableFile"
    assert owner["DecodeFrom"] == "InternalKey" and owner["rep_"] == "InternalKey"
    assert [e.name for e in outline.entries].count("InternalKey") == 1


def test_c_anonymous_enums_list_their_constants_and_forward_structs_give_way() -> None:
    text = "struct point;\nenum { MAX_LEVEL = 7, MIN_LEVEL = 0 };\nstruct point { int x; };\n"
    outline = outline_from_text(text, "c", "/p/a.h")
    owner = {e.name: outline.entries[e.owner].name if e.owner >= 0 else None for e in outline.entries}
    assert owner["MAX_LEVEL"] is None and owner["MIN_LEVEL"] is None
    assert owner["x"] == "point" and [e.name for e in outline.entries].count("point") == 1


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_declarations_inside_an_extern_c_guard_are_outlined(language: str) -> None:
    # Nearly every C library header wraps its API in `extern "C" { ... }` for C++ callers;
    # the block's body (a declaration_list) used to hide every declaration in it.
    text = (
        "#ifndef TREE_SITTER_LEXER_H_\n#define TREE_SITTER_LEXER_H_\n"
        '#ifdef __cplusplus\nextern "C" {\n#endif\n'
        "typedef struct { uint32_t bytes; } Length;\n"
        "void ts_lexer_init(Lexer *self);\nvoid ts_lexer_finish(Lexer *, uint32_t *);\n"
        "#if defined(_WIN32)\nvoid win_only(void);\n#elif defined(__APPLE__)\nvoid mac_only(void);\n#endif\n"
        "#ifdef __cplusplus\n}\n#endif\n#endif\n"
    )
    names = {e.name: e.kind for e in outline_from_text(text, language, "/p/lexer.h").entries}
    assert names.get("ts_lexer_init") == "function" and names.get("ts_lexer_finish") == "function", names
    assert names.get("Length") == "type" and "bytes" in names
    assert "win_only" in names and "mac_only" in names  # both branches of an #if / #elif


def test_names_of_a_family_the_file_spells_rank_above_other_unspelled_names() -> None:
    from lsp_assist.structure.outline import families_of, family_of

    assert family_of("directoryHeaderLen") == family_of("directoryHeaderSignature") == "directory|header"
    assert family_of("TypeBlock") == family_of("TYPE_BLOCK") == family_of("type_char") == "type"
    assert family_of("getX") == family_of("is_ok") == family_of("NANOSECONDS") == ""  # says nothing
    go = "package tar\n\nconst (\n\tTypeReg = '0'\n\tTypeBlock = '4'\n)\n\nconst blockSize = 512\n"
    outline = outline_from_text(go, "go", "/p/common.go")
    names = [e.name for e in outline.entries]
    plain = dict(zip(names, rank_entries(outline, Relevance(mentioned=frozenset({"TypeChar"}))), strict=True))
    assert plain["TypeBlock"] == plain["blockSize"]
    rel = Relevance(mentioned=frozenset({"TypeChar"}), families=families_of({"TypeChar", "h"}))
    scores = dict(zip(names, rank_entries(outline, rel), strict=True))
    assert scores["TypeBlock"] > scores["blockSize"] == plain["blockSize"]
    assert scores["TypeReg"] == scores["TypeBlock"]


def test_go_declarations_of_several_names_give_an_entry_per_name() -> None:
    go = (
        "package zip\n\ntype header struct {\n\tX, Y int\n\tname string\n}\n\n"
        "const (\n\tfileHeaderLen, directoryHeaderLen = 30, 46\n\tsig = 1\n)\n\nvar errA, errB error\n"
    )
    entries = outline_from_text(go, "go", "/p/struct.go").entries
    got = {e.name: (e.kind, e.text, entries[e.owner].name if e.owner >= 0 else None) for e in entries}
    assert got["X"] == got["Y"] == ("field", "X, Y int", "header")
    assert got["fileHeaderLen"] == got["directoryHeaderLen"]
    assert got["directoryHeaderLen"] == ("constant", "const fileHeaderLen, directoryHeaderLen = 30, 46", None)
    assert got["errA"][0] == got["errB"][0] == "constant" and got["sig"][0] == "constant"
    assert [e.name for e in entries].count("Y") == 1  # once each


def test_go_methods_rank_as_members_of_their_receiver_type() -> None:
    go = (
        "package tls\n\ntype Config struct {\n\tNextProtos []string\n}\n\n"
        "func (c *Config) mutualVersion(isClient bool) (uint16, bool) { return 0, false }\n\n"
        "func (Config) clone() *Config { return nil }\n\n"
        "func (s *state[T]) step() {}\n\n"
        "func helper() {}\n"
    )
    outline = outline_from_text(go, "go", "/p/common.go")
    names = [e.name for e in outline.entries]
    parents = dict(zip(names, outline.parents(), strict=True))
    assert parents["mutualVersion"] == parents["clone"] == parents["NextProtos"] == "Config"
    assert parents["step"] == "state" and parents["helper"] is None and parents["Config"] is None
    # The code at the cursor uses a Config: its methods rank with its fields, above other functions.
    scores = dict(zip(names, rank_entries(outline, Relevance(near=frozenset({"Config"}))), strict=True))
    assert scores["mutualVersion"] == scores["NextProtos"] > scores["helper"]
    assert scores["step"] < scores["mutualVersion"]


def test_go_values_of_one_const_block_rank_with_the_one_the_code_uses() -> None:
    go = (
        "package tls\n\nconst (\n\tcertTypeRSASign = 1\n\tcertTypeECDSASign = 64\n)\n\n"
        "const (\n\tNoClientCert ClientAuthType = iota\n\tRequestClientCert\n)\n\n"
        "const maxPlaintext = 16384\n\n"
        'var (\n\terrShutdown = errors.New("x")\n\terrClosed = errors.New("y")\n)\n'
    )
    outline = outline_from_text(go, "go", "/p/common.go")
    entries = {e.name: e for e in outline.entries}
    assert entries["certTypeRSASign"].group == entries["certTypeECDSASign"].group >= 0
    assert entries["NoClientCert"].group == entries["RequestClientCert"].group
    assert entries["NoClientCert"].group != entries["certTypeRSASign"].group
    assert entries["errShutdown"].group == entries["errClosed"].group >= 0
    assert entries["maxPlaintext"].group == -1  # a declaration of its own is no group
    assert entries_from_rows(entries_to_rows(outline.entries)) == outline.entries  # persisted with it
    names = [e.name for e in outline.entries]

    def scores(rel: Relevance) -> dict[str, float]:
        return dict(zip(names, rank_entries(outline, rel), strict=True))

    near = scores(Relevance(near=frozenset({"certTypeRSASign"}), mentioned=frozenset({"certTypeRSASign"})))
    assert near["certTypeECDSASign"] > near["maxPlaintext"] == near["RequestClientCert"]
    spelled = scores(Relevance(mentioned=frozenset({"NoClientCert"})))
    assert near["certTypeECDSASign"] > spelled["RequestClientCert"] > spelled["maxPlaintext"]
    assert spelled["NoClientCert"] < spelled["maxPlaintext"]  # spelled here: only its signature is news


def test_go_types_of_the_names_the_code_uses_rank_their_members_as_used() -> None:
    from lsp_assist.structure.outline import used_types

    conn = outline_from_text(
        "package tls\n\ntype Conn struct {\n\tconfig *Config\n\tvers, flags uint16\n}\n\n"
        'func newTW(r any) (t *transferWriter, err error) { return nil, nil }\n\nvar key = &ctxKey{"a b"}\n'
        "func (c *Conn) auth(cfg tls.Config) *Result { return nil }\n",
        "go",
        "/p/conn.go",
    )
    common = outline_from_text(
        "package tls\n\ntype Config struct {\n\tNextProtos []string\n}\n\n"
        "func (c *Config) mutualVersion() uint16 { return 0 }\n\nfunc helper() {}\n\n"
        "type ClientAuthType int\n\nconst (\n\tNoClientCert ClientAuthType = iota\n\tRequestClientCert\n)\n"
        "const (\n\tmodeA = 1\n\tmodeB = 2\n)\n",
        "go",
        "/p/common.go",
    )
    assert used_types([conn, None], frozenset({"config"})) == {"Config"}  # a field's type
    assert used_types([conn], frozenset({"newTW", "key"})) == {"transferWriter", "ctxKey"}  # results, values
    assert used_types([conn], frozenset({"auth", "vers"})) == {"Result"}  # not parameters, names, builtins
    assert used_types([conn], frozenset({"NextProtos"})) == frozenset()
    names = [e.name for e in common.entries]

    def scores(rel: Relevance) -> dict[str, float]:
        return dict(zip(names, rank_entries(common, rel), strict=True))

    plain = scores(Relevance(used=frozenset({"config"})))
    typed = scores(Relevance(used=frozenset({"config"}), typed=used_types([conn], frozenset({"config"}))))
    assert typed["mutualVersion"] == typed["NextProtos"] > plain["helper"] > plain["mutualVersion"]
    assert typed["helper"] == plain["helper"]
    # A typed enumeration's values rank with its type when the code holds or spells it.
    held = scores(Relevance(typed=frozenset({"ClientAuthType"})))
    assert held["RequestClientCert"] == held["NoClientCert"] > held["modeA"] == plain["modeA"]


def test_go_entry_types_start_after_the_name_as_a_whole_word() -> None:
    # The name is found as a word, not inside another (`read` in `reader`), without a
    # pattern compiled per name (an outline's first read did hundreds: past the deadline).
    from lsp_assist.structure.outline import used_types

    ol = outline_from_text(
        "package p\n\ntype reader struct {\n\tr, readerDone *readState\n}\n\n"
        "func (rd *reader) read(p []byte) (*readResult, error) { return nil, nil }\n",
        "go",
        "/p/r.go",
    )
    assert used_types([ol], frozenset({"read"})) == {"readResult"}
    assert used_types([ol], frozenset({"readerDone"})) == {"readState"}
    assert ol.visible_top_names() == ("reader", "read")


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_c_function_pointer_members_and_typedefs_are_named(language: str) -> None:
    # A C "vtable" (tree-sitter's TSLexer: `void (*advance)(TSLexer *, bool);`): the name sits
    # inside a parenthesized declarator, which has no `declarator` field; it used to name nothing.
    text = (
        "typedef void (*TSLogger)(void *payload, int type);\n"
        "struct TSLexer {\n  int32_t lookahead;\n  void (*advance)(struct TSLexer *, bool);\n"
        "  bool (*const eof)(const struct TSLexer *);\n};\n"
        "int (*handler)(int code);\n"
    )
    outline = outline_from_text(text, language, "/p/parser.h")
    owner = {e.name: outline.entries[e.owner].name if e.owner >= 0 else None for e in outline.entries}
    assert owner.get("advance") == "TSLexer" and owner.get("eof") == "TSLexer", owner
    assert owner.get("lookahead") == "TSLexer"
    assert "TSLogger" in owner and owner["TSLogger"] is None
    assert "handler" in owner and owner["handler"] is None


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_header_include_guard_is_no_entry(language: str) -> None:
    # `#define TREE_SITTER_LEXER_H_` under its `#ifndef` is never a name another file spells:
    # it cost every header ~25 characters of its names line. A valueless #define that is not
    # the guard (a feature flag, an annotation macro defaulted to nothing) stays.
    text = (
        "#ifndef TREE_SITTER_LEXER_H_\n#define TREE_SITTER_LEXER_H_\n#define TS_DEBUG\n"
        "#ifndef SCOPED_LOCKABLE\n#define SCOPED_LOCKABLE\n#endif\n"
        "#define MAX_DEPTH 8\nvoid ts_lexer_init(void);\n#endif\n"
    )
    names = [e.name for e in outline_from_text(text, language, "/p/lexer.h").entries]
    assert "TREE_SITTER_LEXER_H_" not in names
    assert {"TS_DEBUG", "SCOPED_LOCKABLE", "MAX_DEPTH", "ts_lexer_init"} <= set(names), names
    # A small `#ifndef X` / `#define X` at the top of a source file is no guard either.
    text = "#ifndef NDEBUG\n#define NDEBUG\n#endif\n" + "".join(f"int f{i}(void);\n" for i in range(20))
    assert "NDEBUG" in {e.name for e in outline_from_text(text, language, "/p/a.c").entries}


def test_a_declaration_of_a_macros_type_is_named_by_its_own_name_in_cpp_too() -> None:
    # `.h` files are indexed as C++, whose grammar reads `Array(StackSummaryEntry)` as a
    # parenthesized declarator and the real name as a stray statement: stack.h's
    # StackSummary was lost (StackSummaryEntry taken twice) and `stack` became a method.
    text = (
        "typedef struct {\n  unsigned depth;\n} StackSummaryEntry;\n"
        "typedef Array(StackSummaryEntry) StackSummary;\n"
        "typedef struct {\n  Array(StackEntry) stack;\n  void (*advance)(int);\n  int x;\n} ReusableNode;\n"
        "typedef int (Plain);\n"
    )
    for language in ("c", "cpp"):
        got = {e.name: (e.kind, e.text) for e in outline_from_text(text, language, "/ts/src/stack.h").entries}
        assert got.get("StackSummary") == ("type", "typedef Array(StackSummaryEntry) StackSummary;"), got
        assert got.get("stack") == ("field", "Array(StackEntry) stack;"), got
        assert got.get("advance", ("",))[0] == "method" and "Plain" in got and "x" in got, got


def test_names_whose_distinctive_words_the_rows_around_the_cursor_spell_rank_higher() -> None:
    from lsp_assist.structure.outline import tail_words

    assert tail_words("ts_subtree_total_bytes") == {"total", "bytes"}
    assert tail_words("field_names") == {"field", "names"}  # a field: all its words
    header = (
        "struct TSLanguage {\n  const char * const *symbol_names;\n  const char * const *field_names;\n};\n"
    )
    outline = outline_from_text(header, "cpp", "/p/parser.h")
    names = [e.name for e in outline.entries]
    rel = Relevance(near_words=frozenset({"self", "language", "field", "id"}))  # `field_id`
    scores = dict(zip(names, rank_entries(outline, rel), strict=True))
    assert scores["field_names"] > scores["symbol_names"]


def test_attribute_patterns_searched_by_their_literal_match_as_written() -> None:
    """The walk compiles `self_attr` literal-first (`_literal_first`, a speed-up): the
    same matches as the pattern as written, at a word boundary or not."""
    import re

    from lsp_assist.structure.outline import RULES, _literal_first

    text = (
        "self.a = 1\nmyself.b = 2\n_self.c = 3\n(self.d) = 4\néself.e = 5\n x=self.f == 6\n"
        "self.g: int = 7\nthis.h = 8\nthat.this.i = 9\n$this.j = 10\nself.k, self.l = 1, 2\n"
    )
    patterns = {r.self_attr for r in RULES.values() if r.self_attr}
    assert len(patterns) >= 2  # Python's and JavaScript's
    for pattern in patterns:
        fast = re.compile(_literal_first(pattern))
        assert fast.pattern != pattern

        def found(p: re.Pattern[str]) -> list[tuple[int, int, str]]:
            return [(m.start(), m.end(), m.group(1)) for m in p.finditer(text)]

        assert found(fast) == found(re.compile(pattern))
        assert found(fast)


def test_one_line_collapses_whitespace_as_the_regex_did() -> None:
    """`_one_line` splits on str whitespace; it must agree with `\\s+` (what it replaced) on
    every code point, or an entry's text (and every stored outline) would change."""
    import re
    import sys

    from lsp_assist.structure.outline import _one_line

    spaces = re.compile(r"\s+")
    odd = [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if (spaces.fullmatch(chr(c)) is not None) != chr(c).isspace()
    ]
    assert odd == []
    for text in [
        "def f(a,\n      b)  ->  int:",
        "\tclass  X(\x1c Base\u2003):\x85",
        "  x = 1  ",
        "",
        "a\u00a0 \u200bb",
    ]:
        assert _one_line(text) == spaces.sub(" ", text).strip()
