"""Python."""

from lsp_assist.languages.profile import LanguageProfile

PROFILES = (
    LanguageProfile(
        name="python",
        grammar=("tree_sitter_python", "language"),
        aliases=("python", "py"),
        extensions={".py": "python", ".pyi": "python", ".pyw": "python"},
        comment=("#", ""),
    ),
)
