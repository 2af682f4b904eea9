"""C and C++.

Headers are C++ (Vim/Neovim's default filetype, clangd's guess): C++'s grammar reads C
headers too, C's grammar reads none of a C++ header's classes or namespaces. So the index
reads every header as C++, and an open header the editor calls "c" (VS Code does) is
outlined the same way: tree-sitter C reads a header whose `extern "C"` wrapper meets `#if`
halves of a struct as one error, no entries at all.
"""

from lsp_assist.languages.profile import LanguageProfile

#: C and C++ headers (read as C++).
HEADER_EXTENSIONS = frozenset({".h", ".hh", ".hpp", ".hxx"})

PROFILES = (
    LanguageProfile(
        name="c",
        grammar=("tree_sitter_c", "language"),
        aliases=("c",),
        extensions={".c": "c"},
        index_as=(HEADER_EXTENSIONS, "cpp"),
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
    ),
)
