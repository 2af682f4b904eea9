"""Rust."""

import re

from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.rules import ImportRule, LangSpec, OutlineRules
from lsp_assist.languages.tuning import CrossFileTuning

_RUST_SYMBOLS = LangSpec(
    defs={
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "class",
        "enum_item": "type",
        "union_item": "type",
        "trait_item": "type",
        "impl_item": "class",
        "type_item": "type",
        "const_item": "variable",
        "static_item": "variable",
        "mod_item": "module",
        "macro_definition": "function",
    },
    containers=frozenset({"impl_item", "trait_item", "mod_item"}),
    transparent=frozenset({"declaration_list", "attribute_item"}),
    imports=frozenset({"use_declaration", "extern_crate_declaration"}),
    variables=frozenset(),
)


_RUST_OUTLINE = OutlineRules(
    defs={
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "class",
        "enum_item": "enum",
        "union_item": "type",
        "trait_item": "type",
        "impl_item": "impl",
        "type_item": "type",
        "const_item": "constant",
        "static_item": "constant",
        "mod_item": "module",
        "macro_definition": "function",
        "field_declaration": "field",
        "enum_variant": "member",
    },
    containers=frozenset({"struct_item", "enum_item", "union_item", "trait_item", "impl_item", "mod_item"}),
    bodies=frozenset({"field_declaration_list", "enum_variant_list", "declaration_list"}),
    transparent=frozenset({"attribute_item"}),
    # the unit-test module (`#[cfg(test)] mod tests`, by convention): only for the crate's tests
    hidden=r"^mod tests?$",
    one_line=frozenset(
        {
            "field_declaration",
            "enum_variant",
            "const_item",
            "static_item",
            "type_item",
            "function_signature_item",
        }
    ),
)


#: How a file of this family spells an import (matched per line of its head).
_RUST_IMPORTS: tuple[ImportRule, ...] = (
    ImportRule(re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(?P<module>\w+)\s*;"), "rust_path"),
    # The whole use tree (nested groups, several lines); `_use_leaves` flattens it.
    ImportRule(
        re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?\s+)?use\s+(?P<module>[\w:{}\s,*]+?)\s*;", re.M),
        "rust_use",
        statement=True,
    ),
)


PROFILES = (
    LanguageProfile(
        name="rust",
        grammar=("tree_sitter_rust", "language"),
        aliases=("rust", "rs"),
        extensions={".rs": "rust"},
        symbols=_RUST_SYMBOLS,
        outline=_RUST_OUTLINE,
        imports=_RUST_IMPORTS,
        top_level_stops=("\nfn ", "\npub fn ", "\nimpl ", "\n#[", "\nmod "),
        import_extensions=(".rs", "/mod.rs"),
        tuning=CrossFileTuning(member_evidence=0.25),
    ),
)
