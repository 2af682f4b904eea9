"""What the code knows about a language lives in `lsp_assist.languages`: no other module
loads a grammar wheel or keeps its own table of language ids, extensions or comments."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lsp_assist.languages import PROFILES

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


#: Every name a language goes by: the profiles' canonical ids and the LSP ids they answer to.
LANGUAGE_NAMES = frozenset(n for p in PROFILES for n in (p.name, *p.aliases))


def _strings(node: ast.AST) -> set[str]:
    """The string literals `node` is, or holds as a tuple, list or set display."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def language_branches(source: str) -> list[tuple[int, str]]:
    """(line, name) of each branch on a language's name in `source`: a comparison with one
    (`canonical(x) == "python"`, `rule.kind == "python"`, `lang in ("c", "cpp")`), a `case`
    of one, or a literal collection of two or more (a table of languages to test against)."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(source)):
        names: set[str] = set()
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                names |= _strings(side) & LANGUAGE_NAMES
        elif isinstance(node, ast.MatchValue):  # `case "rust":`
            names |= _strings(node.value) & LANGUAGE_NAMES
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            listed = _strings(node) & LANGUAGE_NAMES
            if len(listed) >= 2:
                names |= listed
        found.update((getattr(node, "lineno", 0), n) for n in names)
    return sorted(found)


def test_no_module_outside_languages_branches_on_a_language_name() -> None:
    """What differs by language is asked of its profile (`languages/`), never decided here."""
    offenders = [
        f"{p.relative_to(PACKAGE)}:{line} {name!r}"
        for p in sorted(_outside_languages())
        for line, name in language_branches(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_branch_finder_sees_a_branch() -> None:
    assert language_branches('if canonical(doc.language_id) == "python":\n    pass\n') == [(1, "python")]
    assert language_branches('if rule.kind == "python" and t == "x":\n    pass\n') == [(1, "python")]
    assert language_branches("if outline.language != 'go':\n    pass\n") == [(1, "go")]
    assert language_branches('ok = language in ("c", "cpp")\n') == [(1, "c"), (1, "cpp")]
    assert language_branches('match lang:\n    case "rust":\n        pass\n') == [(2, "rust")]
    assert language_branches('TABLE = {"python", "typescript"}\n') == [(1, "python"), (1, "typescript")]
    # Naming a language as an argument is not a branch on it.
    assert language_branches('store.open(uri, "python", 1, text)\n') == []
    assert language_branches('if kind == "rust_use":\n    pass\n') == []
