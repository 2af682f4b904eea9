"""Rust."""

from lsp_assist.languages.profile import LanguageProfile

PROFILES = (
    LanguageProfile(
        name="rust",
        grammar=("tree_sitter_rust", "language"),
        aliases=("rust", "rs"),
        extensions={".rs": "rust"},
    ),
)
