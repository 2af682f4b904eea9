"""Definitions from the editor's language server (`lspAssist/definitions`), as a source.

What lsp-assist's own outline of a file already has is left to the outline (one copy, with
its signature when the code uses it); the rest goes first on the cross-file budget, at most
`EDITOR_SHARE` of it (`context/editor_definitions.py` ranks and cuts them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from lsp_assist.context.editor_definitions import (
    EDITOR_SHARE,
    EditorDefinition,
    pick_editor_definitions,
)
from lsp_assist.domain import Snippet


class EditorDefinitions:
    """The editor-definitions source: picks within its share and labels what it sent."""

    name = "editor definitions"

    def __init__(self) -> None:
        self.names: dict[str, tuple[str, ...]] = {}  # per path: the names sent, for the labels

    def offer(
        self,
        defs: Sequence[EditorDefinition],
        names: tuple[frozenset[str], frozenset[str], frozenset[str]],
        current_path: str,
        budget: int,
        outlined: Callable[[str, str], bool],
    ) -> list[Snippet]:
        """Snippets of the definitions no outline has (`outlined(path, name)`) that the code
        at the cursor uses (`names`: near the cursor, used by the function, on its line)."""
        near, used, cursor_line = names
        picked = pick_editor_definitions(
            [d for d in defs if not outlined(d.path, d.name)],
            current_path=current_path,
            near=near,
            used=used,
            cursor_line=cursor_line,
            budget=int(budget * EDITOR_SHARE),
        )
        self.names = {p: tuple(n) for p, n in picked.names.items()}
        return picked.snippets

    def label(self, snip: Snippet) -> tuple[str, str]:
        """The part's label and reason: the names it defines, and where."""
        names = ", ".join(self.names.get(snip.path, ()))
        return (
            f"editor:{os.path.basename(snip.path)}",
            f"from the editor's language server: definitions of {names} in {snip.path}",
        )
