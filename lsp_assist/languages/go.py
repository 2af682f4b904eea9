"""Go."""

import re
from collections.abc import Sequence

from lsp_assist.languages.imports import ImportRef, ImportStyle, PathFinder
from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.rules import ImportRule, LangSpec, OutlineRules
from lsp_assist.languages.tuning import DEFAULT, CrossFileTuning

_GO_SYMBOLS = LangSpec(
    defs={
        "function_declaration": "function",
        "method_declaration": "method",
        "type_spec": "type",
        "type_alias": "type",
        "const_spec": "variable",
        "var_spec": "variable",
    },
    containers=frozenset(),
    transparent=frozenset({"type_declaration", "const_declaration", "var_declaration", "var_spec_list"}),
    imports=frozenset({"import_declaration", "package_clause"}),
    variables=frozenset(),
)


_GO_OUTLINE = OutlineRules(
    defs={
        "function_declaration": "function",
        "method_declaration": "method",
        "type_spec": "type",
        "type_alias": "type",
        "const_spec": "constant",
        "var_spec": "constant",
        "field_declaration": "field",
        "method_elem": "method",
        "method_spec": "method",
    },
    containers=frozenset({"type_spec"}),
    bodies=frozenset({"field_declaration_list", "interface_type"}),
    transparent=frozenset({"type_declaration", "const_declaration", "var_declaration", "var_spec_list"}),
    one_line=frozenset({"const_spec", "var_spec", "field_declaration", "method_elem", "method_spec"}),
    prefix={"type_spec": "type ", "type_alias": "type ", "const_spec": "const ", "var_spec": "var "},
    multi_name=frozenset({"const_spec", "var_spec", "field_declaration"}),
    receiver=r"^func \(\s*(?:\w+\s+)?\*?\s*(\w+)",
    groups=frozenset({"const_declaration", "var_declaration", "var_spec_list"}),
    typed=True,
)


#: The file names of a package's directory that are not the package (its tests).
_GO_TESTS = ("_test.go",)


class GoPathImports(ImportStyle):
    """`import "net/http"`: the files of the package's directory, by the path's last two
    segments (else its last), at most as many as a default candidate list holds."""

    def resolve(self, ref: ImportRef, current: str, finder: PathFinder, exts: Sequence[str]) -> list[str]:
        segs = ref.module.strip("/").split("/")
        return [
            p
            for p in finder.in_dir_named("/".join(segs[-2:])) or finder.in_dir_named(segs[-1])
            if p.endswith(".go") and not p.endswith(_GO_TESTS)
        ][: DEFAULT.max_candidates]


#: How a file of this family spells an import (matched per line of its head).
_GO_IMPORTS: tuple[ImportRule, ...] = (
    ImportRule(
        re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"(?P<module>[^"]+)"\s*$'), GoPathImports("go_path")
    ),
)


PROFILES = (
    LanguageProfile(
        name="go",
        grammar=("tree_sitter_go", "language"),
        aliases=("go", "golang"),
        extensions={".go": "go"},
        symbols=_GO_SYMBOLS,
        outline=_GO_OUTLINE,
        imports=_GO_IMPORTS,
        top_level_stops=("\nfunc ", "\ntype ", "\nimport "),
        package_by_directory=True,
        package_skips=_GO_TESTS,
        import_block="import (",
        tuning=CrossFileTuning(max_candidates=6, spread=0.6),
    ),
)
