"""The rewrite model's prompt: as much code before the cursor as it reads in time, cut where
typing does not move the cut (issue 36).

The code model reads 60-110 prompt tokens/s on two cores: the typing model's 1,500-character
window (300-440 tokens) was 3-5 s of reading, more than the ~2 s its warm-up gets while the
user reads, so the rewrite read most of it again after the rest.
"""

from __future__ import annotations

import itertools

from lsp_assist.domain import PromptContext
from lsp_assist.providers.model_rates import ModelRates
from lsp_assist.providers.rewrite_prompt import (
    MIN_PREFIX_CHARS,
    PREFIX_STEP_SHARE,
    REWRITE_MIN_NEW,
    REWRITE_ON_SCREEN_S,
    REWRITE_SUFFIX_LINES,
    rewrite_allowance,
    rewrite_context,
    rewrite_prefix_chars,
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
