"""Import resolution that reaches the defining file: Rust use trees, the crate's module
tree, re-exports (`pub use` in mod.rs), and C/C++ headers included by included headers."""

from __future__ import annotations

import time
from pathlib import Path

from lsp_assist.context.candidates import (
    Candidate,
    CandidateQuery,
    gather_candidates,
)
from lsp_assist.context.import_paths import PathResolver
from lsp_assist.context.scores import WEIGHTS
from lsp_assist.structure.imports import parse_imports
from lsp_assist.structure.symbols import SymbolIndex
from lsp_assist.workspace.index import WorkspaceIndex, build_symbol_index


def _index(lang: str, files: dict[str, str]) -> SymbolIndex:
    index = SymbolIndex()
    for path, text in files.items():
        index.update_file(path, text, lang)
    return index


def _candidates(path: str, language: str, head: str, index: SymbolIndex, used: str) -> list[Candidate]:
    return gather_candidates(
        CandidateQuery(
            path=path,
            language=language,
            head_lines=tuple(head.split("\n")),
            open_paths=(),
            recent=[],
            index=index,
            used=frozenset(used.split()),
            defined_here=frozenset(),
            deadline=time.perf_counter() + 1,
        )
    )


def _resolve(index: SymbolIndex, head: str, current: str, lang: str = "rust") -> list[str]:
    return [
        p
        for ref in parse_imports(head.split("\n"), lang)
        for p in PathResolver(index, []).resolve(ref, current, lang)
    ]


def test_a_rust_use_tree_over_lines_gives_each_module_its_names() -> None:
    head = (
        "use crate::builder::{\n    Arg,\n    app_settings::{AppFlags, AppSettings},\n"
        "    ArgAction as Action,\n};\nuse super::*;"
    )
    got = {(r.module, r.names) for r in parse_imports(head.split("\n"), "rust")}
    assert got == {
        ("crate::builder", ("Arg", "ArgAction")),
        ("crate::builder::app_settings", ("AppFlags", "AppSettings")),
        ("super", ()),
    }


CRATE = {
    "/c/src/lib.rs": "mod builder;\nmod error;\nmod parser;\npub use crate::builder::Arg;\n",
    "/c/src/builder/mod.rs": "mod arg;\npub use arg::Arg;\npub fn helper() {}\n",
    "/c/src/builder/arg.rs": "pub struct Arg { id: u8 }\nimpl Arg {\n    pub fn new() {}\n}\n",
    "/c/src/error/mod.rs": "mod kind;\npub use kind::ErrorKind;\n",
    "/c/src/error/kind.rs": "pub enum ErrorKind { Io, Format }\n",
    "/c/src/parser/error.rs": "pub struct MatchesError;\n",
}


def test_crate_paths_resolve_from_the_crate_root_not_by_a_file_name_anywhere() -> None:
    index = _index("rust", CRATE)
    # `crate::error` is src/error/mod.rs; parser/error.rs merely has the same name.
    assert _resolve(index, "use crate::error::ErrorKind;", "/c/src/parser/parser.rs") == [
        "/c/src/error/mod.rs"
    ]


def test_super_is_the_parent_module_file() -> None:
    index = _index("rust", CRATE)
    assert _resolve(index, "use super::*;", "/c/src/builder/arg.rs") == ["/c/src/builder/mod.rs"]
    assert _resolve(index, "use super::helper;", "/c/src/builder/arg.rs") == ["/c/src/builder/mod.rs"]


def test_a_re_exported_name_leads_to_the_file_that_defines_it() -> None:
    index = _index("rust", CRATE)
    cands = {
        c.path: c
        for c in _candidates("/c/src/parser/parser.rs", "rust", "use crate::builder::Arg;", index, "Arg")
    }
    arg = cands["/c/src/builder/arg.rs"]
    assert (
        arg.weight == WEIGHTS.imported and arg.imported_names == {"Arg"} and "defines `Arg`" in arg.reasons[0]
    )
    # the module that only re-exports it drops back behind the defining file
    assert cands["/c/src/builder/mod.rs"].weight <= WEIGHTS.reexports < arg.weight


def test_a_name_the_imported_module_defines_stays_there() -> None:
    index = _index("rust", CRATE)
    cands = {
        c.path: c for c in _candidates("/c/src/builder/arg.rs", "rust", "use super::helper;", index, "helper")
    }
    assert cands["/c/src/builder/mod.rs"].weight == WEIGHTS.imported
    assert cands["/c/src/builder/mod.rs"].imported_names == {"helper"}


C_TREE = {
    "/t/src/subtree.h": '#include "./array.h"\n#include <stdio.h>\ntypedef struct { int x; } Subtree;\n',
    "/t/src/array.h": '#include "./alloc.h"\n#define array_clear(self) ((self)->size = 0)\n',
    "/t/src/alloc.h": "void *ts_malloc(unsigned n);\n",
    "/t/src/other.h": "int unrelated(void);\n",
}


def test_headers_included_by_included_headers_are_candidates() -> None:
    index = _index("c", C_TREE)
    cands = {
        c.path: c for c in _candidates("/t/src/changed.c", "c", '#include "./subtree.h"', index, "Subtree")
    }
    assert cands["/t/src/subtree.h"].weight == WEIGHTS.imported
    array, alloc = cands["/t/src/array.h"], cands["/t/src/alloc.h"]
    assert array.reasons[0] == "included through subtree.h" and alloc.reasons[0] == "included through array.h"
    assert WEIGHTS.imported > array.weight > alloc.weight
    assert "/t/src/other.h" not in cands or cands["/t/src/other.h"].weight < alloc.weight


def test_includes_are_kept_in_the_persisted_index(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    (root / "a.h").write_text('#include "b.h"\nint a(void);\n')
    (root / "b.h").write_text("int b(void);\n")
    (root / "m.py").write_text("import os\n")
    first = WorkspaceIndex(str(root), tmp_path / "c")
    first.refresh()
    first.save()
    again = WorkspaceIndex(str(root), tmp_path / "c")
    assert again.refresh().reparsed == 0  # read back from disk
    index = build_symbol_index([again])
    assert index.imports(str(root / "a.h")) == ('#include "b.h"',)
    assert index.imports(str(root / "m.py")) == ()  # only where imports reach further


def test_in_c_what_the_code_uses_outweighs_the_include_list() -> None:
    # The header defining two of the names the function uses comes before a directly
    # included one defining one, even two includes away.
    index = _index(
        "c",
        {
            "/t/src/a.h": '#include "./mid.h"\n',
            "/t/src/mid.h": '#include "./deep.h"\n',
            "/t/src/b.h": "int b_used(void);\n",
            "/t/src/deep.h": "int deep_call(int x);\nint deep_two(void);\n",
        },
    )
    head = '#include "./a.h"\n#include "./b.h"'
    used = "b_used deep_call deep_two"
    ranked = [c.path for c in _candidates("/t/src/m.c", "c", head, index, used)]
    assert ranked.index("/t/src/deep.h") < ranked.index("/t/src/b.h")


def test_a_rust_file_whose_members_this_file_spells_is_preferred() -> None:
    # Both modules are imported; this file calls the methods of one of them elsewhere.
    index = _index(
        "rust",
        {
            "/c/src/lib.rs": "mod zmatched;\nmod other;\n",
            "/c/src/zmatched.rs": "pub struct M;\nimpl M {\n    pub fn push_index(&self) {}\n"
            "    pub fn append_val(&self) {}\n}\n",
            "/c/src/other.rs": "pub struct O;\nimpl O {\n    pub fn unrelated(&self) {}\n}\n",
        },
    )
    got = gather_candidates(
        CandidateQuery(
            path="/c/src/user.rs",
            language="rust",
            head_lines=("use crate::other::O;", "use crate::zmatched::M;"),
            open_paths=(),
            recent=[],
            index=index,
            used=frozenset({"O", "M"}),
            defined_here=frozenset(),
            deadline=time.perf_counter() + 1,
            mentioned=frozenset({"push_index", "append_val"}),
        )
    )
    assert [c.path for c in got][:2] == ["/c/src/zmatched.rs", "/c/src/other.rs"]


def test_a_c_file_weighs_more_of_the_headers_it_includes_than_other_languages_do() -> None:
    # parser.c includes fifteen headers; the small ones (clock.h, alloc.h) fell past the
    # fifth candidate and their names never reached the prompt.
    headers = {f"/ts/src/h{i}.h": f"void h{i}_open(void);\nvoid h{i}_close(void);\n" for i in range(8)}
    index = _index("c", headers)
    head = "\n".join(f'#include "./h{i}.h"' for i in range(8))
    used = " ".join(f"h{i}_open" for i in range(8))
    got = [c.path for c in _candidates("/ts/src/parser.c", "c", head, index, used)]
    assert set(got) == set(headers), got
    # Elsewhere a file's five strongest are still all it gets.
    py = _index("python", {f"/p/m{i}.py": f"def m{i}_open(): pass\n" for i in range(8)})
    head = "\n".join(f"from .m{i} import m{i}_open" for i in range(8))
    assert len(_candidates("/p/run.py", "python", head, py, "")) == 5
