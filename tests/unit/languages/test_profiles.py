"""Every language has one complete profile, and the registry answers from the profiles."""

from __future__ import annotations

import importlib

import pytest

from lsp_assist import languages
from lsp_assist.languages import PROFILES, registry


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_every_profile_is_complete_and_its_grammar_loads(profile: languages.LanguageProfile) -> None:
    assert profile.complete() == []
    module, entry = profile.grammar
    assert callable(getattr(importlib.import_module(module), entry))
    assert languages.get_language(profile.name) is not None
    for alias in profile.aliases:
        assert languages.canonical(alias) == profile.name
    for ext, lsp_id in profile.extensions.items():
        assert languages.language_id_for_path(f"/src/x{ext}") == lsp_id
        assert languages.canonical(lsp_id) is not None


def test_names_aliases_and_extensions_are_each_claimed_once() -> None:
    names = [p.name for p in PROFILES]
    aliases = [a for p in PROFILES for a in p.aliases]
    extensions = [e for p in PROFILES for e in p.extensions]
    assert len(set(names)) == len(names)
    assert len(set(aliases)) == len(aliases)
    assert len(set(extensions)) == len(extensions)


def test_comment_syntax_comes_from_the_profile_then_the_other_languages() -> None:
    assert languages.comment_syntax("python") == ("#", "")
    assert languages.comment_syntax("py") == ("#", "")  # an alias reads its profile
    assert languages.comment_syntax("go") == ("//", "")
    assert languages.comment_syntax("html") == ("<!--", "-->")  # no grammar: the table
    assert languages.comment_syntax("no-such-language") == ("//", "")
    assert not set(registry.OTHER_COMMENTS) & {p.name for p in PROFILES}


def test_a_c_header_is_indexed_as_cpp_whatever_the_editor_calls_it() -> None:
    assert languages.index_language("c", "/src/parser.h") == "cpp"
    assert languages.index_language("c", "/src/parser.c") == "c"
    assert languages.index_language("cpp", "/src/a.h") == "cpp"
    assert languages.language_id_for_path("/src/parser.h") == "cpp"
