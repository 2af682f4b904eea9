"""What lsp-assist knows about each language: one profile per language, one registry.

`profile.py` defines `LanguageProfile`; one module per family holds its profiles
(`python`, `javascript` (with TypeScript), `go`, `rust`, `java`, `c` (with C++));
`registry.py` lists them and answers the questions the rest of the code asks (canonical
ids, file extensions, grammars, comment syntax); `imports.py` defines the import styles a
profile's rules carry (what an import names, which files it reaches). See
docs/adding-a-language.md.
"""

from lsp_assist.languages.c import HEADER_EXTENSIONS
from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.registry import (
    PROFILES,
    canonical,
    comment_syntax,
    get_language,
    index_language,
    language_id_for_path,
    line_comment,
    profile,
    supported_languages,
    tuning_for,
)
from lsp_assist.languages.syntax import IDENTIFIER_NODE_TYPES

__all__ = [
    "HEADER_EXTENSIONS",
    "IDENTIFIER_NODE_TYPES",
    "PROFILES",
    "LanguageProfile",
    "canonical",
    "comment_syntax",
    "get_language",
    "index_language",
    "language_id_for_path",
    "line_comment",
    "profile",
    "supported_languages",
    "tuning_for",
]
