"""Java."""

import re
from collections.abc import Sequence

from lsp_assist.languages.imports import ImportRef, ImportStyle, PathFinder
from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.rules import ImportRule, LangSpec, OutlineRules

_JAVA_SYMBOLS = LangSpec(
    defs={
        "class_declaration": "class",
        "interface_declaration": "type",
        "enum_declaration": "type",
        "record_declaration": "class",
        "method_declaration": "method",
        "constructor_declaration": "method",
        "field_declaration": "variable",
    },
    containers=frozenset(
        {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
    ),
    transparent=frozenset({"class_body", "interface_body", "enum_body", "enum_body_declarations"}),
    imports=frozenset({"import_declaration", "package_declaration"}),
    variables=frozenset(),
    declaration_names="variable_declarator",
)


_JAVA_OUTLINE = OutlineRules(
    defs={
        "class_declaration": "class",
        "interface_declaration": "type",
        "enum_declaration": "enum",
        "record_declaration": "class",
        "method_declaration": "method",
        "constructor_declaration": "method",
        "field_declaration": "field",
        "constant_declaration": "constant",
        "enum_constant": "member",
    },
    containers=frozenset(
        {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
    ),
    bodies=frozenset({"class_body", "interface_body", "enum_body"}),
    transparent=frozenset({"enum_body_declarations"}),
    one_line=frozenset({"field_declaration", "constant_declaration", "enum_constant"}),
    hidden=r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:\w+\s+)*?private\b",
)


class JavaPathImports(ImportStyle):
    """`import a.b.C;` (and `a.b.C.member`): the file of the longest prefix of the path
    that names one (`a/b/C.java`)."""

    def resolve(self, ref: ImportRef, current: str, finder: PathFinder, exts: Sequence[str]) -> list[str]:
        segs = ref.module.split(".")
        for n in range(len(segs), 1, -1):
            got = finder.suffix("/".join(segs[:n]) + ".java")
            if got:
                return got
        return []


#: How a file of this family spells an import (matched per line of its head).
_JAVA_IMPORTS: tuple[ImportRule, ...] = (
    ImportRule(
        re.compile(r"^\s*import\s+(?:static\s+)?(?P<module>[\w.]+?)(?:\.\*)?\s*;"),
        JavaPathImports("java_path"),
    ),
)


PROFILES = (
    LanguageProfile(
        name="java",
        grammar=("tree_sitter_java", "language"),
        aliases=("java",),
        extensions={".java": "java"},
        symbols=_JAVA_SYMBOLS,
        outline=_JAVA_OUTLINE,
        imports=_JAVA_IMPORTS,
        top_level_stops=("\npublic class ", "\nclass ", "\nimport "),
        import_extensions=(".java",),
        package_by_directory=True,
    ),
)
