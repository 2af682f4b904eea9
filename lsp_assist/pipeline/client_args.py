"""What clients send in custom notifications and command arguments, read into typed values.

pygls hands custom params over as dicts, lists or its own attribute objects; `plain` turns
them into dicts and lists, and the readers below take that apart. A shape a reader does not
know gives None (or `BadParams`), so the handler answers "usage" or ignores the message
instead of failing. Positions stay in the client's units (`At`): converting them to the
document's code points needs the document, which is the protocol layer's job.

No pygls here: tests/unit/pipeline/test_client_args.py reads every shape without a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse


class BadParams(ValueError):
    """A notification's params are not of the documented shape (the text says what broke)."""


@dataclass(frozen=True)
class At:
    """A position as the client sent it (in the negotiated units, not yet clamped)."""

    line: int
    character: int


@dataclass(frozen=True)
class DocumentAt:
    """A document and a position in it; `version` None when the client did not send one."""

    uri: str
    version: int | None
    at: At


@dataclass(frozen=True)
class SuggestionEvent:
    """`{id, event, chars?, offset?, position?, uri?, unit?}` of `lspAssist/suggestionEvent`."""

    sid: str
    kind: str
    chars: int | None = None
    offset: int | None = None
    unit: str = ""
    # Where an accepted text starts (wins over `offset`): set only with a `uri` to read it in.
    uri: str | None = None
    at: At | None = None


def plain(value: Any) -> Any:
    """A custom notification's params as plain dicts and lists (pygls may hand over objects)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if hasattr(value, "__dict__"):
        return {k: plain(v) for k, v in vars(value).items()}
    return value


def uri_path(uri: str) -> Path | None:
    """The filesystem path of a `file:` URI, else None."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def position_args(args: Sequence[Any]) -> tuple[str, At] | None:
    """`[uri, {line, character}]` (the escalate and recompute commands; the position may be
    an object with `line` and `character`); None when the arguments are not that."""
    if len(args) < 2:
        return None
    pos = args[1]
    try:
        line = int(pos["line"] if isinstance(pos, dict) else pos.line)
        character = int(pos["character"] if isinstance(pos, dict) else pos.character)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return str(args[0]), At(line, character)


def cursor_rest(params: Any) -> DocumentAt:
    """`{textDocument: {uri, version?}, position}` of `lspAssist/cursorRest`; raises
    `BadParams` on a bad one (a negative position included)."""
    try:
        doc, pos = params["textDocument"], params["position"]
        uri = doc["uri"]
        if not isinstance(uri, str):
            raise TypeError("textDocument.uri is not a string")
        version = doc.get("version")
        line, character = int(pos["line"]), int(pos["character"])
        if line < 0 or character < 0:
            raise ValueError("negative position")
        return DocumentAt(uri, None if version is None else int(version), At(line, character))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise BadParams(str(exc)) from exc


def next_edit_request(value: Any) -> tuple[str, int, At] | None:
    """(uri, version, position) of a next-edit request's `{textDocument: {uri, version},
    position}` (dicts or objects); None unless the uri is a string, the version an int and
    the position not negative."""
    try:
        doc, pos = _get(value, "textDocument"), _get(value, "position")
        uri, version = _get(doc, "uri"), _get(doc, "version")
        line, character = int(_get(pos, "line")), int(_get(pos, "character"))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    if not isinstance(uri, str) or not isinstance(version, int) or line < 0 or character < 0:
        return None
    return uri, version, At(line, character)


def shown_item_id(value: Any) -> str | None:
    """The id of a shown next edit: `item.id`, else its command's argument (copilot-lsp sends
    `{item: {command}}` only)."""
    try:
        item = _get(value, "item")
    except (AttributeError, KeyError, TypeError):
        return None
    for path in (("id",), ("command", "arguments")):
        try:
            found = item
            for key in path:
                found = _get(found, key)
        except (AttributeError, KeyError, TypeError):
            continue
        if isinstance(found, list) and found:
            found = found[0]
        if isinstance(found, str):
            return found
    return None


def suggestion_id(args: Sequence[Any]) -> str | None:
    """The suggestion id a command's `[id]` names (accepted, next-edit accept and reject)."""
    return args[0] if args and isinstance(args[0], str) else None


def suggestion_event(p: Any) -> SuggestionEvent | None:
    """`lspAssist/suggestionEvent` params (plain data); None without a string id and event.
    A position that is not two integers is left out, as if none had been sent."""
    if not isinstance(p, dict):
        return None
    sid, kind = p.get("id"), p.get("event")
    if not isinstance(sid, str) or not isinstance(kind, str):
        return None
    uri, at = p.get("uri"), None
    pos = p.get("position")
    if isinstance(pos, dict) and isinstance(uri, str):
        try:
            at = At(int(pos["line"]), int(pos["character"]))
        except (KeyError, TypeError, ValueError):
            at = None
    return SuggestionEvent(
        sid=sid,
        kind=kind,
        chars=int_or_none(p.get("chars")),
        offset=int_or_none(p.get("offset")),
        unit=str(p.get("unit") or ""),
        uri=uri if at is not None else None,
        at=at,
    )


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def jsonable(value: Any) -> Any:
    """Replace NaN (not JSON) with None, recursively."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _get(value: Any, key: str) -> Any:
    return value[key] if isinstance(value, dict) else getattr(value, key)
