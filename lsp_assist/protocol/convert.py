"""Conversions between lsprotocol types and the plain domain types (no logic)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types

from lsp_assist.documents.positions import from_code_points, normalize_encoding, to_code_points
from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor


def encoding_name(encoding: Any) -> str:
    """'utf-8' | 'utf-16' | 'utf-32' from a PositionEncodingKind or string."""
    value = getattr(encoding, "value", encoding)
    return str(value or "utf-16").lower()


def to_cursor(store: DocumentStore, uri: str, pos: types.Position, encoding: str) -> Cursor:
    """Client position (in the negotiated units) -> code-point cursor, clamped to the document."""
    line = max(0, pos.line)
    text = store.line_text(uri, line)
    return Cursor(line, to_code_points(text, max(0, pos.character), normalize_encoding(encoding)))


def to_position(store: DocumentStore, uri: str, cursor: Cursor, encoding: str) -> types.Position:
    text = store.line_text(uri, cursor.line)
    return types.Position(
        line=cursor.line, character=from_code_points(text, cursor.character, normalize_encoding(encoding))
    )


def apply_changes(
    store: DocumentStore,
    uri: str,
    version: int,
    changes: Sequence[types.TextDocumentContentChangeEvent],
    encoding: str,
    observe: Callable[[int | None, int | None, int], None] | None = None,
) -> None:
    """Apply content changes in order: each range refers to the text after the previous one,
    so each is converted to code points against the store's text of that moment.

    `observe(start, end, new_len)` sees each change first, in code-point offsets of the text
    before it (None, None for a full replacement): the retention tracker follows spans so."""
    for change in changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            r = change.range
            start = to_cursor(store, uri, r.start, encoding)
            end = to_cursor(store, uri, r.end, encoding)
            if (end.line, end.character) < (start.line, start.character):
                start, end = end, start
            doc = store.get(uri)
            if observe is not None and doc is not None:
                observe(doc.offset(start), doc.offset(end), len(change.text))
            store.change(uri, version, [TextChange(start=start, end=end, text=change.text)])
        else:
            if observe is not None:
                observe(None, None, len(change.text))
            store.change(uri, version, [TextChange(start=None, end=None, text=change.text)])


def completion_list(
    text: str,
    position: types.Position,
    typed: str = "",
    start: types.Position | None = None,
    alternatives: Sequence[str] = (),
    ids: Sequence[str] = (),
) -> types.InlineCompletionList:
    """One item inserting `text` at the cursor (then one per alternative).

    `ids`: the suggestion id of each item, in order (telemetry/events.py), the argument of
    its `lspAssist.accepted` command; the clients report shown/dismissed/... by it.

    `typed`: what the user typed of this suggestion since it was computed, on this line,
    ending at the cursor; `start` is where it begins. The item then covers it (LSP 3.18):
    `range` from `start` to the cursor, `insertText` = typed + text, `filterText` the same,
    so a client that accepts fast replaces what was typed instead of adding to it.
    `alternatives`: an Invoked request's other choices, one item each after the first.
    """
    if not text:
        return types.InlineCompletionList(items=[])
    if typed and start is not None:
        item = types.InlineCompletionItem(
            insert_text=typed + text,
            filter_text=typed + text,
            range=types.Range(start=start, end=position),
            command=_accepted(ids, 0),
        )
    else:
        item = _item(text, position, _accepted(ids, 0))
    others = [
        _item(alt, position, _accepted(ids, i))
        for i, alt in enumerate((a for a in alternatives if a), start=1)
    ]
    return types.InlineCompletionList(items=[item, *others])


def _item(text: str, position: types.Position, command: types.Command) -> types.InlineCompletionItem:
    """An item inserting `text` at `position`."""
    return types.InlineCompletionItem(
        insert_text=text, range=types.Range(start=position, end=position), command=command
    )


def _accepted(ids: Sequence[str], i: int) -> types.Command:
    """The `lspAssist.accepted` command of item `i` (its suggestion id, when it has one)."""
    return types.Command(title="accepted", command="lspAssist.accepted", arguments=list(ids[i : i + 1]))
