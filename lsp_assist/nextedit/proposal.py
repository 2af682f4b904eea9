"""A proposed next edit, in code points, and how one is made from offsets."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor


@dataclass(frozen=True)
class Proposal:
    """Replace `start`..`end` of `uri` (at document `version`) with `text`."""

    uri: str
    start: Cursor
    end: Cursor
    text: str
    rule: str  # "replace" | "call-site" | a model format's name
    version: int = 0


def cursor_at(doc: Document, offset: int) -> Cursor:
    """The position of a code-point offset (a binary search over the line starts)."""
    lo, hi = 0, doc.line_count - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if doc.line_start(mid) <= offset:
            lo = mid
        else:
            hi = mid - 1
    return Cursor(lo, offset - doc.line_start(lo))


def proposal(doc: Document, start: int, end: int, text: str, rule: str) -> Proposal:
    return Proposal(doc.uri, cursor_at(doc, start), cursor_at(doc, end), text, rule, doc.version)
