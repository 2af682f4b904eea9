"""The rewrite model's prompt: as much code before the cursor as it reads in time, cut where
typing does not move the cut (issue 36).

The code model reads 60-110 prompt tokens/s on two cores: the typing model's 1,500-character
window (300-440 tokens) was 3-5 s of reading, more than the ~2 s its warm-up gets while the
user reads, so the rewrite read most of it again after the rest.
"""

from __future__ import annotations

import dataclasses
import itertools

from lsp_assist.context.templates import render_completion
from lsp_assist.domain import PromptContext, Snippet
from lsp_assist.providers.model_rates import ModelRates
from lsp_assist.providers.prompt_budget import fit_prompt
from lsp_assist.providers.rewrite_prompt import (
    MIN_PREFIX_CHARS,
    PREFIX_STEP_SHARE,
    REST_CUT_SUFFIX_LINES,
    REWRITE_MIN_NEW,
    REWRITE_ON_SCREEN_S,
    REWRITE_SUFFIX_CHARS,
    REWRITE_SUFFIX_LINES,
    MiddleStart,
    render,
    rest_cut,
    rewrite_allowance,
    rewrite_chars,
    rewrite_context,
    rewrite_prefix_chars,
    shaped,
)

LINES = [f"    value_{i} = compute(value_{i - 1}, {i})\n" for i in range(1, 200)]


def _ctx(above: list[str], typed: str) -> PromptContext:
    suffix = "".join(f"    after_{i}()\n" for i in range(10))
    return PromptContext(language="python", path="/a.py", prefix="".join(above) + typed, suffix=suffix)


def test_without_a_length_only_the_suffix_is_cut() -> None:
    ctx = _ctx(LINES[:100], "    res")
    short = rewrite_context(ctx)
    assert short.prefix == ctx.prefix
    assert short.suffix.count("\n") == REWRITE_SUFFIX_LINES


def test_the_prefix_is_whole_lines_ending_at_the_cursor_and_about_the_length() -> None:
    ctx = _ctx(LINES[:100], "    res")
    short = rewrite_context(ctx, 600)
    assert ctx.prefix.endswith(short.prefix) and short.prefix.endswith("\n    res")
    above = short.prefix[: short.prefix.rfind("\n") + 1]
    assert above in "".join(LINES[:100]) and above.startswith("    value_")  # a whole line first
    assert 600 - int(600 * PREFIX_STEP_SHARE) - len(LINES[0]) <= len(above) <= 600


def test_a_short_prefix_is_kept_whole() -> None:
    ctx = _ctx(LINES[:3], "    res")
    assert rewrite_context(ctx, 600).prefix == ctx.prefix


def test_typing_on_the_cursor_line_never_moves_the_start() -> None:
    """The rewrite's warmed KV cache holds its head while the user types the line."""
    starts = set()
    for k in range(1, 40):
        short = rewrite_context(_ctx(LINES[:100], "    result = value_99 + compute("[:k]), 600)
        starts.add(short.prefix[:60])
    assert len(starts) == 1


def test_new_lines_move_the_start_only_in_steps() -> None:
    """A line typed and Enter: the start holds for about a third of the length's lines."""
    starts = []
    for n in range(100, 140):
        short = rewrite_context(_ctx(LINES[:n], "    "), 600)
        starts.append(short.prefix[:60])
    moves = sum(1 for a, b in itertools.pairwise(starts) if a != b)
    added = sum(len(line) for line in LINES[100:140])
    assert moves <= added // int(600 * PREFIX_STEP_SHARE) + 1
    assert moves < len(starts) // 3


def test_the_length_follows_the_measured_prompt_rate() -> None:
    slow, fast = rewrite_prefix_chars(60.0), rewrite_prefix_chars(600.0)
    assert MIN_PREFIX_CHARS <= slow < fast
    assert rewrite_prefix_chars(1.0) == MIN_PREFIX_CHARS


def test_what_a_rewrite_reads_at_the_rest_shrinks_with_a_slower_model() -> None:
    """At the rest the rewrite reads what its warm-up left only as far as the rates allow
    it to be on screen ~2 s later; never less than the cursor's neighbourhood."""
    slow = ModelRates(gen_tps=4.0, compute_tps=60.0, rest_gen_tps=7.5)
    fast = ModelRates(gen_tps=40.0, compute_tps=2000.0, rest_gen_tps=80.0)
    assert rewrite_allowance(slow, 64) == REWRITE_MIN_NEW
    assert rewrite_allowance(fast, 64) > 10 * REWRITE_MIN_NEW
    # The cost model's own reading time of the allowance fits the time left on a fast machine.
    assert fast.read_s(rewrite_allowance(fast, 64), 64) <= REWRITE_ON_SCREEN_S


def test_typing_on_the_line_changes_only_what_follows_the_middle_marker() -> None:
    """The typed part of the line is the middle's start: the prompt up to it (the prefix to
    the line, the code after the cursor, the marker) holds while the user types."""
    before = render(rewrite_context(_ctx(LINES[:20], "    ")), "qwen").text
    typed = render(rewrite_context(_ctx(LINES[:20], "    result = comp")), "qwen").text
    assert before.endswith("<|fim_middle|>")
    assert typed == before + "    result = comp"
    assert "<|fim_suffix|>    after_0()\n" in before  # the code after the cursor is still read
    # In prefix-suffix-middle order the whole suffix came after the typed keys.
    plain = render_completion(rewrite_context(_ctx(LINES[:20], "    result = comp")), "qwen", "").prompt
    assert plain.index("    result = comp") < plain.index("<|fim_suffix|>")


def test_blanks_typed_last_are_left_to_the_model_and_taken_off_its_answer() -> None:
    got = render(rewrite_context(_ctx(LINES[:20], "    total = ")), "qwen")
    assert got.text.endswith("<|fim_middle|>    total =") and got.held == " "
    start = MiddleStart(got.held)
    assert [start.feed(t) for t in (" ", "compute", "(x)")] == ["", "compute", "(x)"]
    # An answer that does not begin with them is passed on whole.
    assert MiddleStart(" ").feed("\n") == "\n"
    assert MiddleStart("").feed(" x") == " x"
    # Only the line's indentation typed: the model writes the line from its start.
    indent = render(rewrite_context(_ctx(LINES[:20], "    ")), "qwen")
    assert indent.held == "    " and MiddleStart(indent.held).feed("    return x") == "return x"


def test_templates_without_special_markers_keep_the_plain_order() -> None:
    ctx = rewrite_context(_ctx(LINES[:20], "    result = comp"))
    assert render(ctx, "codellama").text == render_completion(ctx, "codellama", "").prompt
    assert render(ctx, "none").text == render_completion(ctx, "none", "").prompt
    assert render(ctx, "starcoder").text.endswith("<fim_middle>    result = comp")


def _with_outlines(n: int) -> PromptContext:
    outlines = tuple(
        Snippet(f"/pkg/m{i}.py", "".join(f"def helper_{i}_{j}(a, b): ...\n" for j in range(8)), "outline")
        for i in range(n)
    )
    return dataclasses.replace(_ctx(LINES[:150], "    res"), snippets=outlines)


def test_the_whole_prompt_is_what_the_model_reads_in_time() -> None:
    """Prefix, suffix and other files' outlines together: on two cores (~60-110 prompt
    tokens/s) the outlines would have been a third of a prompt read for 2-5 s."""
    for tps in (60.0, 110.0, 600.0):
        ctx = shaped(_with_outlines(6), ModelRates(gen_tps=10.0, compute_tps=tps))
        chars = len(ctx.prefix) + len(ctx.suffix) + sum(len(s.text) for s in ctx.snippets)
        assert chars <= max(rewrite_chars(tps), MIN_PREFIX_CHARS + REWRITE_SUFFIX_CHARS)
    slow = shaped(_with_outlines(6), ModelRates(gen_tps=10.0, compute_tps=110.0))
    fast = shaped(_with_outlines(6), ModelRates(gen_tps=10.0, compute_tps=600.0))
    assert slow.snippets == ()
    assert 0 < len(fast.snippets) < 6 and fast.snippets == _with_outlines(6).snippets[: len(fast.snippets)]
    assert len(fast.prefix) > len(slow.prefix)


def test_the_outlines_kept_do_not_change_while_the_user_types() -> None:
    rates = ModelRates(gen_tps=10.0, compute_tps=600.0)
    kept = {
        shaped(
            dataclasses.replace(_with_outlines(6), prefix=_with_outlines(6).prefix + "ult = v"[:k]), rates
        ).snippets
        for k in range(8)
    }
    assert len(kept) == 1


def test_a_cut_at_the_rest_keeps_the_lines_above_the_cursor() -> None:
    """When the rest reads less than its warm-up left (`fit_prompt` keeps the cached head and
    the prompt's tail), the prompt with the shorter suffix (`rest_cut`) keeps the lines just
    above the cursor in that tail; with the whole suffix the tail was the suffix."""
    ctx = rewrite_context(_ctx(LINES[:30], "    res"), 600)

    def chars(text: str) -> list[int]:  # tokens are characters here
        return [ord(c) for c in text]

    head = chars(render(ctx, "qwen").text)[:80]  # what the warm-up read before the keys
    allowed, enders = 150, frozenset({ord("\n")})
    whole, seam = fit_prompt(chars(render(ctx, "qwen").text), head, allowed, enders)
    rest, rest_seam = fit_prompt(chars(render(rest_cut(ctx), "qwen").text), head, allowed, enders)
    assert seam is not None and rest_seam is not None  # both cut
    above = LINES[28]  # the line just above the cursor line
    assert above not in "".join(map(chr, whole)) and above in "".join(map(chr, rest))
    assert rest[:80] == head  # the warm-up's head is still of use
    assert rest_cut(ctx).suffix.count("\n") == REST_CUT_SUFFIX_LINES
    assert ctx.suffix.startswith(rest_cut(ctx).suffix)
