"""What the code knows about a language lives in `lsp_assist.languages`: no other module
loads a grammar wheel or keeps its own table of language ids, extensions or comments."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "lsp_assist"
GRAMMAR_WHEEL = re.compile(r"^\s*(import|from)\s+tree_sitter_\w+", re.M)
GRAMMAR_NAME = re.compile(r"[\"']tree_sitter_(python|javascript|typescript|go|rust|java|c|cpp)[\"']")


def _outside_languages() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "languages" not in p.relative_to(PACKAGE).parts[:1]]


def test_only_the_language_profiles_name_a_grammar_wheel() -> None:
    offenders = [
        str(p.relative_to(PACKAGE))
        for p in _outside_languages()
        if GRAMMAR_WHEEL.search(p.read_text()) or GRAMMAR_NAME.search(p.read_text())
    ]
    assert offenders == []


def test_the_old_language_table_module_is_gone() -> None:
    assert not (PACKAGE / "documents" / "languages.py").exists()
    offenders = [
        str(p.relative_to(PACKAGE)) for p in _outside_languages() if "documents.languages" in p.read_text()
    ]
    assert offenders == []


LANGUAGE_NAMES = "python|javascript|typescript|tsx|go|rust|java|c|cpp"
BRANCH = re.compile(
    rf"""\b(lang|language|language_id)\s*(==|!=)\s*["']({LANGUAGE_NAMES})["']"""
    rf"""|\b(lang|language|language_id)\s+(not\s+)?in\s+[\(\[{{]\s*["']({LANGUAGE_NAMES})["']"""
)


def test_no_module_outside_languages_branches_on_a_language_name() -> None:
    offenders = [
        f"{p.relative_to(PACKAGE)}:{n}"
        for p in _outside_languages()
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if BRANCH.search(line)
    ]
    assert offenders == []


def test_the_branch_finder_sees_a_branch() -> None:
    assert BRANCH.search('    if lang == "python" and t == "x":')
    assert BRANCH.search("        if outline.language == 'go':")
    assert BRANCH.search('    if language in ("c", "cpp"):')
    assert not BRANCH.search('    if rule.kind == "python":')  # an import style, not a language
