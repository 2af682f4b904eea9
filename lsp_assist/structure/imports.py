"""How each language spells an import (data), and the import lines the index keeps.

The symbol index (`symbols.py`, which records a file's import lines when it indexes it)
and the context engine's candidate search (which resolves them) share these rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from lsp_assist.languages import PROFILES, canonical
from lsp_assist.languages.rules import ImportRule

HEAD_ROWS = 400  # imports are looked for in the first rows only
#: Languages where a file sees what its imports import (`LanguageProfile.transitive_imports`).
TRANSITIVE_IMPORTS = frozenset(p.name for p in PROFILES if p.transitive_imports)
#: Import spellings per language (canonical name), from the profiles.
IMPORT_RULES: dict[str, tuple[ImportRule, ...]] = {p.name: p.imports for p in PROFILES if p.imports}


def index_imports(lines: Iterable[str], language: str) -> tuple[str, ...]:
    """The import lines of a file's head kept in the index, for the languages whose
    imports reach further (`TRANSITIVE_IMPORTS`: a C header's own includes); () otherwise."""
    language = canonical(language) or language
    if language not in TRANSITIVE_IMPORTS:
        return ()
    rules = [r for r in IMPORT_RULES.get(language, ()) if not r.statement]
    return tuple(
        line.strip()
        for line in itertools.islice(lines, HEAD_ROWS)
        if any(r.pattern.search(line) for r in rules)
    )
