"""The package prior: which names of its package a file needs, from the files like it.

A Java package where the current file (a queue) needs `Helpers` on one line only: its
similar files (the other queues) spell `Helpers`, files unlike it do not, and eight
filler classes sort before `Helpers.java` by path (the old tie-break for files with no
evidence). Also: the index's per-directory counts stay right through updates, and the
persisted workspace index keeps the names each file spells.
"""

from __future__ import annotations

import time
from pathlib import Path

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.candidates import Candidate
from lsp_assist.context.cross_ranking import assemble
from lsp_assist.context.crossfile import identifiers
from lsp_assist.context.outline_rank import Relevance
from lsp_assist.context.package_prior import PACKAGE_REASON, package_prior
from lsp_assist.domain import Cursor
from lsp_assist.languages.tuning import DEFAULT
from lsp_assist.structure.outline import outline_from_text
from lsp_assist.structure.symbols import SymbolIndex, reference_names
from lsp_assist.workspace.index import WorkspaceIndex, build_symbol_index
from tests.unit.context.gathering import gather

PKG = "/w/conc"
QUEUE_BODY = """
    final ReentrantLock lock = new ReentrantLock();
    Node head; int count;
    public boolean offer(Object e) {{ lock.lock(); try {{ count++; }} finally {{ lock.unlock(); }} }}
    public Object poll() {{ lock.lock(); try {{ count--; return head; }} finally {{ lock.unlock(); }} }}
    public String toString() {{ {last} }}
"""


def _queue(name: str, last: str) -> str:
    return f"package conc;\n\npublic class {name} {{{QUEUE_BODY.format(last=last)}}}\n"


EXTRA = ("Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta")  # more needed types than slots


def _files(current_spells_helpers_on_disk: bool = True, extra: bool = False) -> dict[str, str]:
    more = "".join(f" {t}.go();" for t in EXTRA) if extra else ""
    files = {
        f"{PKG}/Helpers.java": (
            "package conc;\n\nclass Helpers {\n"
            "    static String collectionToString(Object c) { return null; }\n}\n"
        ),
        f"{PKG}/ArrayQueue.java": _queue(
            "ArrayQueue",
            "return Helpers.collectionToString(this);" if current_spells_helpers_on_disk else "return null;",
        ),
        f"{PKG}/LinkedQueue.java": _queue("LinkedQueue", "return Helpers.collectionToString(this);" + more),
        f"{PKG}/PriorityQueue.java": _queue(
            "PriorityQueue", "return Helpers.collectionToString(this);" + more
        ),
    }
    for t in EXTRA if extra else ():
        files[f"{PKG}/{t}.java"] = f"package conc;\n\nclass {t} {{\n    static void go() {{}}\n}}\n"
    for i in range(8):  # unlike the queues, and before Helpers.java by path
        files[f"{PKG}/Aaa{i}.java"] = (
            f"package conc;\n\npublic class Aaa{i} {{\n    int widget{i}() {{ return {i}; }}\n}}\n"
        )
    return files


def _index(files: dict[str, str]) -> SymbolIndex:
    index = SymbolIndex()
    for path, text in files.items():
        index.update_file(path, text, "java")
    return index


CURRENT = f"{PKG}/ArrayQueue.java"
# The buffer: the line that needs `Helpers` is blank (being written).
BUFFER = _queue("ArrayQueue", "")


def _gather(
    index: SymbolIndex,
    language: str = "java",
    path: str = CURRENT,
    head: tuple[str, ...] = tuple(BUFFER.split("\n")[:3]),
    mentioned: frozenset[str] = frozenset(identifiers(BUFFER)),
) -> list[Candidate]:
    return gather(index, path, language, head, mentioned)


def test_similar_files_choose_the_file_the_line_needs_over_files_sorted_first() -> None:
    cands = _gather(_index(_files()))
    chosen = [c.path for c in cands[: DEFAULT.max_candidates]]
    assert f"{PKG}/Helpers.java" in chosen
    helpers = next(c for c in cands if c.path.endswith("Helpers.java"))
    assert helpers.prior > 0.5  # the two similar queues spell it (weighted: the fillers do not)


def test_prior_ignores_the_current_files_disk_text_and_the_defining_files_own_names() -> None:
    mentioned = frozenset(identifiers(BUFFER))
    # Only the current file's saved text spells `Helpers` (the others do not): no evidence.
    files = _files()
    files[f"{PKG}/LinkedQueue.java"] = _queue("LinkedQueue", "return null;")
    files[f"{PKG}/PriorityQueue.java"] = _queue("PriorityQueue", "return null;")
    prior = package_prior(_index(files), CURRENT, "java", mentioned)
    assert prior.score("Helpers", f"{PKG}/Helpers.java") == 0.0
    # With the similar queues spelling it: the neighbours are the queues, not the fillers.
    prior = package_prior(_index(_files()), CURRENT, "java", mentioned)
    assert {p for p, _s, _n in prior.neighbours[:2]} == {
        f"{PKG}/LinkedQueue.java",
        f"{PKG}/PriorityQueue.java",
    }
    assert prior.score("Helpers", f"{PKG}/Helpers.java") > 0.5
    assert prior.score("widget3", f"{PKG}/Aaa3.java") < 0.1
    assert prior.score("lock") == 0.0  # this file already spells it


def test_package_names_line_is_labelled_bounded_and_skips_what_the_file_and_outlines_spell() -> None:
    index = _index(_files(extra=True))
    cands = _gather(index)
    mentioned = frozenset(identifiers(BUFFER))
    budget = 1000
    got = assemble(cands, index.outline, Relevance(mentioned=mentioned), budget, time.perf_counter() + 1)
    lines = [s for s in got.snippets if s.reason == PACKAGE_REASON]
    assert len(lines) == 1
    line = lines[0]
    names = identifiers(line.text.split(":", 1)[1])
    assert line.text.startswith("// package names: ") and names and names <= set(EXTRA) | {"Helpers"}
    assert not (names & mentioned)
    outlines = [s for s in got.snippets if s.reason == "outline"]
    assert outlines and not any(names & identifiers(s.text) for s in outlines)  # said once
    assert len(line.text) <= budget * DEFAULT.package_share
    assert "files most like this one" in got.why[line.path] and "LinkedQueue.java" in got.why[line.path]


def test_context_command_parts_name_the_package_line_and_why() -> None:
    engine = ContextEngine(symbol_index=_index(_files(extra=True)))
    row = BUFFER.split("\n").index("    public String toString() {  }")
    ctx = engine.build_from_text(BUFFER, "java", CURRENT, Cursor(row, 31), 4000, others=[], deadline_ms=2000)
    part = next(p for p in ctx.parts if p.label == "package:names")
    assert part.chars > 0 and "files most like this one" in part.reason
    assert any(s.reason == PACKAGE_REASON and set(EXTRA) & identifiers(s.text) for s in ctx.snippets)


def test_no_line_and_no_reservation_without_the_names_files_spell() -> None:
    # Open tabs only (no workspace index: no names per file): outlines get the whole budget.
    index = SymbolIndex()
    for path, text in _files(extra=True).items():
        index.set_symbols(path, [], ("tab", 1), outline_from_text(text, "java", path))
    cands = _gather(index)
    got = assemble(cands, index.outline, Relevance(), 1000, time.perf_counter() + 1)
    assert not any(s.reason == PACKAGE_REASON for s in got.snippets)


def test_python_packages_get_no_prior() -> None:
    # Python names of another module need an import: the imports say it (measured: no gain).
    files = {p.replace(".java", ".py"): "class X:\n    pass\n" for p in _files()}
    index = SymbolIndex()
    for p, t in files.items():
        index.update_file(p, t, "python")
    cands = _gather(index, "python", CURRENT.replace(".java", ".py"), (), frozenset({"X"}))
    assert all(c.package is None and c.prior == 0.0 for c in cands)


def test_index_counts_per_directory_follow_updates_and_removals() -> None:
    index = SymbolIndex()
    index.update_file("/d/a.java", "class A { Helpers h; }", "java")
    index.update_file("/d/b.java", "class B { Helpers h; Other o; }", "java")
    index.update_file("/e/c.java", "class C { Helpers h; }", "java")
    assert index.package_uses("/d")["Helpers"] == 2 and index.package_uses("/e")["Helpers"] == 1
    before = index.package_changes("/d")
    index.update_file("/d/b.java", "class B { Other o; }", "java")
    assert index.package_uses("/d")["Helpers"] == 1 and index.package_changes("/d") > before
    # An open buffer's symbols (no text given) keep the file's counts until it is saved.
    index.set_symbols("/d/a.java", index.symbols("/d/a.java"), ("file:///d/a.java", 3))
    assert index.package_uses("/d")["Helpers"] == 1 and "Helpers" in index.refs("/d/a.java")
    index.remove_file("/d/a.java")
    assert "Helpers" not in index.package_uses("/d") and index.refs("/d/a.java") == frozenset()
    assert index.package_uses("/d")["Other"] == 1


def test_reference_names_are_distinct_and_bounded() -> None:
    got = reference_names("a.bc = Helpers.x(Helpers, $el, ab)")
    assert got == frozenset({"Helpers", "$el"})


def test_workspace_index_persists_the_names_each_file_spells(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "p").mkdir(parents=True)
    (root / "p" / "A.java").write_text("package p;\nclass A { Helpers h; }\n")
    (root / "p" / "Helpers.java").write_text("package p;\nclass Helpers {}\n")
    cache = tmp_path / "cache"
    first = WorkspaceIndex(str(root), cache)
    first.refresh()
    first.save()
    again = WorkspaceIndex(str(root), cache)
    assert again.load() == "ok"
    a = str(root / "p" / "A.java")
    assert "Helpers" in again.records[a].refs
    index = build_symbol_index([again])
    assert index.package_uses(str(root / "p"))["Helpers"] == 2
