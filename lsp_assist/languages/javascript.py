"""JavaScript (with JSX), TypeScript and TSX."""

import os
import re
from collections.abc import Sequence

from lsp_assist.languages.imports import ImportRef, ImportStyle, PathFinder
from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.rules import ImportRule, LangSpec, OutlineRules

_JS_DEFS_SYMBOLS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
}


_JS_SYMBOLS = LangSpec(
    defs=_JS_DEFS_SYMBOLS,
    containers=frozenset({"class_declaration", "class"}),
    transparent=frozenset({"export_statement", "class_body"}),
    imports=frozenset({"import_statement"}),
    variables=frozenset({"lexical_declaration", "variable_declaration"}),
)


_TS_SYMBOLS = LangSpec(
    defs={
        **_JS_DEFS_SYMBOLS,
        "abstract_class_declaration": "class",
        "interface_declaration": "type",
        "type_alias_declaration": "type",
        "enum_declaration": "type",
        "function_signature": "function",
        "method_signature": "method",
        "abstract_method_signature": "method",
        "internal_module": "module",
        "module": "module",
    },
    containers=frozenset({"class_declaration", "abstract_class_declaration", "internal_module", "module"}),
    transparent=frozenset({"export_statement", "class_body", "statement_block", "ambient_declaration"}),
    imports=frozenset({"import_statement"}),
    variables=frozenset({"lexical_declaration", "variable_declaration"}),
)


_JS_DEFS_OUTLINE = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "field_definition": "field",
    "lexical_declaration": "constant",
    "variable_declaration": "constant",
    "expression_statement": "constant",  # CommonJS: `exports.parse = ...`, `req.accepts = function`
}


_JS_OUTLINE = OutlineRules(
    defs=_JS_DEFS_OUTLINE,
    containers=frozenset({"class_declaration", "class"}),
    bodies=frozenset({"class_body"}),
    transparent=frozenset({"export_statement"}),
    self_attr=r"\bthis\.([A-Za-z_$][\w$]*)\s*=(?!=)",
    one_line=frozenset(
        {"field_definition", "lexical_declaration", "variable_declaration", "expression_statement"}
    ),
)


_TS_OUTLINE = OutlineRules(
    defs={
        **_JS_DEFS_OUTLINE,
        "abstract_class_declaration": "class",
        "interface_declaration": "type",
        "type_alias_declaration": "type",
        "enum_declaration": "enum",
        "function_signature": "function",
        "method_signature": "method",
        "abstract_method_signature": "method",
        "public_field_definition": "field",
        "property_signature": "field",
        "enum_assignment": "member",
        "property_identifier": "member",
        "internal_module": "module",
    },
    containers=frozenset(
        {
            "class_declaration",
            "abstract_class_declaration",
            "interface_declaration",
            "enum_declaration",
            "internal_module",
        }
    ),
    bodies=frozenset({"class_body", "interface_body", "object_type", "enum_body", "statement_block"}),
    transparent=frozenset({"export_statement", "ambient_declaration"}),
    self_attr=r"\bthis\.([A-Za-z_$][\w$]*)\s*=(?!=)",
    hidden=r"^(?:(?:static|readonly|async|override)\s+)*(?:private\b|#)",
    param_members=frozenset({"accessibility_modifier", "readonly", "override_modifier"}),
    one_line=frozenset(
        {
            "field_definition",
            "public_field_definition",
            "property_signature",
            "enum_assignment",
            "property_identifier",
            "lexical_declaration",
            "variable_declaration",
            "expression_statement",
            "type_alias_declaration",
            "method_signature",
            "abstract_method_signature",
            "function_signature",
        }
    ),
)


class RelativePathImports(ImportStyle):
    """`import x from "./a"`, `require("../b")`: a path from this file's directory; a bare
    name is a package from node_modules, not workspace code."""

    def resolve(self, ref: ImportRef, current: str, finder: PathFinder, exts: Sequence[str]) -> list[str]:
        if not ref.module.startswith("."):
            return []
        base = os.path.join(os.path.dirname(current), ref.module)
        if finder.exists(os.path.normpath(base)):
            return [os.path.normpath(base)]
        return finder.with_exts(base, exts)


_RELATIVE_PATH = RelativePathImports("relative_path")

#: How a file of this family spells an import (matched per line of its head).
_JS_IMPORTS: tuple[ImportRule, ...] = (
    ImportRule(
        re.compile(
            r"""^\s*(?:import|export)\s+(?:type\s+)?(?:(?P<names>[\w$*{}\s,]+?)\s+from\s+)?['"](?P<module>[^'"]+)['"]"""
        ),
        _RELATIVE_PATH,
    ),
    ImportRule(re.compile(r"""require\(\s*['"](?P<module>[^'"]+)['"]\s*\)"""), _RELATIVE_PATH),
)


PROFILES = (
    LanguageProfile(
        name="javascript",
        grammar=("tree_sitter_javascript", "language"),
        # tree-sitter-javascript parses JSX.
        aliases=("javascript", "javascriptreact", "js", "jsx"),
        extensions={
            ".js": "javascript",
            ".mjs": "javascript",
            ".cjs": "javascript",
            ".jsx": "javascriptreact",
        },
        symbols=_JS_SYMBOLS,
        outline=_JS_OUTLINE,
        imports=_JS_IMPORTS,
        top_level_stops=("\nfunction ", "\nexport ", "\nclass ", "\nimport "),
        import_extensions=(".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", "/index.js", "/index.ts"),
    ),
    LanguageProfile(
        name="typescript",
        grammar=("tree_sitter_typescript", "language_typescript"),
        aliases=("typescript", "ts"),
        extensions={".ts": "typescript", ".mts": "typescript", ".cts": "typescript"},
        symbols=_TS_SYMBOLS,
        outline=_TS_OUTLINE,
        imports=_JS_IMPORTS,
        top_level_stops=("\nfunction ", "\nexport ", "\nclass ", "\nimport ", "\ninterface "),
        import_extensions=(".ts", ".tsx", ".d.ts", ".js", "/index.ts", "/index.tsx", "/index.js"),
    ),
    LanguageProfile(
        name="tsx",
        grammar=("tree_sitter_typescript", "language_tsx"),
        aliases=("tsx", "typescriptreact"),
        extensions={".tsx": "typescriptreact"},
        symbols=_TS_SYMBOLS,
        outline=_TS_OUTLINE,
        imports=_JS_IMPORTS,
        top_level_stops=("\nfunction ", "\nexport ", "\nclass ", "\nimport ", "\ninterface "),
        import_extensions=(".tsx", ".ts", ".js", "/index.tsx", "/index.ts"),
    ),
)
