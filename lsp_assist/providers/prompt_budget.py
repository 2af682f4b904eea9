"""How much new prompt the embedded model may read before its first token (a jump's budget).

Why (issue 26, figures in docs/embedded-latency.md): the embedded model keeps the common
prefix of consecutive prompts in its KV cache, so typing costs a few tokens per key. After a
jump to a fresh position the prompt's local window is new: ~300 tokens at ~3 ms each on two
cores, so the first suggestion there took over a second. `PromptBudget` learns the prompt
reading cost at runtime (from the engine's own stats) and `fit_prompt` cuts the
part of a prompt that is not in the cache to what that speed reads within the budget: the
reused head (BOS, the stable part of the layout) plus the lines nearest the cursor. The
full prompt is read afterwards in the background (`LocalProvider`), so the next key finds it
in the cache and gets the whole context back.

Plain synchronous code: `fit_prompt` runs on the model's worker thread, `observe` too.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

# Prompt cost assumed before the first measurements: the 2-core figures (docs/embedded-latency.md).
DEFAULT_MS_PER_TOKEN = 3.3
DEFAULT_OVERHEAD_MS = 25.0  # the last prompt token's own decode and the first token's choice
# Reads at least this long measure the per-token cost; reads of a few tokens (a typed key)
# measure the fixed overhead.
MIN_OBSERVED_TOKENS = 16
MAX_OVERHEAD_TOKENS = 3
SMOOTHING = 0.3  # weight of the newest measurement (an exponential moving average)
MIN_NEW_TOKENS = 24  # the cursor's own line and a little above it, whatever the speed


@dataclass(frozen=True)
class Cut:
    """Where a cut prompt joins: `tokens[:head] + tokens[start:]` of the whole prompt."""

    head: int
    start: int


@dataclass
class PromptBudget:
    """The learned prompt cost (fixed overhead + per token) and the time budget for reading
    the uncached part. `budget_ms` <= 0 switches the cut off (the whole prompt is read)."""

    budget_ms: float = 200.0
    ms_per_token: float = DEFAULT_MS_PER_TOKEN
    overhead_ms: float = DEFAULT_OVERHEAD_MS
    observations: int = 0
    fixed_tokens: int | None = None  # a set allowance instead of the learned one (benchmarks)

    def observe(self, evaluated: int, prompt_ms: float) -> None:
        """Learn from one request: `evaluated` tokens read in `prompt_ms` (to the first token)."""
        if prompt_ms <= 0 or evaluated <= 0:
            return
        if evaluated <= MAX_OVERHEAD_TOKENS:
            self.overhead_ms = (1 - SMOOTHING) * self.overhead_ms + SMOOTHING * prompt_ms
            return
        if evaluated < MIN_OBSERVED_TOKENS:
            return
        per_token = max(0.05, (prompt_ms - self.overhead_ms) / evaluated)
        first = self.observations == 0
        self.ms_per_token = (
            per_token if first else (1 - SMOOTHING) * self.ms_per_token + SMOOTHING * per_token
        )
        self.observations += 1

    @property
    def tokens_per_s(self) -> float:
        return 1000.0 / self.ms_per_token

    def allowed_new(self) -> int | None:
        """How many uncached tokens fit in the budget; None: no limit."""
        if self.fixed_tokens is not None:
            return self.fixed_tokens
        if self.budget_ms <= 0:
            return None
        return max(MIN_NEW_TOKENS, int((self.budget_ms - self.overhead_ms) / self.ms_per_token))


def fit_prompt(
    tokens: Sequence[int],
    cached: Sequence[int],
    allowed: int | None,
    line_enders: Collection[int],
    previous: Cut | None = None,
) -> tuple[list[int], Cut | None]:
    """`tokens` (and None), or a shorter prompt whose uncached part is at most `allowed`
    tokens, and where it was cut. The cut keeps the prefix already in the cache (at least the
    first token, BOS), then the last tokens of the prompt from a line start (after the first
    token that ends a line within the allowed tail), so the model never sees half a line at
    the seam. While the user types on after a cut, the `previous` seam is kept when it still
    fits: the cache then holds all but the new keys, as it does for whole prompts.
    Returns `tokens` itself (the same list) when it fits."""
    out = tokens if isinstance(tokens, list) else list(tokens)
    if allowed is None or len(tokens) < 2:
        return out, None
    reused = max(1, min(_common_prefix(cached, tokens), len(tokens) - 1))
    if len(tokens) - reused <= allowed:
        return out, None
    if previous is not None and previous.head <= previous.start < len(tokens) - 1:
        again = [*tokens[: previous.head], *tokens[previous.start :]]
        if len(again) - min(_common_prefix(cached, again), len(again) - 1) <= allowed:
            return again, previous
    start = len(tokens) - allowed
    # Start after the first line end inside the tail, when one is there and the rest keeps
    # at least half the allowance: whole lines read better than a line cut in its middle.
    for i in range(start, len(tokens) - max(1, allowed // 2)):
        if tokens[i] in line_enders:
            start = i + 1
            break
    return [*tokens[:reused], *tokens[start:]], Cut(reused, start)


SAME_PLACE_CHARS = 160  # prompts that differ only in their last line or so: the same place


def same_place(a: str, b: str) -> bool:
    """True when two prompt texts are for the same place (one is the other plus a few keys)."""
    return _common_prefix(a, b) >= min(len(a), len(b)) - SAME_PLACE_CHARS


def _common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


__all__ = ["MIN_NEW_TOKENS", "Cut", "PromptBudget", "fit_prompt", "same_place"]
