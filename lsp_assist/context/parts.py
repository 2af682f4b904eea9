"""What sources offer and how the assembler places it: parts, the ledger, the placer.

A source never writes into a prompt. It offers parts: rows of the current file (placed
through a `Placer`, which owns the row selection and its budget) or text of another file
(a `Snippet`, placed by the assembler). Either way the part names the file its text comes
from, and the gateway (`context/gateway.py`) admits it first. The ledger records, per
label, why a part was kept and its size: `lsp-assist context` prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from lsp_assist.context.trimming import LineSelection
from lsp_assist.domain import PromptPart, Snippet

GAP_LABELS = (
    (
        "gap_markers",
        "one marker line per skipped stretch of the file (long docstrings and"
        " block comments of other definitions are skipped to keep more code)",
    ),
    ("gap_fill", "blank lines kept instead of a marker (no dearer)"),
)


@dataclass(frozen=True)
class Part:
    """One piece of context a source offers: its label and why, the file its text comes
    from (what the gateway judges), its value and its size.

    `value` is what the source thinks the piece is worth (a snippet's score): each source
    ranks its own pieces by value per character within its share; the order between
    sources is the assembler's (the measured one). `size` is its characters."""

    label: str
    reason: str
    path: str
    value: float = 0.0
    size: int = 0
    snippet: Snippet | None = None


class ContextSource(Protocol):
    """A kind of context (the local window, the file's names line, other files' outlines,
    the editor's definitions...): it offers parts; the assembler decides and places them."""

    name: str


class PartLedger:
    """Characters per labelled part, in the order parts were first added."""

    def __init__(self) -> None:
        self._chars: dict[str, int] = {}
        self._why: dict[str, str] = {}
        self._line_labels: set[str] = set()

    def line(self, label: str, reason: str, chars: int) -> None:
        """A part made of whole rows of the file (its size is measured at the end)."""
        self._line_labels.add(label)
        self.add(label, reason, chars)

    def add(self, label: str, reason: str, chars: int) -> None:
        if chars <= 0:
            return
        self._chars[label] = self._chars.get(label, 0) + chars
        self._why.setdefault(label, reason)

    def items(self, measured: dict[str, int]) -> list[PromptPart]:
        """Parts in order; line-based parts take their measured size from the selection."""
        for label, reason in GAP_LABELS:
            if measured.get(label):
                self._chars.setdefault(label, 0)
                self._why.setdefault(label, reason)
        out = []
        for k, v in self._chars.items():
            chars = measured.get(k, 0) if k in self._line_labels or k.startswith("gap_") else v
            if chars > 0:
                out.append(PromptPart(k, self._why[k], chars))
        return out


class Placer:
    """The only writer of the current file's rows into a prompt: each call places one part
    (rows under a label, within a cap) and records it in the ledger. The assembler makes
    one only for a file the gateway admitted."""

    def __init__(self, sel: LineSelection, ledger: PartLedger) -> None:
        self.sel = sel
        self.ledger = ledger

    # Read-only views for sources choosing their rows.
    @property
    def kept(self) -> set[int]:
        return self.sel.kept

    @property
    def cursor_row(self) -> int:
        return self.sel.cursor_row

    @property
    def skipper(self) -> Callable[[int], tuple[int, int] | None] | None:
        return self.sel.skipper

    def rows(self, label: str, rows: Iterable[int], cap: int | None = None) -> int:
        """All of `rows` or none, under `label`; the characters added."""
        self.sel.label = label
        return self.sel.try_add(rows, cap)

    def grow(self, label: str, span: tuple[int, int, int], cap: int) -> int:
        """Rows one by one from `span[0]` towards `span[1]` by `span[2]` while they fit."""
        self.sel.label = label
        start, stop, step = span
        return self.sel.grow(start, stop, step, cap)

    def record(self, label: str, reason: str, chars: int) -> None:
        """A row part's entry in the ledger (its size is measured at the end)."""
        self.ledger.line(label, reason, chars)


def snippet_chars(snippets: Sequence[Snippet]) -> int:
    return sum(len(s.text) for s in snippets)
