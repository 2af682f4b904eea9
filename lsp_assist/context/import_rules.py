"""How each language spells an import (data), and the import lines the index keeps.

Its own module so that the symbol index (`symbols.py`, which records a file's import
lines when it indexes it) and the candidate search (`neighbours.py`, which resolves them)
share the rules without importing each other.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from lsp_assist.languages import canonical

HEAD_ROWS = 400  # imports are looked for in the first rows only
#: Languages where a file sees what its imports import (a C header's own includes): the
#: index keeps their files' import lines, and those files are candidates too.
TRANSITIVE_IMPORTS = frozenset({"c", "cpp"})


@dataclass(frozen=True)
class ImportRule:
    """One way a language spells an import: `pattern`'s groups `module` and optional `names`."""

    pattern: re.Pattern[str]
    kind: str  # python | relative_path | go_path | rust_path | rust_use | java_path | include
    #: matched against the head's joined text, not per line (a statement spanning lines:
    #: Rust's `use crate::{a, b::{c, d}};`)
    statement: bool = False


def _r(p: str) -> re.Pattern[str]:
    return re.compile(p)


#: Import spellings per language (canonical name). Matched per line of the file's head.
IMPORT_RULES: dict[str, tuple[ImportRule, ...]] = {
    "python": (
        ImportRule(_r(r"^\s*from\s+(?P<module>\.*[\w.]*)\s+import\s+\(?(?P<names>[^#)]*)"), "python"),
        ImportRule(
            _r(r"^\s*import\s+(?P<module>[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)"), "python"
        ),
    ),
    "javascript": (
        ImportRule(
            _r(
                r"""^\s*(?:import|export)\s+(?:type\s+)?(?:(?P<names>[\w$*{}\s,]+?)\s+from\s+)?['"](?P<module>[^'"]+)['"]"""
            ),
            "relative_path",
        ),
        ImportRule(_r(r"""require\(\s*['"](?P<module>[^'"]+)['"]\s*\)"""), "relative_path"),
    ),
    "go": (ImportRule(_r(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"(?P<module>[^"]+)"\s*$'), "go_path"),),
    "rust": (
        ImportRule(_r(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(?P<module>\w+)\s*;"), "rust_path"),
        # The whole use tree (nested groups, several lines); `_use_leaves` flattens it.
        ImportRule(
            re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?\s+)?use\s+(?P<module>[\w:{}\s,*]+?)\s*;", re.M),
            "rust_use",
            statement=True,
        ),
    ),
    "java": (ImportRule(_r(r"^\s*import\s+(?:static\s+)?(?P<module>[\w.]+?)(?:\.\*)?\s*;"), "java_path"),),
    "c": (ImportRule(_r(r'^\s*#\s*include\s+"(?P<module>[^"]+)"'), "include"),),
}
IMPORT_RULES["typescript"] = IMPORT_RULES["tsx"] = IMPORT_RULES["javascript"]
IMPORT_RULES["cpp"] = IMPORT_RULES["c"]


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
