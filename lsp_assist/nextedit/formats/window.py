"""What a next-edit prompt shows, gathered once for every format.

The editable region is whole lines around the cursor (`region_lines` above and below);
the model may rewrite only that. Around it, as much context again; before it, the edit
history as unified diffs (oldest first) and excerpts of the recently viewed files. Every
text passes `redact` before it is placed (key-like strings replaced), and only documents
the history recorded appear (the history never records an excluded file).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lsp_assist.config.schema import NextEditConfig
from lsp_assist.documents.store import Document, DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.nextedit.history import DocumentHistory, EditHistory

Redact = Callable[[str], tuple[str, int]]

#: Characters of each recently viewed file's excerpt, and how many files.
FILE_EXCERPT_CHARS = 1500
MAX_FILES = 3


@dataclass(frozen=True)
class Window:
    """One document's next-edit prompt material (code points; texts already redacted)."""

    path: str
    language: str
    region_start: int  # offset of the editable region in the document
    region_end: int
    region: str  # the region's text as the prompt shows it (redacted)
    original_region: str  # the same lines before the last edit (Sweep's "original")
    cursor: int  # offset of the cursor inside `region`
    above: str  # context lines before the region
    below: str  # context lines after it
    start_of_file: bool
    diffs: tuple[str, ...]  # unified diffs of the recent edits, oldest first
    files: tuple[tuple[str, str], ...]  # (path, excerpt) of recently viewed files
    redactions: int = 0
    region_redacted: bool = False  # `region` differs from the document's text there


@dataclass(frozen=True)
class Rendered:
    """A rendered prompt: the text (the user message for chat models), a system message
    for chat models ("" otherwise) and stop strings."""

    prompt: str
    system: str = ""
    stop: tuple[str, ...] = ()


def _line_span(doc: Document, first: int, last: int) -> tuple[int, int]:
    first, last = max(0, first), min(doc.line_count - 1, last)
    start = doc.line_start(first)
    end = doc.line_start(last) + doc.line_length(last)
    return start, end


def _relative(doc: Document, uri: str) -> str:
    return doc.path or uri


def _original(history: DocumentHistory, text: str, start: int, end: int) -> str:
    """The region's text before the last edit (the last edit undone where it lies inside)."""
    last = history.last
    if last is None or not (start <= last.offset and last.end <= end):
        return text[start:end]
    return text[start : last.offset] + last.old + text[last.end : end]


def build_window(
    doc: Document,
    store: DocumentStore,
    history: EditHistory,
    cursor: Cursor,
    config: NextEditConfig,
    redact: Redact,
) -> Window | None:
    """The window around `cursor` (None when `doc` has no history: excluded or unopened)."""
    region_lines, max_edits = config.region_lines, config.prompt_edits
    own = history.get(doc.uri)
    if own is None:
        return None
    text = doc.text
    start, end = _line_span(doc, cursor.line - region_lines, cursor.line + region_lines)
    above_start, _ = _line_span(doc, cursor.line - 2 * region_lines, cursor.line - 2 * region_lines)
    _, below_end = _line_span(doc, cursor.line + 2 * region_lines, cursor.line + 2 * region_lines)
    count = 0

    def clean(value: str) -> str:
        nonlocal count
        out, n = redact(value)
        count += n
        return out

    raw_region = text[start:end]
    region = clean(raw_region)
    at = min(max(doc.offset(cursor) - start, 0), len(raw_region))
    diffs = (
        [clean(e.unified(_relative(doc, doc.uri))) for e in list(own.edits)[-max_edits:]] if max_edits else []
    )
    files: list[tuple[str, str]] = []
    for uri in history.viewed():
        other = store.get(uri)
        if uri == doc.uri or other is None or history.get(uri) is None:
            continue
        files.append((_relative(other, uri), clean(other.text[:FILE_EXCERPT_CHARS])))
        if len(files) >= MAX_FILES:
            break
    return Window(
        path=_relative(doc, doc.uri),
        language=doc.language_id,
        region_start=start,
        region_end=end,
        region=region,
        original_region=clean(_original(own, text, start, end)),
        # With a redacted region the cursor is placed by the text before it, redacted too.
        cursor=at if region == raw_region else len(clean(raw_region[:at])),
        above=clean(text[above_start:start]),
        below=clean(text[end:below_end]),
        start_of_file=above_start == 0 and start == 0,
        diffs=tuple(diffs),
        files=tuple(files),
        redactions=count,
        region_redacted=region != raw_region,
    )
