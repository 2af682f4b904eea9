"""Editor-provided definitions (lspAssist/definitions): store, ranking, budget, governance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_assist.config.loader import ConfigLayers
from lsp_assist.config.schema import Config
from lsp_assist.context import editor_definitions as ed
from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.editor_definitions import (
    EditorDefinition,
    EditorDefinitionStore,
    cap_text,
    parse_notification,
    pick_editor_definitions,
)
from lsp_assist.documents.store import Document, DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.server import Runtime
from tests.unit.pipeline.test_prompt_reuse import NoGovernance

APP = (
    "from billing import Invoice\n\n\n"
    "def run(items, rate):\n"
    "    inv = Invoice(items)\n"
    "    inv.apply_discount(rate)\n"
    "    total = inv.\n"
    "    return total\n"
)
CURSOR = Cursor(6, 16)
INVOICE = (
    "class Invoice:\n"
    '    """A bill."""\n'
    "    def __init__(self, items: list[Item]) -> None: ...\n"
    "    def grand_total(self) -> float: ..."
)


def _def(name: str, path: str, row: int, text: str, version: int = 1) -> EditorDefinition:
    return EditorDefinition(name, path, row, text, version)


def _raw(name: str, uri: str, line: int, text: str) -> dict[str, Any]:
    pos = {"line": line, "character": 0}
    return {"name": name, "uri": uri, "range": {"start": pos, "end": pos}, "text": text}


# -- parsing and capping -----------------------------------------------------------------------


def test_parse_keeps_good_entries_counts_bad_ones_and_caps_text_at_whole_lines() -> None:
    long_text = "\n".join(f"    line_{i} = {i}" for i in range(40))
    uri, version, defs, bad = parse_notification(
        {
            "uri": "file:///ws/app.py",
            "version": 4,
            "definitions": [
                _raw("Invoice", "file:///ws/billing.py", 3, INVOICE),
                _raw("big", "file:///ws/big.py", 0, long_text),
                _raw("remote", "jdt://contents/x.class", 0, "class X {}"),  # no file path: dropped
                _raw(
                    "BaseException", "file:///np/typeshed/stdlib/builtins.pyi", 9, "class BaseException: ..."
                ),
                _raw("Array", "file:///ts/lib/lib.es5.d.ts", 9, "interface Array<T> {"),
                {"name": "x"},  # malformed
                "nonsense",
            ],
        }
    )
    assert (uri, version, bad) == ("file:///ws/app.py", 4, 5)  # built-ins' stubs count as dropped
    assert [d.name for d in defs] == ["Invoice", "big"]
    assert defs[0].path == "/ws/billing.py" and defs[0].row == 3 and defs[0].text == INVOICE
    big = defs[1].text
    assert len(big) <= ed.MAX_TEXT_CHARS and len(big.split("\n")) <= ed.MAX_TEXT_LINES
    assert all(line in long_text.split("\n") for line in big.split("\n"))  # never cut mid-line


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        {"uri": 3, "version": 1, "definitions": []},
        {"uri": "file:///a", "version": "1", "definitions": []},
        {"uri": "file:///a", "version": 1, "definitions": {}},
    ],
)
def test_a_bad_envelope_is_a_value_error(params: Any) -> None:
    with pytest.raises(ValueError):
        parse_notification(params)


def test_cap_text_drops_a_single_line_longer_than_the_cap() -> None:
    assert cap_text("x" * 600) == ""
    assert cap_text("a\nb\n\n\n", max_lines=8) == "a\nb"


# -- the store ---------------------------------------------------------------------------------


def test_store_merges_bounds_and_forgets() -> None:
    store = EditorDefinitionStore()
    store.update(
        "u", 1, [_def(f"n{i}", "/ws/a.py", i, f"def n{i}(): ...") for i in range(ed.MAX_PER_DOCUMENT + 5)]
    )
    got = store.current("u", 1)
    assert len(got) == ed.MAX_PER_DOCUMENT and got[0].name == f"n{ed.MAX_PER_DOCUMENT + 4}"  # newest first
    g = store.generation("u")
    store.update("u", 2, [_def("n0", "/ws/a.py", 0, "def n0(x): ...", 2)])  # re-sent: replaced, newest
    assert store.current("u", 2)[0].text == "def n0(x): ..." and store.generation("u") != g
    for i in range(ed.MAX_DOCUMENTS + 1):
        store.update(f"doc{i}", 1, [_def("a", "/ws/a.py", 0, "a = 1")])
    assert store.current("u", 2) == []  # least recently updated document dropped
    store.forget(f"doc{ed.MAX_DOCUMENTS}")
    assert not store.has(f"doc{ed.MAX_DOCUMENTS}")


def test_store_drops_stale_entries_beyond_the_version_tolerance() -> None:
    store = EditorDefinitionStore()
    store.update("u", 10, [_def("old", "/ws/a.py", 0, "old = 1", 10)])
    store.update("u", 50, [_def("new", "/ws/a.py", 1, "new = 2", 50)])
    assert {d.name for d in store.current("u", 10 + ed.VERSION_TOLERANCE)} == {"old", "new"}
    assert [d.name for d in store.current("u", 11 + ed.VERSION_TOLERANCE)] == ["new"]


def test_store_drops_excluded_files_on_arrival_and_when_the_policy_changes() -> None:
    store = EditorDefinitionStore(excluded=lambda p: p.startswith("/ws/private/"))
    kept, dropped = store.update(
        "u", 1, [_def("key", "/ws/private/keys.py", 0, "KEY = 1"), _def("ok", "/ws/a.py", 0, "ok = 1")]
    )
    assert (kept, dropped) == (1, 1)
    assert [d.name for d in store.current("u", 1)] == ["ok"]
    store.excluded = lambda p: True  # stricter policy since: nothing reaches a prompt
    assert store.current("u", 1) == []


# -- ranking -----------------------------------------------------------------------------------


def test_pick_ranks_near_then_used_then_cursor_line_drops_unused_and_this_file() -> None:
    defs = [
        _def("far", "/ws/b.py", 40, "def far(): ..."),
        _def("used", "/ws/b.py", 20, "def used(): ..."),
        _def("near", "/ws/c.py", 5, "def near(): ..."),
        _def("typed", "/ws/d.py", 1, "def typed(): ..."),
        _def("gone", "/ws/e.py", 1, "def gone(): ..."),  # the code no longer uses it
        _def("local", "/ws/app.py", 1, "def local(): ..."),  # this file: the local context has it
    ]
    kw: dict[str, Any] = dict(
        current_path="/ws/app.py",
        near=frozenset({"near", "local"}),
        used=frozenset({"near", "used", "far", "local"}),
        cursor_line=frozenset({"typed"}),
    )
    every = pick_editor_definitions(defs, budget=10_000, **kw)
    assert [s.path for s in every.snippets] == ["/ws/b.py", "/ws/c.py", "/ws/d.py"]  # by path
    assert every.snippets[0].text == "def used(): ...\ndef far(): ..."  # by line in the file
    assert every.names["/ws/b.py"] == ["used", "far"]
    assert all(s.reason == "editor" for s in every.snippets)
    # A budget for two: the near name, then the newest of the used ones (whole entries).
    two = pick_editor_definitions(defs, budget=len("def near(): ...") + len("def used(): ...") + 2, **kw)
    assert {n for names in two.names.values() for n in names} == {"near", "far"}
    assert pick_editor_definitions(defs, budget=10_000, **kw) == every  # deterministic


def test_pick_dedupes_by_name_and_file_and_by_rows_already_taken() -> None:
    defs = [
        _def("Invoice", "/ws/billing.py", 0, INVOICE),
        _def("grand_total", "/ws/billing.py", 3, "    def grand_total(self) -> float: ..."),  # inside it
        _def("Invoice", "/ws/billing.py", 9, "class Invoice:  # an older copy"),  # same name+file: first wins
        _def("Invoice", "/ws/other.py", 2, "class Invoice: ..."),  # another file: kept
    ]
    got = pick_editor_definitions(
        defs,
        current_path="/ws/app.py",
        near=frozenset({"Invoice", "grand_total"}),
        used=frozenset(),
        cursor_line=frozenset(),
        budget=10_000,
    )
    assert got.snippets[0].text == INVOICE
    assert got.names == {"/ws/billing.py": ["Invoice"], "/ws/other.py": ["Invoice"]}


def test_pick_keeps_whole_lines_within_the_budget() -> None:
    d = _def("Invoice", "/ws/billing.py", 0, INVOICE)
    for budget in range(0, len(INVOICE) + 5):
        got = pick_editor_definitions(
            [d],
            current_path="/ws/app.py",
            near=frozenset({"Invoice"}),
            used=frozenset(),
            cursor_line=frozenset(),
            budget=budget,
        )
        text = got.snippets[0].text if got.snippets else ""
        assert len(text) <= budget
        assert INVOICE.startswith(text)
        assert text == "" or len(text) == len(INVOICE) or INVOICE[len(text)] == "\n"
    assert len(
        pick_editor_definitions(
            [d],
            current_path="/ws/app.py",
            near=frozenset({"Invoice"}),
            used=frozenset(),
            cursor_line=frozenset(),
            budget=len(INVOICE),
        )
        .snippets[0]
        .text
    ) == len(INVOICE)


# -- in the context builder --------------------------------------------------------------------


def _engine_with(doc: Document, defs: list[EditorDefinition]) -> ContextEngine:
    engine = ContextEngine()
    engine.editor_definitions.update(doc.uri, doc.version, defs)
    return engine


def test_the_builder_puts_them_in_the_prompt_labelled_within_the_cross_file_budget() -> None:
    doc = Document("file:///ws/app.py", "python", 1, APP)
    engine = _engine_with(doc, [_def("Invoice", "/ws/billing.py", 0, INVOICE)])
    ctx = engine.build(doc, CURSOR, 4000)
    editor = [s for s in ctx.snippets if s.reason == "editor"]
    assert [s.text for s in editor] == [INVOICE]
    part = next(p for p in ctx.parts if p.label == "editor:billing.py")
    assert "from the editor's language server" in part.reason and "Invoice" in part.reason
    assert part.chars == len(INVOICE)
    # A tiny budget: the cross-file share holds only the class line; never a cut line.
    small = engine.build(doc, CURSOR, 300)
    got = [s.text for s in small.snippets if s.reason == "editor"]
    assert got and INVOICE.startswith(got[0]) and len(got[0]) < len(INVOICE)
    assert INVOICE[len(got[0])] == "\n"
    assert small.size <= 300


def test_a_name_our_own_outline_has_is_left_to_the_outline_not_sent_twice() -> None:
    billing = Document(
        "file:///ws/billing.py",
        "python",
        1,
        "class Invoice:\n    def grand_total(self) -> float:\n        return 1.0\n\n\n"
        "def make_invoice(items):\n    return Invoice(items)\n",
    )
    app = APP.replace("inv = Invoice(items)", "inv = make_invoice(items)")
    doc = Document("file:///ws/app.py", "python", 1, app)
    engine = ContextEngine()
    engine.index_document(billing)
    engine.editor_definitions.update(
        doc.uri,
        1,
        [
            _def("make_invoice", "/ws/billing.py", 5, "def make_invoice(items):\n    return Invoice(items)"),
            _def("Item", "/ws/models.py", 0, "class Item:  # not outlined by lsp-assist"),
        ],
    )
    doc2 = Document("file:///ws/app.py", "python", 1, app.replace("(items)", "(items: Item)"))
    ctx = engine.build(doc2, CURSOR, 4000, others=[billing])
    by_reason: dict[str, list[str]] = {}
    for snip in ctx.snippets:
        by_reason.setdefault(snip.reason, []).append(snip.text)
    assert "def make_invoice(items):" in "".join(by_reason["outline"])  # ranked by the outline
    assert by_reason["editor"] == ["class Item:  # not outlined by lsp-assist"]  # only what it lacks


def test_files_the_editor_points_into_are_outlined_off_the_loop_bounded_and_survive_a_swap(
    tmp_path: Path,
) -> None:
    lib = tmp_path / "site" / "vendor_billing.py"
    lib.parent.mkdir()
    lib.write_text(
        "class Ledger:\n    def post_entry(self, amount: float) -> None: ...\n"
        "    def close_period(self) -> None: ...\n\n\ndef open_ledger(name: str) -> Ledger: ...\n"
        "\n\ndef unrelated_helper(): ...\n"
    )
    loaded = ed.load_definition_files([str(lib), str(tmp_path / "missing.py"), str(tmp_path)])
    assert [f.path for f in loaded] == [str(lib)]
    engine = ContextEngine()
    defs = [
        _def("open_ledger", str(lib), 5, "def open_ledger(name: str) -> Ledger: ..."),
        _def("Ledger", str(lib), 0, "class Ledger:"),
    ]
    assert engine.editor_files.wanted(engine.symbols, defs) == [str(lib)]
    assert engine.editor_files.add(engine.symbols, loaded, lambda p: False) == 1
    assert engine.symbols.has_path(str(lib)) and engine.editor_files.wanted(engine.symbols, defs) == []
    app = "from vendor_billing import open_ledger\n\n\ndef book(x):\n    led: Ledger = open_ledger('x')\n"
    app += "    \n"
    doc = Document("file:///ws/app.py", "python", 1, app)
    engine.editor_definitions.update(doc.uri, 1, defs)
    ctx = engine.build(doc, Cursor(5, 4), 4000)
    outline = "".join(s.text for s in ctx.snippets if s.reason == "outline" and s.path == str(lib))
    assert "post_entry" in outline and "close_period" in outline  # members the editor never sent
    assert "open_ledger" in outline and "unrelated_helper" not in outline  # only what the code uses
    assert not any(s.reason == "editor" for s in ctx.snippets)  # its copy: the outline has the name
    # The workspace index is swapped for a new one: the editor's files are put back.
    from lsp_assist.structure.symbols import SymbolIndex

    engine.symbols = SymbolIndex()
    engine.build(doc, Cursor(5, 4), 4000)
    assert engine.symbols.has_path(str(lib))
    # Bounded: the oldest files go (from the index too).
    many = []
    for i in range(ed.MAX_EDITOR_FILES + 2):
        f = tmp_path / "site" / f"m{i}.py"
        f.write_text(f"def f{i}(): ...\n")
        many += ed.load_definition_files([str(f)])
    engine.editor_files.add(engine.symbols, many, lambda p: False)
    assert len(engine.editor_files) == ed.MAX_EDITOR_FILES
    assert not engine.symbols.has_path(str(lib)) and engine.symbols.has_path(many[-1].path)
    # A file excluded meanwhile is not added.
    assert engine.editor_files.add(SymbolIndex(), loaded, lambda p: True) == 0


def test_typing_on_the_cursor_row_keeps_the_cross_file_text() -> None:
    store = DocumentStore()
    engine = ContextEngine()
    store.on_change.append(engine.index_document)
    doc = store.open("file:///ws/app.py", "python", 1, APP, "/ws/app.py")
    engine.editor_definitions.update(doc.uri, 1, [_def("Invoice", "/ws/billing.py", 0, INVOICE)])
    first = engine.build(doc, CURSOR, 4000).snippets
    for v, ch in enumerate("gra", start=2):
        store.change(doc.uri, v, [TextChange(CURSOR, CURSOR, ch)])
        cur = Cursor(CURSOR.line, CURSOR.character + v - 1)
        assert engine.build(doc, cur, 4000).snippets == first


def test_prompt_builder_memo_sees_new_definitions_and_redacts_them() -> None:
    store, context = DocumentStore(), ContextEngine()
    store.on_change.append(context.index_document)
    prompts = PromptBuilder(Config(), store, context, NoGovernance(), {})  # type: ignore[arg-type]
    store.open("file:///ws/app.py", "python", 1, APP, "/ws/app.py")
    before = prompts.for_open("file:///ws/app.py", CURSOR, "fast")
    context.editor_definitions.update("file:///ws/app.py", 1, [_def("Invoice", "/ws/billing.py", 0, INVOICE)])
    after = prompts.for_open("file:///ws/app.py", CURSOR, "fast")
    assert before is not None and after is not None and prompts.reused == 0
    assert any(s.reason == "editor" for s in after.context.snippets) and after.key != before.key


# -- the runtime: governance on the way in and out ---------------------------------------------


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setenv("LSP_ASSIST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "no-user-config.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))
    opts = {
        "tiers": {
            "fast": {"provider": "offline"},
            "quality": {"provider": "offline"},
            "backup": {"provider": "offline"},
        },
        "governance": {"exclude": ["private/**"]},
        "workspace": {"index": False},
    }
    rt = Runtime(ConfigLayers(init_options=opts), [tmp_path])
    rt.build()
    return rt


def test_runtime_drops_excluded_files_redacts_secrets_and_logs_no_text(
    runtime: Runtime, tmp_path: Path
) -> None:
    app = tmp_path / "app.py"
    runtime.store.open(
        app.as_uri(), "python", 3, APP.replace("Invoice(items)", "Invoice(items, SECRET)"), str(app)
    )
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    line = runtime.note_definitions(
        {
            "uri": app.as_uri(),
            "version": 3,
            "definitions": [
                _raw("Invoice", (tmp_path / "billing.py").as_uri(), 0, INVOICE),
                _raw("SECRET", (tmp_path / "private" / "keys.py").as_uri(), 0, f"SECRET = '{secret}'"),
                _raw("inv", (tmp_path / "conf.py").as_uri(), 0, f"GITHUB_TOKEN = '{secret}'"),
            ],
        }
    )
    assert (
        line == "editor definitions: 2 kept, 1 from excluded files dropped, 0 malformed; 2 files to outline"
    )
    assert "Invoice" not in line and secret not in line
    assert runtime.governance is not None
    prompts = PromptBuilder(
        runtime.config, runtime.store, runtime.context, runtime.governance, runtime.providers
    )
    prompt = prompts.for_open(app.as_uri(), CURSOR, "fast")
    assert prompt is not None
    editor = "".join(s.text for s in prompt.context.snippets if s.reason == "editor")
    assert "class Invoice:" in editor and "GITHUB_TOKEN" in editor
    assert secret not in editor and prompt.redactions >= 1  # redacted like any other context
    assert "private" not in "".join(s.path for s in prompt.context.snippets)


def test_runtime_ignores_unopened_documents_and_old_versions(runtime: Runtime, tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    params = {
        "uri": app.as_uri(),
        "version": 1,
        "definitions": [_raw("Invoice", (tmp_path / "b.py").as_uri(), 0, INVOICE)],
    }
    assert "not open" in runtime.note_definitions(params)
    runtime.store.open(app.as_uri(), "python", 1 + ed.VERSION_TOLERANCE + 1, APP, str(app))
    assert "edits old; ignored" in runtime.note_definitions(params)
    assert runtime.context.editor_definitions.count() == 0
    runtime.store.close(app.as_uri())
    with pytest.raises(ValueError):
        runtime.note_definitions({"uri": app.as_uri()})


def test_closing_the_document_drops_its_definitions(runtime: Runtime, tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    runtime.store.open(app.as_uri(), "python", 1, APP, str(app))
    runtime.note_definitions(
        {
            "uri": app.as_uri(),
            "version": 1,
            "definitions": [_raw("Invoice", (tmp_path / "b.py").as_uri(), 0, INVOICE)],
        }
    )
    assert runtime.context.editor_definitions.count() == 1
    runtime.store.close(app.as_uri())
    assert runtime.context.editor_definitions.count() == 0
