"""An answered suggestion as the items an inline completion list shows: where the first
item's range starts, what of the typed text it covers, and the suggestion id of each item.

A suggestion may have been typed into since it was computed (typing-through, attach:
`Suggestion.typed`). The first item then covers what was typed on the cursor's line: its
range starts that many characters before the cursor and its text starts with the typed
part, so a client that accepts fast replaces what was typed instead of adding to it (LSP
3.18). A range stays on one line, so only the typed text after the last newline counts,
and only when it fits before the cursor.

Positions here are code-point cursors; the protocol layer converts them to the client's
units. No pygls here: tests/unit/pipeline/test_inline_items.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from lsp_assist.domain import Cursor, Suggestion
from lsp_assist.telemetry.events import Labels


class Issuer(Protocol):
    """What issues suggestion ids (the runtime: `Runtime.suggestion_labels`/`issue_suggestion`)."""

    def suggestion_labels(self, uri: str, tier: str, provider: str, model: str, source: str) -> Labels: ...

    def issue_suggestion(self, uri: str, at: Cursor, text: str, typed: int, labels: Labels) -> str: ...


@dataclass(frozen=True)
class Items:
    """What the items of one answer need besides the suggestion's own text."""

    start: Cursor  # where the first item's range starts (the cursor when `typed` is empty)
    typed: str  # the typed text the first item covers, ending at the cursor
    ids: list[str]  # the suggestion id of each item: the first, then each non-empty alternative


def typed_span(cursor: Cursor, typed: str) -> tuple[Cursor, str]:
    """(start, covered): the typed text on the cursor's line the first item covers, and
    where it starts; (cursor, "") when nothing is covered."""
    last = typed.rsplit("\n", 1)[-1]  # a range stays on one line
    if last and len(last) <= cursor.character:
        return Cursor(cursor.line, cursor.character - len(last)), last
    return cursor, ""


def items(issuer: Issuer, uri: str, cursor: Cursor, result: Suggestion) -> Items:
    """The range start, covered text and ids of `result`'s items at `cursor` in `uri`."""
    start, covered = typed_span(cursor, result.typed)
    labels = issuer.suggestion_labels(uri, result.tier, result.provider, result.model, result.outcome.value)
    ids = [issuer.issue_suggestion(uri, start, covered + result.text, len(covered), labels)]
    ids += [issuer.issue_suggestion(uri, cursor, alt, 0, labels) for alt in result.alternatives if alt]
    return Items(start=start, typed=covered, ids=ids)


def answered_line(result: Suggestion, version: int, cursor: Cursor) -> str:
    """The debug line of an answered request: numbers only, never code
    (benchmarks/local_latency.py reads it)."""
    stages = result.stages
    return (
        f"inline completion answered: outcome={result.outcome.value} tier={result.tier}"
        f" version={version} line={cursor.line} col={cursor.character}"
        f" ttft_ms={stages.get('ttft', 0.0) + stages.get('connect', 0.0):.1f}"
        f" total_ms={stages.get('total', 0.0):.1f} chars={len(result.text)}"
    )
