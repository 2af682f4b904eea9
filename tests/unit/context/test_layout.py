"""The stable (KV-cache-friendly) prompt layout of the embedded model."""

from __future__ import annotations

import itertools
import json.decoder
from pathlib import Path

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.layout import StableLayout
from lsp_assist.context.templates import render_completion
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext, Snippet

SOURCE = Path(json.decoder.__file__).read_text(encoding="utf-8")
BUDGET = 1500


def _prompt(engine: ContextEngine, text: str, line: int, col: int, layout: str = "stable") -> str:
    doc = Document("file:///w/decoder.py", "python", 1, text, "/w/decoder.py")
    ctx = engine.build(doc, Cursor(line, col), BUDGET, layout=layout)
    return render_completion(ctx, "none", "gemma").prompt


def _typing(row: int, statement: str, layout: str = "stable") -> list[str]:
    """The prompts of typing `statement` on a fresh line inserted at `row`, key by key."""
    lines = SOURCE.split("\n")
    indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
    engine = ContextEngine()
    prompts = []
    for i in range(len(statement) + 1):
        text = "\n".join([*lines[:row], indent + statement[:i], *lines[row:]])
        prompts.append(_prompt(engine, text, row, len(indent) + i, layout))
    return prompts


def test_consecutive_keystrokes_extend_the_previous_prompt_by_the_typed_character() -> None:
    statement = "chunk = _m(s, end)"
    prompts = _typing(250, statement)
    for before, after, ch in zip(prompts, prompts[1:], statement, strict=False):
        assert after == before + ch  # everything before the cursor is byte-identical


def test_the_trimmed_layout_does_not_have_that_property() -> None:
    """The reason for the stable layout: the syntax-aware selection rewrites the prompt."""
    prompts = _typing(250, "chunk = _m(s, end)", layout="trimmed")
    broken = sum(not after.startswith(before) for before, after in itertools.pairwise(prompts))
    assert broken > 0


def test_the_prompt_stays_within_the_budget_and_ends_at_the_cursor() -> None:
    lines = SOURCE.split("\n")
    engine = ContextEngine()
    for row in (5, 120, 250, 340):
        col = len(lines[row]) // 2
        doc = Document("file:///w/decoder.py", "python", 1, SOURCE, "/w/decoder.py")
        ctx = engine.build(doc, Cursor(row, col), BUDGET, layout="stable")
        assert len(ctx.prefix) <= BUDGET
        assert ctx.prefix.endswith(lines[row][:col])
        assert any(p.label == "layout.window" for p in ctx.parts)


def test_a_short_file_is_sent_whole_from_its_first_line() -> None:
    text = "import os\n\n\ndef f(x):\n    return os.path.join(x, "
    doc = Document("file:///w/a.py", "python", 1, text, "/w/a.py")
    ctx = ContextEngine().build(doc, Cursor(4, len("    return os.path.join(x, ")), BUDGET, layout="stable")
    assert ctx.prefix == text


def test_the_anchor_moves_only_in_big_steps_while_lines_are_added() -> None:
    """Writing 30 new lines (~900 characters) below row 250 moves the window's start at most
    a few times, each time by a large step, never on every line."""
    lines = SOURCE.split("\n")
    layout = StableLayout()
    written: list[str] = []
    anchors = []
    for i in range(30):
        written.append(f"        value_{i} = compute(value_{i - 1}, end)")
        text = "\n".join([*lines[:250], *written, *lines[250:]])
        doc = Document("file:///w/decoder.py", "python", 1, text, "/w/decoder.py")
        row = 250 + len(written) - 1
        anchors.append(layout.anchor_row(doc, row, int(BUDGET * 0.73)))
    moves = [b - a for a, b in itertools.pairwise(anchors) if b != a]
    assert 1 <= len(moves) <= 4, anchors
    assert all(m >= 5 for m in moves), anchors  # each move skips several lines


def test_snippets_are_sorted_and_frozen_while_the_anchor_holds() -> None:
    layout = StableLayout()
    doc = Document("file:///w/a.py", "python", 1, "x = 1\n" * 400, "/w/a.py")
    a, b, c = (
        Snippet("b.py", "def b(): ..."),
        Snippet("a.py", "def a(): ..."),
        Snippet("c.py", "def c(): ..."),
    )
    first = layout.apply(PromptContext("python", "/w/a.py", "", "", (a, b)), doc, Cursor(390, 3), BUDGET)
    assert [s.path for s in first.snippets] == ["a.py", "b.py"]
    # A new ranking on the next keystroke (same anchor) does not rewrite the prompt's start.
    second = layout.apply(PromptContext("python", "/w/a.py", "", "", (c,)), doc, Cursor(390, 4), BUDGET)
    assert second.snippets == first.snippets
    layout.forget("file:///w/a.py")
    third = layout.apply(PromptContext("python", "/w/a.py", "", "", (c,)), doc, Cursor(390, 4), BUDGET)
    assert [s.path for s in third.snippets] == ["c.py"]


def test_the_file_head_comes_first_when_the_window_misses_the_top() -> None:
    text = "import os\nimport sys\n\n" + "value = 1\n" * 400 + "result = os."
    doc = Document("file:///w/a.py", "python", 1, text, "/w/a.py")
    ctx = ContextEngine().build(doc, Cursor(403, len("result = os.")), BUDGET, layout="stable")
    assert ctx.prefix.startswith("import os\nimport sys\n")
    assert "# ...\n" in ctx.prefix
    assert ctx.prefix.endswith("value = 1\nresult = os.")
