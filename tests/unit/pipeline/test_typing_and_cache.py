"""Typing-through, backspace recovery, and the two-level suggestion cache."""

from __future__ import annotations

from pathlib import Path

from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.typing_index import TypingIndex

TEXT = "def add(a, b):\n    \n"
OFF = TEXT.index("\n    ") + 5


def test_typing_through_answers_the_rest_of_the_suggestion() -> None:
    idx = TypingIndex()
    idx.remember("u", TEXT, OFF, "return a + b", "fast")
    typed = TEXT[:OFF] + "ret" + TEXT[OFF:]
    hit = idx.lookup("u", typed, OFF + 3)
    assert hit is not None and hit.text == "urn a + b" and hit.typed == 3


def test_typing_something_else_or_editing_elsewhere_misses() -> None:
    idx = TypingIndex()
    idx.remember("u", TEXT, OFF, "return a + b", "fast")
    assert idx.lookup("u", TEXT[:OFF] + "x" + TEXT[OFF:], OFF + 1) is None
    edited_after = TEXT[:OFF] + "\n# changed below\n"
    assert idx.lookup("u", edited_after, OFF) is None
    assert idx.lookup("other", TEXT, OFF) is None


def test_backspace_finds_the_earlier_suggestion_and_the_longest_wins() -> None:
    idx = TypingIndex()
    idx.remember("u", TEXT, OFF, "return a + b", "fast")
    idx.remember("u", TEXT, OFF, "return a + b\n    # done", "fast")  # enrichment
    hit = idx.lookup("u", TEXT, OFF)
    assert hit is not None and hit.text == "return a + b\n    # done"


def test_a_replacement_wins_over_a_longer_line_typed_into() -> None:
    idx = TypingIndex()
    idx.remember("u", TEXT, OFF, "return a + b if a else b", "fast")
    typed = TEXT[:OFF] + "r" + TEXT[OFF:]
    idx.remember("u", typed, OFF + 1, "eturn b", "fast")  # not a replacement: the longest wins
    hit = idx.lookup("u", typed, OFF + 1)
    assert hit is not None and hit.text == "eturn a + b if a else b"
    idx.forget_found("u", typed, OFF + 1)  # a rewrite comes
    idx.remember("u", typed, OFF + 1, "eturn a", "fast")
    hit = idx.lookup("u", typed, OFF + 1)
    assert hit is not None and hit.text == "eturn a"
    assert idx.lookup("u", TEXT, OFF) is None  # the line it replaced is gone


def test_cache_survives_a_restart(tmp_path: Path) -> None:
    c1 = SuggestionCache(tmp_path, memory_entries=16)
    c1.put("k", "value")  # no running loop: written to disk at once
    assert c1.get("k") == "value"
    c1.close()
    c2 = SuggestionCache(tmp_path, memory_entries=16)
    assert c2.get("k") == "value"
    assert c2.get("missing") is None
    assert (c2.hits, c2.misses) == (1, 1)
    c2.close()


def test_memory_layer_is_bounded_and_works_without_a_disk() -> None:
    c = SuggestionCache(None, memory_entries=16)
    for i in range(40):
        c.put(f"k{i}", "v")
    assert c.get("k0") is None and c.get("k39") == "v"
    c.put("empty", "")
    assert c.get("empty") is None


def test_a_broken_cache_dir_degrades_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    c = SuggestionCache(blocker / "sub", memory_entries=16)
    c.put("k", "v")
    assert c.get("k") == "v"
