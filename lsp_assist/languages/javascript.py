"""JavaScript (with JSX), TypeScript and TSX."""

from lsp_assist.languages.profile import LanguageProfile

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
    ),
    LanguageProfile(
        name="typescript",
        grammar=("tree_sitter_typescript", "language_typescript"),
        aliases=("typescript", "ts"),
        extensions={".ts": "typescript", ".mts": "typescript", ".cts": "typescript"},
    ),
    LanguageProfile(
        name="tsx",
        grammar=("tree_sitter_typescript", "language_tsx"),
        aliases=("tsx", "typescriptreact"),
        extensions={".tsx": "typescriptreact"},
    ),
)
