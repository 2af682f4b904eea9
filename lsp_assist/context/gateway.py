"""The data boundary at the assembler: no part reaches a prompt before it passes here.

The runtime installs the boundary (`pipeline.boundary.admits`: governance's exclusion
globs, ignore files, the path as named and after realpath; `untitled:` buffers allowed,
any other path-less URI refused) into the engine; the assembler asks this gateway about
every part a source offers, by the file its text comes from: the current document's rows
(the whole file judged once) and each snippet of another file. A source added later has
no other way into a prompt, so it cannot forget the boundary. Redaction stays on the whole
finished prompt (`PromptBuilder`): a secret may span two parts.

A part refused here is a bug in the source that offered it (the symbol index already holds
no refused file): it is dropped and logged, by count only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from lsp_assist.context.parts import Part
from lsp_assist.structure.symbols import admit_all

log = logging.getLogger(__name__)


def part_path(path: str) -> str:
    """The path a part is judged by: a package's names line is headed by its directory
    (ending in a separator), judged as the directory, whose files the index judged one by one."""
    return path.rstrip("/") or path


class Gateway:
    """Admits parts by the file their text comes from (`admits`: the installed boundary)."""

    def __init__(self, admits: Callable[[str], bool] = admit_all) -> None:
        self.admits = admits

    def document(self, path: str) -> bool:
        """Whether rows of the current document (at `path`) may be placed."""
        return self.admits(path)

    def parts(self, offered: Sequence[Part]) -> list[Part]:
        """The parts whose file the boundary admits, in their order."""
        kept = [p for p in offered if self.admits(part_path(p.path))]
        if len(kept) != len(offered):
            log.warning(
                "data boundary: %d cross-file part(s) from excluded files refused at the assembler",
                len(offered) - len(kept),
            )
        return kept
