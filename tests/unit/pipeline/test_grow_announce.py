"""Growth announcements (`AnswerStore.grew`) follow the user who typed on into the suggestion.

A stream started at one keystroke; the next keystroke's request attached to it (typing
through the start of its answer), so the editor shows the answer at the newer version. The
stream's further lines must be announced there, or the editor drops the announcement as
stale and the ghost never grows (seen in the real VS Code).
"""

from __future__ import annotations

from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.request import Target
from lsp_assist.pipeline.typing_index import TypingIndex

URI = "file:///b.py"
BEFORE = "def f(prices):\n   "
AFTER = "\nprint(f([1]))\n"


def _store_and_target() -> tuple[DocumentStore, AnswerStore, Target, list[tuple[str, int, Cursor]]]:
    store = DocumentStore()
    store.open(URI, "python", 4, BEFORE + AFTER, "/b.py")
    snap = store.snapshot(URI)
    assert snap is not None
    target = Target(snap, len(BEFORE), Cursor(1, 3))
    answers = AnswerStore(SuggestionCache(None), TypingIndex(), store)
    seen: list[tuple[str, int, Cursor]] = []
    answers.on_suggestion_ready = lambda uri, version, cursor: seen.append((uri, version, cursor))
    return store, answers, target, seen


def _type(store: DocumentStore, version: int, text: str) -> None:
    store.open(URI, "python", version, text, "/b.py")  # the document as the editor has it now


def test_growth_is_announced_where_the_user_typed_on_into_it() -> None:
    store, answers, target, seen = _store_and_target()
    _type(store, 5, BEFORE + " " + AFTER)  # one more space: the start of the suggestion
    answers.grew(target, " tax = subtotal * rate\n    total = subtotal + tax", "fast")
    assert seen == [(URI, 5, Cursor(1, 4))]


def test_growth_at_the_stream_own_version_is_announced_there() -> None:
    _, answers, target, seen = _store_and_target()
    answers.grew(target, " tax = 1\n    total = 2", "fast")
    assert seen == [(URI, 4, Cursor(1, 3))]


def test_growth_stops_when_the_user_typed_something_else() -> None:
    store, answers, target, seen = _store_and_target()
    _type(store, 5, BEFORE + "x" + AFTER)
    answers.grew(target, " tax = 1\n    total = 2", "fast")
    _type(store, 6, "something else entirely\n")
    answers.grew(target, " tax = 1\n    total = 2\n    return total", "fast")
    assert seen == []


def test_the_stream_end_is_announced_where_the_user_typed_on_into_it() -> None:
    store, answers, target, seen = _store_and_target()
    _type(store, 5, BEFORE + " " + AFTER)
    answers.stream_ended("k", target, " tax = 1\n    total = 2", "fast", shown=" tax = 1")
    assert seen == [(URI, 5, Cursor(1, 4))]
