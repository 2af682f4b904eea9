"""Go."""

from lsp_assist.languages.profile import LanguageProfile

PROFILES = (
    LanguageProfile(
        name="go",
        grammar=("tree_sitter_go", "language"),
        aliases=("go", "golang"),
        extensions={".go": "go"},
    ),
)
