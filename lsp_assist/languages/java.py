"""Java."""

from lsp_assist.languages.profile import LanguageProfile

PROFILES = (
    LanguageProfile(
        name="java",
        grammar=("tree_sitter_java", "language"),
        aliases=("java",),
        extensions={".java": "java"},
    ),
)
