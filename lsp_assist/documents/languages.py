"""Map LSP language ids and file extensions to tree-sitter languages.

Grammars come from the per-language wheels (offline, about 0.1 MB each). Anything we
cannot map returns None and callers fall back to line-based handling, never an error.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os

from tree_sitter import Language

_log = logging.getLogger(__name__)

# Canonical language id -> (module, entry point in that module).
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}

# LSP language ids (as editors send them) -> canonical id.
_ALIASES: dict[str, str] = {
    "python": "python",
    "py": "python",
    "javascript": "javascript",
    "javascriptreact": "javascript",  # tree-sitter-javascript parses JSX
    "js": "javascript",
    "jsx": "javascript",
    "typescript": "typescript",
    "ts": "typescript",
    "typescriptreact": "tsx",
    "tsx": "tsx",
    "go": "go",
    "golang": "go",
    "rust": "rust",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "c++": "cpp",
    "cuda-cpp": "cpp",
    "objective-cpp": "cpp",
}

_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    # Headers are C++ (Vim/Neovim's default filetype, clangd's guess): C++'s grammar reads C
    # headers too, C's grammar reads none of a C++ header's classes or namespaces.
    ".h": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
}


#: C and C++ headers (read as C++, see `_EXTENSIONS`).
HEADER_EXTENSIONS = frozenset({".h", ".hh", ".hpp", ".hxx"})


def canonical(language_id: str) -> str | None:
    """The grammar name for an LSP language id, or None when we have no grammar."""
    return _ALIASES.get(language_id.strip().lower())


def index_language(language_id: str, path: str) -> str:
    """The grammar the workspace index reads this file with: a C header is read as C++ (see
    `_EXTENSIONS`) whatever the editor calls it, so an open header (VS Code says "c") gets
    the outline its indexed copy has (tree-sitter C reads a header whose `extern "C"`
    wrapper meets `#if` halves of a struct as one error: no entries at all)."""
    lang = canonical(language_id) or language_id
    if lang == "c" and os.path.splitext(path)[1].lower() in HEADER_EXTENSIONS:
        return "cpp"
    return lang


def language_id_for_path(path: str) -> str:
    """Guess an LSP language id from a file name; "plaintext" when unknown."""
    ext = os.path.splitext(path)[1].lower()
    return _EXTENSIONS.get(ext, "plaintext")


@functools.cache
def _load(name: str) -> Language | None:
    module_name, entry = _GRAMMARS[name]
    try:
        module = importlib.import_module(module_name)
        return Language(getattr(module, entry)())
    except Exception:  # a broken or missing wheel degrades to line-based context
        _log.warning("tree-sitter grammar %s unavailable", name, exc_info=True)
        return None


def get_language(language_id: str) -> Language | None:
    """The cached tree-sitter Language for an LSP language id, or None (line-based fallback)."""
    name = canonical(language_id)
    return _load(name) if name is not None else None


def supported_languages() -> tuple[str, ...]:
    """Canonical names of the grammars we know about."""
    return tuple(_GRAMMARS)


#: Node types that spell a definition's name in the shipped grammars (identifiers, type
#: and field names, C++ qualified/destructor/operator names).
IDENTIFIER_NODE_TYPES = frozenset(
    {
        "identifier",
        "type_identifier",
        "field_identifier",
        "property_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "scoped_identifier",
    }
)
