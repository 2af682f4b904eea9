"""Command arguments and custom notification params, read without pygls."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import pytest

from lsp_assist.pipeline import client_args
from lsp_assist.pipeline.client_args import At, BadParams, DocumentAt, SuggestionEvent

URI = "file:///w/a.py"


class _Pos(NamedTuple):
    line: int
    character: int


def test_plain_turns_objects_and_named_tuples_into_dicts() -> None:
    value = SimpleNamespace(uri=URI, position=_Pos(1, 2), tags=[SimpleNamespace(x=None)])
    assert client_args.plain(value) == {
        "uri": URI,
        "position": {"line": 1, "character": 2},
        "tags": [{"x": None}],
    }
    assert client_args.plain([1, "a", 2.5, True]) == [1, "a", 2.5, True]


def test_uri_path_reads_file_uris_only() -> None:
    assert client_args.uri_path("file:///w/a%20b.py") == Path("/w/a b.py")
    assert client_args.uri_path("untitled:Untitled-1") is None
    assert client_args.uri_path("https://example.com/a.py") is None


@pytest.mark.parametrize(
    "args",
    [
        (URI, {"line": 3, "character": 4}),
        (URI, SimpleNamespace(line=3, character=4)),
        (URI, {"line": "3", "character": 4.0}),  # what int() accepts
    ],
)
def test_position_args_reads_uri_and_position(args: tuple[Any, ...]) -> None:
    assert client_args.position_args(args) == (URI, At(3, 4))


@pytest.mark.parametrize(
    "args",
    [(), (URI,), (URI, {"line": 3}), (URI, {"line": "x", "character": 1}), (URI, 7), (URI, None)],
)
def test_position_args_refuses_other_shapes(args: tuple[Any, ...]) -> None:
    assert client_args.position_args(args) is None


def test_position_args_keeps_the_uri_as_text() -> None:
    assert client_args.position_args((42, {"line": 0, "character": 0})) == ("42", At(0, 0))


def test_cursor_rest_reads_document_version_and_position() -> None:
    params = {"textDocument": {"uri": URI, "version": 7}, "position": {"line": 2, "character": 5}}
    assert client_args.cursor_rest(params) == DocumentAt(URI, 7, At(2, 5))
    params["textDocument"] = {"uri": URI}
    assert client_args.cursor_rest(params) == DocumentAt(URI, None, At(2, 5))


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"position": {"line": 0, "character": 0}}, "'textDocument'"),
        ({"textDocument": {"uri": 1}, "position": {"line": 0, "character": 0}}, "not a string"),
        ({"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}}, "negative position"),
        ({"textDocument": {"uri": URI, "version": "x"}, "position": {"line": 0, "character": 0}}, "int"),
        (None, "not subscriptable"),
    ],
)
def test_cursor_rest_names_what_is_wrong(params: Any, why: str) -> None:
    with pytest.raises(BadParams, match=why):
        client_args.cursor_rest(params)


def test_next_edit_request_needs_an_integer_version() -> None:
    good = {"textDocument": {"uri": URI, "version": 3}, "position": {"line": 1, "character": 2}}
    assert client_args.next_edit_request(good) == (URI, 3, At(1, 2))
    as_objects = SimpleNamespace(
        textDocument=SimpleNamespace(uri=URI, version=3), position=SimpleNamespace(line=1, character=2)
    )
    assert client_args.next_edit_request(as_objects) == (URI, 3, At(1, 2))
    assert client_args.next_edit_request({**good, "textDocument": {"uri": URI, "version": "3"}}) is None
    assert client_args.next_edit_request({**good, "position": {"line": 0, "character": -1}}) is None
    assert client_args.next_edit_request({"textDocument": {"uri": URI, "version": 3}}) is None


def test_shown_item_id_prefers_the_id_then_the_command_argument() -> None:
    assert client_args.shown_item_id({"item": {"id": "a", "command": {"arguments": ["b"]}}}) == "a"
    assert client_args.shown_item_id({"item": {"command": {"arguments": ["b"]}}}) == "b"
    assert client_args.shown_item_id({"item": {"command": {"arguments": []}}}) is None
    assert client_args.shown_item_id({"item": {"id": 5}}) is None
    assert client_args.shown_item_id({}) is None


def test_suggestion_id_is_the_first_argument_when_it_is_text() -> None:
    assert client_args.suggestion_id(("s1", "extra")) == "s1"
    assert client_args.suggestion_id((1,)) is None
    assert client_args.suggestion_id(()) is None


def test_suggestion_event_reads_counts_and_a_position_with_its_uri() -> None:
    p = {
        "id": "s1",
        "event": "accepted",
        "chars": 4,
        "offset": True,  # a bool is not a count
        "unit": "word",
        "uri": URI,
        "position": {"line": 1, "character": 2},
    }
    assert client_args.suggestion_event(p) == SuggestionEvent(
        sid="s1", kind="accepted", chars=4, offset=None, unit="word", uri=URI, at=At(1, 2)
    )


def test_suggestion_event_drops_a_position_it_cannot_read() -> None:
    base = {"id": "s1", "event": "shown"}
    no_uri = client_args.suggestion_event({**base, "position": {"line": 1, "character": 2}})
    bad_pos = client_args.suggestion_event({**base, "uri": URI, "position": {"line": "x", "character": 2}})
    assert no_uri == bad_pos == SuggestionEvent(sid="s1", kind="shown")


@pytest.mark.parametrize("p", [None, [], {"id": "s1"}, {"id": 1, "event": "shown"}])
def test_suggestion_event_needs_an_id_and_an_event(p: Any) -> None:
    assert client_args.suggestion_event(p) is None


def test_jsonable_replaces_nan_at_any_depth() -> None:
    nan = float("nan")
    assert client_args.jsonable({"a": nan, 1: [nan, (2.0, "x")]}) == {"a": None, "1": [None, [2.0, "x"]]}
