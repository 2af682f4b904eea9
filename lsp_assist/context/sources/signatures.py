"""The in-file outline: signatures (not bodies) of this file's definitions that the code
near the cursor refers to, then the first lines of the definitions nearest the cursor.

The second part is sent only where the file gets no names line (`OUTLINE_SHARE_WITH_NAMES`):
that line carries such names at ~8 characters each, this outline a whole signature line each.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tree_sitter import Tree

from lsp_assist.context.parts import Placer
from lsp_assist.context.sources.local import Chain
from lsp_assist.languages import canonical
from lsp_assist.structure.symbols import Symbol, TreeSymbolCache, definition_names

SIGNATURES_SHARE = 0.25
OUTLINE_SHARE = 0.1
OUTLINE_SHARE_WITH_NAMES = 0.0
NEAREST_DEFINITIONS = 40  # definitions looked at for the outline, nearest the cursor first


@dataclass(frozen=True)
class InFileQuery:
    """What the in-file outline reads: the document's tree and its symbols, the names near
    the cursor and the definitions enclosing it."""

    symbols: TreeSymbolCache
    tree: Tree
    data: bytes
    language_id: str
    near: Counter[str]
    chain: Chain


class InFileOutline:
    """The in-file outline source."""

    name = "in-file outline"

    def place(
        self, place: Placer, q: InFileQuery, budget: int, outline_share: float = OUTLINE_SHARE
    ) -> set[str]:
        """Place the signatures, then (within `outline_share`) the nearest definitions'
        first lines; the names of the definitions the code near the cursor refers to."""
        # The cursor row's symbols as of the last scan while only that row was typed on
        # (`TreeSymbolCache`): rows hold, and the walk of a big class is not redone per key.
        syms = q.symbols.find(q.tree, q.data, q.near, typing_row=place.cursor_row)
        self._signatures(place, q, syms, int(budget * SIGNATURES_SHARE))
        limit = int(budget * outline_share)
        if limit > 0:
            self._nearest(place, q, limit)
        return {s.name for s in syms}

    @staticmethod
    def _signatures(place: Placer, q: InFileQuery, syms: list[Symbol], limit: int) -> None:
        typing = cursor_row = place.cursor_row
        containers = {s.container for s in syms if s.container}
        headers = {
            s.name: s
            for s in q.symbols.find(q.tree, q.data, containers, typing_row=typing)
            if s.container is None and containers
        }
        own = {(n.start_point.row, n.end_point.row) for n, _ in q.chain}
        used = 0
        for s in sorted(syms, key=lambda s: (-q.near[s.name], s.start_row)):
            if (s.start_row, s.end_row) in own or s.start_row <= cursor_row <= s.end_row:
                continue
            rows = list(range(s.sig_start_row, s.sig_end_row + 1))
            head = headers.get(s.container) if s.container else None
            if head is not None:
                rows += range(head.sig_start_row, head.sig_end_row + 1)
            used += place.rows("signatures", rows, limit - used)
        place.record("signatures", "signatures of definitions in this file used near the cursor", used)

    @staticmethod
    def _nearest(place: Placer, q: InFileQuery, limit: int) -> None:
        """An outline: the members of the enclosing class, then other top-level definitions,
        nearest first (names the next line may use that are not near yet)."""
        classes = [n for n, k in q.chain if k == "class"]
        owner = None
        if classes:
            names = definition_names(classes[0], canonical(q.language_id) or "")
            owner = names[0].text.decode("utf-8", "replace") if names and names[0].text else None
        row = place.cursor_row
        outline = q.symbols.nearest(q.tree, q.data, row, owner, NEAREST_DEFINITIONS, typing_row=row)
        extra = 0
        for s in outline:
            if extra >= limit:
                break
            extra += place.rows("outline", range(s.sig_start_row, s.sig_start_row + 1), limit - extra)
        place.record("outline", "first lines of nearby definitions (the enclosing class's first)", extra)
