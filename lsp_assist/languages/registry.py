"""The registry of language profiles, and what the rest of the code asks of it.

Everything else asks here: the canonical id for an LSP language id, the language of a
file name, the grammar to parse with (loaded once per process), the grammar the index
reads a file with, a language's comment syntax. Nothing outside `lsp_assist.languages`
branches on a language's name to learn these.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os

from tree_sitter import Language

from lsp_assist.languages import c, go, java, javascript, python, rust
from lsp_assist.languages.comments import OTHER_COMMENTS
from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.tuning import DEFAULT, CrossFileTuning

_log = logging.getLogger(__name__)

#: Every profile, one line per language family module.
PROFILES: tuple[LanguageProfile, ...] = (
    *python.PROFILES,
    *javascript.PROFILES,
    *go.PROFILES,
    *rust.PROFILES,
    *java.PROFILES,
    *c.PROFILES,
)

_BY_NAME: dict[str, LanguageProfile] = {p.name: p for p in PROFILES}
_ALIASES: dict[str, str] = {alias: p.name for p in PROFILES for alias in p.aliases}
_EXTENSIONS: dict[str, str] = {ext: lsp_id for p in PROFILES for ext, lsp_id in p.extensions.items()}


def profile(name: str) -> LanguageProfile | None:
    """The profile of a canonical id, or an LSP language id's (None when unknown)."""
    return _BY_NAME.get(name) or _BY_NAME.get(canonical(name) or "")


def canonical(language_id: str) -> str | None:
    """The grammar name for an LSP language id, or None when we have no grammar."""
    return _ALIASES.get(language_id.strip().lower())


def index_language(language_id: str, path: str) -> str:
    """The grammar the workspace index reads this file with (a C header as C++, see
    `languages/c.py`), whatever the editor calls it, so an open file gets the outline its
    indexed copy has."""
    lang = canonical(language_id) or language_id
    p = _BY_NAME.get(lang)
    if p is not None and p.index_as is not None:
        extensions, other = p.index_as
        if os.path.splitext(path)[1].lower() in extensions:
            return other
    return lang


def language_id_for_path(path: str) -> str:
    """Guess an LSP language id from a file name; "plaintext" when unknown."""
    return _EXTENSIONS.get(os.path.splitext(path)[1].lower(), "plaintext")


def comment_syntax(language: str) -> tuple[str, str]:
    """(start, end) of a line comment in `language`; C-style `//` when unknown."""
    p = profile(language.lower())
    if p is not None:
        return p.comment
    return OTHER_COMMENTS.get(language.lower(), ("//", ""))


def line_comment(language: str) -> str:
    """The token that starts a line comment in `language`."""
    return comment_syntax(language)[0]


@functools.cache
def _load(name: str) -> Language | None:
    module_name, entry = _BY_NAME[name].grammar
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
    return tuple(_BY_NAME)


def tuning_for(language: str) -> CrossFileTuning:
    """The cross-file step's numbers for `language` (the defaults when it has no profile)."""
    p = profile(language)
    return p.tuning if p is not None else DEFAULT
