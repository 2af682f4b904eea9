"""The imports a file's head spells, and the import lines the index keeps.

How each language spells an import is data on its profile (`ImportRule`s); what a match
names is its `ImportStyle`'s to say (`languages/imports.py`): this module reads a head
with them and asks no language's name. The symbol index (`symbols.py`, which records a
file's import lines when it indexes it) and the context engine's candidate search (which
resolves the imports, `context/import_paths.py`) share it.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Iterable

from lsp_assist.languages import PROFILES, canonical, profile
from lsp_assist.languages.imports import ImportRef
from lsp_assist.languages.rules import ImportRule
from lsp_assist.memory import ByteLRU, strings_bytes

HEAD_ROWS = 400  # imports are looked for in the first rows only
#: Languages where a file sees what its imports import (`LanguageProfile.transitive_imports`).
TRANSITIVE_IMPORTS = frozenset(p.name for p in PROFILES if p.transitive_imports)
#: Import spellings per language (canonical name), from the profiles.
IMPORT_RULES: dict[str, tuple[ImportRule, ...]] = {p.name: p.imports for p in PROFILES if p.imports}
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


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


def parse_imports(lines: Iterable[str], language: str) -> list[ImportRef]:
    """The imports spelled on these lines (Python's `import a, b` gives one per module)."""
    all_rules = IMPORT_RULES.get(language, ())
    rules = tuple(r for r in all_rules if not r.statement)
    lines = list(lines)
    out: list[ImportRef] = []
    for rule in all_rules:
        if rule.statement:  # statements that may span lines: matched on the joined head
            for m in rule.pattern.finditer("\n".join(lines)):
                out.extend(rule.style.statement_refs(m.group("module"), " ".join(m.group().split())))
    spelled = profile(language)
    block = spelled.import_block if spelled is not None else None
    in_block = False
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if block is not None:  # a quoted path alone on a line counts only inside the block
            if s.startswith(block):
                in_block = True
                continue
            if in_block and s.startswith(")"):
                in_block = False
                continue
            if not in_block and not s.startswith(block[: block.index(" ") + 1]):
                continue
        for rule in rules:
            for m in rule.pattern.finditer(line):
                raw_names = m.groupdict().get("names") or ""
                names = tuple(n for n in _NAME.findall(raw_names) if n not in ("as", "type"))
                out.extend(rule.style.line_refs(m.group("module"), names, s))
            if out and out[-1].line == s:
                break
    return out


def _imports_bytes(key: tuple[tuple[str, ...], str], refs: tuple[ImportRef, ...]) -> int:
    head = key[0]
    return sys.getsizeof(head) + strings_bytes(head) + sys.getsizeof(refs) + _REF_BYTES * len(refs)


# A file's head (up to `HEAD_ROWS` rows, its import block) and the imports parsed from it:
# each edit that adds or removes a row there makes a new one.
IMPORTS_MEMO_BYTES = 1 << 20
_REF_BYTES = 400  # an `ImportRef`: the object, its module, names and line
_IMPORTS: ByteLRU[tuple[tuple[str, ...], str], tuple[ImportRef, ...]] = ByteLRU(
    IMPORTS_MEMO_BYTES, _imports_bytes, 512
)


# Each head row's matches, rule by rule, for the languages whose imports are read a line at
# a time: a head that differs in one row (the cursor's own row is left out of it, so every
# fresh position has its own head) is read again from these, not with every rule's regex.
LINE_MEMO_BYTES = 1 << 20
PerRule = tuple[tuple[ImportRef, ...], ...]  # a row's matches, rule by rule
_LINES: ByteLRU[tuple[str, str], PerRule] = ByteLRU(
    LINE_MEMO_BYTES, lambda key, refs: sys.getsizeof(key[0]) + 120 + _REF_BYTES * sum(map(len, refs)), 8192
)


def imports_memo_bytes() -> int:
    return _IMPORTS.nbytes


def import_rows_memo_bytes() -> int:
    return _LINES.nbytes


def cached_imports(head: tuple[str, ...], language: str) -> tuple[ImportRef, ...]:
    """`parse_imports` of a file's head, reused while its import rows stay the same."""
    key = (head, language)
    got = _IMPORTS.get(key)
    if got is None:
        rules = line_rules(language)
        got = tuple(parse_imports(head, language) if rules is None else _parse_lines(head, language, rules))
        _IMPORTS.put(key, got)
    return got


def line_rules(language: str) -> tuple[ImportRule, ...] | None:
    """The rules, when `language`'s imports are read one line at a time with no state
    (no statement spanning lines, no import block); else None."""
    all_rules = IMPORT_RULES.get(language, ())
    spelled = profile(language)
    if any(r.statement for r in all_rules) or (spelled is not None and spelled.import_block is not None):
        return None
    return all_rules


def row_matches(line: str, s: str, language: str, rules: tuple[ImportRule, ...]) -> PerRule:
    """What each of `rules` (`line_rules(language)`) finds on `line` (`s`: it stripped),
    memoized; () when none finds anything."""
    key = (line, language)
    per_rule = _LINES.get(key)
    if per_rule is None:
        per_rule = _line_matches(line, s, rules)
        _LINES.put(key, per_rule)
    return per_rule


def join_rows(rows: Iterable[tuple[str, PerRule]]) -> list[ImportRef]:
    """The imports of rows in order, from each row's (stripped text, `row_matches`): as
    `parse_imports`, the rules in order until one took the row."""
    out: list[ImportRef] = []
    for s, per_rule in rows:
        for refs in per_rule:
            out.extend(refs)
            if out and out[-1].line == s:
                break
    return out


def _parse_lines(lines: Iterable[str], language: str, rules: tuple[ImportRule, ...]) -> list[ImportRef]:
    """`parse_imports` for a language `line_rules` accepts, each line's matches memoized."""
    stripped = ((line, line.strip()) for line in lines)
    return join_rows((s, row_matches(line, s, language, rules)) for line, s in stripped if s)


def _line_matches(line: str, s: str, rules: tuple[ImportRule, ...]) -> PerRule:
    per_rule: list[tuple[ImportRef, ...]] = []
    for rule in rules:
        refs: list[ImportRef] = []
        for m in rule.pattern.finditer(line):
            raw_names = m.groupdict().get("names") or ""
            names = tuple(n for n in _NAME.findall(raw_names) if n not in ("as", "type"))
            refs.extend(rule.style.line_refs(m.group("module"), names, s))
        per_rule.append(tuple(refs))
    return () if not any(per_rule) else tuple(per_rule)
