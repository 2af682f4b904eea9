"""The file's imports: those naming something near the cursor first, the others capped.

Imports that name nothing near the cursor carry the fewest names per character of any
part (0.04-0.13 unique names per 1,000 characters; the JDK's 30-line import blocks took
530), so they get a small share of their own.
"""

from __future__ import annotations

import re
from collections import Counter

from tree_sitter import Tree

from lsp_assist.context.crossfile import IDENT
from lsp_assist.context.long_lines import row_head
from lsp_assist.context.parts import Placer
from lsp_assist.context.prose import end_row
from lsp_assist.documents.store import Document
from lsp_assist.languages.rules import LangSpec

IMPORTS_SHARE = 0.2
IMPORTS_OTHER_SHARE = 0.05
IMPORTS_OTHER_MIN = 150  # chars: a small budget keeps a short import block whole
MAX_MISSES = 40  # top-level statements past the last import before the search stops
FALLBACK_ROWS = 300  # no tree: rows searched for import-looking lines

_FALLBACK_IMPORT = re.compile(
    r"^\s*(import\s|from\s+\S+\s+import\s|#\s*include\b|use\s|package\s|extern\s+crate\s)"
    r"|\brequire\(['\"]"
)


class Imports:
    """The imports source."""

    name = "imports"

    def place(self, place: Placer, doc: Document, found: list[tuple[range, bool]], budget: int) -> None:
        """Place the import statements `found` (`statements`) within their shares of `budget`."""
        import_budget = int(budget * IMPORTS_SHARE)
        other_budget = max(IMPORTS_OTHER_MIN, int(budget * IMPORTS_OTHER_SHARE))
        used = other = 0
        for rows, hit in found:
            if hit:
                got = place.rows("imports", rows, import_budget - used)
            else:
                got = place.rows("imports", rows, min(import_budget - used, other_budget - other))
                other += got
            used += got
        place.record("imports", "the file's imports", used)


def statements(
    doc: Document, tree: Tree | None, spec: LangSpec | None, near: Counter[str], row: int
) -> list[tuple[range, bool]]:
    """Import statements as row ranges, each with whether it names an identifier near
    the cursor: those first."""
    found: list[range] = []
    if tree is not None and spec is not None:
        misses = 0
        for child in tree.root_node.named_children:
            if child.start_point.row >= row or misses > MAX_MISSES:
                break
            if child.type in spec.imports:
                found.append(range(child.start_point.row, end_row(child) + 1))
                misses = 0
            elif "comment" not in child.type:
                misses += 1
    else:
        for r in range(min(row, FALLBACK_ROWS)):
            if _FALLBACK_IMPORT.search(row_head(doc, r)):
                found.append(range(r, r + 1))
    ranked: list[tuple[int, int, range]] = []
    for rows in found:
        text = " ".join(row_head(doc, r) for r in rows)
        hits = sum(1 for t in IDENT.findall(text) if t in near)
        ranked.append((-min(hits, 1), rows.start, rows))
    ranked.sort(key=lambda t: (t[0], t[1]))
    return [(r, h < 0) for h, _, r in ranked]
