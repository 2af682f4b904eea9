"""How much new prompt the embedded model may read before its first token (a jump's budget).

Why (issue 26, figures in docs/embedded-latency.md): the embedded model keeps the common
prefix of consecutive prompts in its KV cache, so typing costs a few tokens per key. After a
jump to a fresh position the prompt's local window is new: ~300 tokens at ~3 ms each on two
cores, so the first suggestion there took over a second. `PromptBudget` learns the prompt
reading speed at runtime (tokens/s from the engine's own stats) and `fit_prompt` cuts the
part of a prompt that is not in the cache to what that speed reads within the budget: the
reused head (BOS, the stable part of the layout) plus the lines nearest the cursor. The
full prompt is read afterwards in the background (`LocalProvider`), so the next key finds it
in the cache and gets the whole context back.

Plain synchronous code: `fit_prompt` runs on the model's worker thread, `observe` too.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

# Prompt speed assumed before the first measurement: the 2-core figure (docs/local-model).
DEFAULT_TOKENS_PER_S = 300.0
# A read shorter than this is mostly fixed overhead (the first token's own decode): not a speed.
MIN_OBSERVED_TOKENS = 24
SMOOTHING = 0.3  # weight of the newest measurement (an exponential moving average)
MIN_NEW_TOKENS = 24  # the cursor's own line and a little above it, whatever the speed


@dataclass
class PromptBudget:
    """The learned prompt speed and the time budget for reading the uncached part.

    `budget_ms` <= 0 switches the cut off (the whole prompt is always read)."""

    budget_ms: float = 150.0
    tokens_per_s: float = DEFAULT_TOKENS_PER_S
    observations: int = 0
    fixed_tokens: int | None = None  # a set allowance instead of the learned one (benchmarks)

    def observe(self, evaluated: int, prompt_ms: float) -> None:
        """Learn from one request: `evaluated` tokens read in `prompt_ms` (to the first token)."""
        if evaluated < MIN_OBSERVED_TOKENS or prompt_ms <= 0:
            return
        speed = evaluated / (prompt_ms / 1000.0)
        if self.observations == 0:
            self.tokens_per_s = speed
        else:
            self.tokens_per_s = (1 - SMOOTHING) * self.tokens_per_s + SMOOTHING * speed
        self.observations += 1

    def allowed_new(self, scale: float = 1.0) -> int | None:
        """How many uncached tokens fit in the budget (times `scale`); None: no limit."""
        if self.fixed_tokens is not None:
            return self.fixed_tokens
        if self.budget_ms <= 0:
            return None
        return max(MIN_NEW_TOKENS, int(self.tokens_per_s * self.budget_ms * scale / 1000.0))


def fit_prompt(
    tokens: Sequence[int], cached: Sequence[int], allowed: int | None, line_enders: Collection[int]
) -> list[int]:
    """`tokens`, or a shorter prompt whose uncached part is at most `allowed` tokens: the
    prefix already in the cache (at least the first token, BOS), then the last tokens of the
    prompt starting at a line start (after the first token that ends a line within the
    allowed tail), so the model never sees half a line at the seam. Returns `tokens` itself
    (the same list) when it fits."""
    out = tokens if isinstance(tokens, list) else list(tokens)
    if allowed is None or len(tokens) < 2:
        return out
    reused = max(1, min(_common_prefix(cached, tokens), len(tokens) - 1))
    if len(tokens) - reused <= allowed:
        return out
    start = len(tokens) - allowed
    # Start after the first line end inside the tail, when one is there and the rest keeps
    # at least half the allowance: whole lines read better than a line cut in its middle.
    for i in range(start, len(tokens) - max(1, allowed // 2)):
        if tokens[i] in line_enders:
            start = i + 1
            break
    return [*tokens[:reused], *tokens[start:]]


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


__all__ = ["DEFAULT_TOKENS_PER_S", "MIN_NEW_TOKENS", "PromptBudget", "fit_prompt"]
