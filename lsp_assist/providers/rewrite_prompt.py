"""The rewrite model's prompt: its shape, and how much of it a rewrite reads at the rest.

The rewrite (the code model's line after a rest, `local.refine_model`) reads what changed
since its KV cache's last read, so its prompt keeps a stable head and is no longer than the
model reads in time (issue 36, figures in docs/model-roles.md#the-rewrites-reads):

- the code after the cursor is short: in prefix-suffix-middle order every token of it is
  read again after each key, while the prefix's head stays in the cache;
- the code before the cursor is what the model reads in `REWRITE_READ_S` at its measured
  rate, whole lines from a start on a coarse grid, so typing never moves it;
- at the rest, what the warm-up left unread is read only as far as lets the rewrite be on
  screen `REWRITE_ON_SCREEN_S` after the rest (`rewrite_allowance`).

`shaped` is the one place the warm-up (`local_prefill.py`) and the rewrite
(`local_stream.py`) get the prompt from, so the rewrite finds what the warm-up read.
"""

from __future__ import annotations

import dataclasses

from lsp_assist.domain import PromptContext
from lsp_assist.providers.model_rates import ModelRates

#: Lines and characters of the code after the cursor the rewrite model reads: the rest of
#: the line and the next lines say what the line must lead into; more is re-read per key.
REWRITE_SUFFIX_LINES = 4
REWRITE_SUFFIX_CHARS = 240
#: The code before the cursor the rewrite reads: what the model reads in this long at its
#: measured prompt rate (`rewrite_prefix_chars`). Its KV cache is warmed while the user
#: reads (~2 s before typing in `benchmarks/quality_over_time.py`); what is left at the rest
#: is read then, before the line is written. On two cores the code model reads ~60-110
#: tokens/s, so the whole 1,500-character window (300-440 tokens) was 3-5 s of reading.
REWRITE_READ_S = 2.0
CHARS_PER_TOKEN = 3.5  # code, for the Qwen and StarCoder vocabularies
#: Never fewer (the lines just above the cursor say what the line is for).
MIN_PREFIX_CHARS = 400
#: The prefix's start moves on a grid of this share of its length: typing on a line never
#: moves it, new lines only every third of the length, so the warmed cache holds.
PREFIX_STEP_SHARE = 1 / 3


#: The rewrite should be on screen this long after the rest (issue 36). What its warm-up
#: left unread, it reads at the rest only as far as that allows: the head already in its
#: KV cache and the lines nearest the cursor (`fit_prompt`, as the jump budget cuts the
#: typing model's prompt), at least REWRITE_MIN_NEW tokens. From such a cut the model often
#: writes more lines after the first; its first line is shown as soon as it is written
#: (`pipeline/refinement.py`), so they cost nothing on screen.
REWRITE_ON_SCREEN_S = 2.0
#: When the rewrite starts after the last key: once the typing model's line is written,
#: ~0.3-0.5 s on two cores (`benchmarks/rest_rewrite.py`'s logs).
REWRITE_STARTS_S = 0.5
#: The tokens of the line a rewrite writes (4-12 measured) and the fewest new prompt tokens
#: it reads whatever the rates (the cursor line, the short suffix, a line or two above).
REWRITE_LINE_TOKENS = 8
REWRITE_MIN_NEW = 64


def rewrite_allowance(rates: ModelRates, batch: int) -> int:
    """New prompt tokens a rewrite reads at the rest to be on screen REWRITE_ON_SCREEN_S
    after it, at `rates` in batches of `batch`."""
    room = REWRITE_ON_SCREEN_S - REWRITE_STARTS_S - rates.write_s(REWRITE_LINE_TOKENS, rest=True)
    return max(REWRITE_MIN_NEW, rates.readable(room, batch))


def rewrite_prefix_chars(prompt_tps: float) -> int:
    """The rewrite's prefix length for a model reading `prompt_tps` tokens/s."""
    return max(MIN_PREFIX_CHARS, int(prompt_tps * REWRITE_READ_S * CHARS_PER_TOKEN))


def rewrite_context(ctx: PromptContext, prefix_chars: int | None = None) -> PromptContext:
    """`ctx` for the rewrite model: its suffix cut to REWRITE_SUFFIX_LINES lines /
    REWRITE_SUFFIX_CHARS, and (`prefix_chars`) its prefix to about that many characters of
    whole lines ending at the cursor, cut on a coarse grid (`PREFIX_STEP_SHARE`)."""
    suffix = ctx.suffix
    cut = 0
    for _ in range(REWRITE_SUFFIX_LINES):
        nl = suffix.find("\n", cut)
        if nl < 0:
            cut = len(suffix)
            break
        cut = nl + 1
    short = suffix[: min(cut, REWRITE_SUFFIX_CHARS)]
    prefix = ctx.prefix if prefix_chars is None else _recent_lines(ctx.prefix, prefix_chars)
    if short == suffix and prefix is ctx.prefix:
        return ctx
    return dataclasses.replace(ctx, prefix=prefix, suffix=short)


def _recent_lines(prefix: str, chars: int) -> str:
    """The whole lines of `prefix` from a start point on a grid (steps of a third of
    `chars`, counted from the prefix's start) that leaves at most ~`chars` before the
    cursor line: the start holds while the cursor line grows, and moves by a step when
    lines are added above it."""
    line_start = prefix.rfind("\n") + 1  # the cursor line's start
    if line_start <= chars:
        return prefix
    step = max(64, int(chars * PREFIX_STEP_SHARE))
    target = line_start - chars
    grid = -(-target // step) * step
    start = prefix.find("\n", grid - 1, line_start) + 1 if grid > 0 else 0
    return prefix[start:] if 0 < start <= line_start else prefix


def shaped(ctx: PromptContext, rates: ModelRates) -> PromptContext:
    """`ctx` as the rewrite model reads it, for a model of `rates`."""
    return rewrite_context(ctx, rewrite_prefix_chars(rates.prompt_tps))


__all__ = [
    "REWRITE_MIN_NEW",
    "REWRITE_ON_SCREEN_S",
    "REWRITE_READ_S",
    "REWRITE_SUFFIX_CHARS",
    "REWRITE_SUFFIX_LINES",
    "rewrite_allowance",
    "rewrite_context",
    "rewrite_prefix_chars",
    "shaped",
]
