"""C and C++.

Headers are C++ (Vim/Neovim's default filetype, clangd's guess): C++'s grammar reads C
headers too, C's grammar reads none of a C++ header's classes or namespaces. So the index
reads every header as C++, and an open header the editor calls "c" (VS Code does) is
outlined the same way: tree-sitter C reads a header whose `extern "C"` wrapper meets `#if`
halves of a struct as one error, no entries at all.
"""

import os
import re
from collections.abc import Sequence

from lsp_assist.languages.imports import ImportRef, ImportStyle, PathFinder
from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.rules import ImportRule, LangSpec, OutlineRules
from lsp_assist.languages.tuning import CrossFileTuning

#: C and C++ headers (read as C++).
HEADER_EXTENSIONS = frozenset({".h", ".hh", ".hpp", ".hxx"})

_C_DEFS_SYMBOLS = {
    "function_definition": "function",
    "struct_specifier": "class",
    "union_specifier": "class",
    "enum_specifier": "type",
    "type_definition": "type",
    "declaration": "variable",
}


_C_SYMBOLS = LangSpec(
    defs=_C_DEFS_SYMBOLS,
    containers=frozenset(),
    transparent=frozenset({"preproc_ifdef", "preproc_if", "preproc_else", "linkage_specification"}),
    imports=frozenset({"preproc_include"}),
    variables=frozenset(),
    declaration_names="declarator",
    prototypes=True,
)


_CPP_SYMBOLS = LangSpec(
    defs={
        **_C_DEFS_SYMBOLS,
        "class_specifier": "class",
        "namespace_definition": "module",
        "field_declaration": "variable",
    },
    containers=frozenset({"class_specifier", "struct_specifier", "namespace_definition"}),
    transparent=frozenset(
        {
            "preproc_ifdef",
            "preproc_if",
            "preproc_else",
            "linkage_specification",
            "template_declaration",
            "declaration_list",
            "field_declaration_list",
        }
    ),
    imports=frozenset({"preproc_include", "using_declaration"}),
    variables=frozenset(),
    declaration_names="declarator",
    prototypes=True,
)


_C_DEFS_OUTLINE = {
    "function_definition": "function",
    "struct_specifier": "class",
    "union_specifier": "class",
    "enum_specifier": "enum",
    "type_definition": "type",
    "declaration": "constant",
    "field_declaration": "field",
    "enumerator": "member",
    "preproc_def": "constant",
    "preproc_function_def": "function",
}


_C_FORWARD_OUTLINE = frozenset({"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"})


# `extern "C" { ... }` (a linkage_specification, its body a declaration_list) guards nearly
# every C library header's API for C++ callers (a C++ namespace's body is walked as one).
_C_TRANSPARENT_OUTLINE = frozenset(
    {
        "preproc_ifdef",
        "preproc_if",
        "preproc_elif",
        "preproc_else",
        "linkage_specification",
        "declaration_list",
    }
)


_C_OUTLINE = OutlineRules(
    defs=_C_DEFS_OUTLINE,
    containers=frozenset({"struct_specifier", "union_specifier", "enum_specifier", "type_definition"}),
    bodies=frozenset({"field_declaration_list", "enumerator_list"}),
    unnamed_transparent=frozenset({"enum_specifier"}),
    forward=_C_FORWARD_OUTLINE,
    transparent=_C_TRANSPARENT_OUTLINE,
    one_line=frozenset(
        {"declaration", "field_declaration", "enumerator", "preproc_def", "preproc_function_def"}
    ),
)


_CPP_OUTLINE = OutlineRules(
    defs={
        **_C_DEFS_OUTLINE,
        "class_specifier": "class",
        "namespace_definition": "module",
        "template_declaration": "template",
        "alias_declaration": "type",
    },
    containers=frozenset(
        {
            "struct_specifier",
            "union_specifier",
            "enum_specifier",
            "type_definition",
            "class_specifier",
            "namespace_definition",
        }
    ),
    bodies=frozenset({"field_declaration_list", "enumerator_list", "declaration_list"}),
    transparent=_C_TRANSPARENT_OUTLINE | {"template_declaration"},
    unnamed_transparent=frozenset({"namespace_definition", "enum_specifier"}),
    forward=_C_FORWARD_OUTLINE,
    one_line=frozenset(
        {
            "declaration",
            "field_declaration",
            "enumerator",
            "preproc_def",
            "preproc_function_def",
            "alias_declaration",
        }
    ),
)


class IncludeImports(ImportStyle):
    """`#include "a/b.h"`: beside this file, else wherever a known path ends with it."""

    def resolve(self, ref: ImportRef, current: str, finder: PathFinder, exts: Sequence[str]) -> list[str]:
        local = os.path.normpath(os.path.join(os.path.dirname(current), ref.module))
        if finder.exists(local):
            return [local]
        return finder.suffix(ref.module)


#: How a file of this family spells an import (matched per line of its head).
_C_IMPORTS: tuple[ImportRule, ...] = (
    ImportRule(re.compile(r'^\s*#\s*include\s+"(?P<module>[^"]+)"'), IncludeImports("include")),
)


PROFILES = (
    LanguageProfile(
        name="c",
        grammar=("tree_sitter_c", "language"),
        aliases=("c",),
        extensions={".c": "c"},
        index_as=(HEADER_EXTENSIONS, "cpp"),
        symbols=_C_SYMBOLS,
        outline=_C_OUTLINE,
        imports=_C_IMPORTS,
        top_level_stops=("\n#include", "\n#define"),
        transitive_imports=True,
        import_extensions=("",),
        companions=(".h", ".c"),
        tuning=CrossFileTuning(
            max_candidates=9,
            affinity_share=0.0,
            affinity_weight=0.8,
            declared_in_headers=True,
            near_words=True,
        ),
    ),
    LanguageProfile(
        name="cpp",
        grammar=("tree_sitter_cpp", "language"),
        aliases=("cpp", "c++", "cuda-cpp", "objective-cpp"),
        extensions={
            ".h": "cpp",
            ".cc": "cpp",
            ".cpp": "cpp",
            ".cxx": "cpp",
            ".hpp": "cpp",
            ".hh": "cpp",
            ".hxx": "cpp",
        },
        symbols=_CPP_SYMBOLS,
        outline=_CPP_OUTLINE,
        imports=_C_IMPORTS,
        top_level_stops=("\n#include", "\n#define", "\nnamespace "),
        transitive_imports=True,
        import_extensions=("",),
        companions=(".h", ".hpp", ".hh", ".cc", ".cpp", ".cxx"),
        tuning=CrossFileTuning(member_evidence=0.1),
    ),
)
