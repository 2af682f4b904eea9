"""The jump budget (providers/prompt_budget.py): the prompt speed is learned from what the
engine reports, and a prompt whose uncached part would take longer than the budget is cut to
the cached head plus whole lines nearest the cursor."""

from __future__ import annotations

from lsp_assist.providers.prompt_budget import DEFAULT_TOKENS_PER_S, MIN_NEW_TOKENS, PromptBudget, fit_prompt

NL = 10  # the "line end" token in these token lists


def test_the_speed_is_learned_from_real_reads_and_ignores_tiny_ones() -> None:
    b = PromptBudget(budget_ms=100)
    assert b.tokens_per_s == DEFAULT_TOKENS_PER_S
    b.observe(3, 1.0)  # a typed key: overhead, not a speed
    assert b.observations == 0
    b.observe(200, 1000.0)  # 200 tokens/s
    assert b.tokens_per_s == 200
    assert b.allowed_new() == MIN_NEW_TOKENS  # 20 tokens in 100 ms: under the floor
    b.observe(400, 1000.0)  # faster now: the estimate moves toward it, not all the way
    assert 200 < b.tokens_per_s < 400
    b.budget_ms = 1000
    assert b.allowed_new() == int(b.tokens_per_s)


def test_a_zero_budget_switches_the_cut_off() -> None:
    b = PromptBudget(budget_ms=0)
    assert b.allowed_new() is None
    tokens = list(range(100, 500))
    assert fit_prompt(tokens, [], b.allowed_new(), {NL}) is tokens


def test_a_prompt_that_fits_is_kept_whole() -> None:
    cached = [1, *range(100, 300)]
    tokens = [*cached, 7, 8, 9]  # typing: three new tokens
    assert fit_prompt(tokens, cached, 24, {NL}) is tokens


def test_a_jump_keeps_the_cached_head_and_whole_lines_near_the_cursor() -> None:
    head = [1, 50, 51, 52, NL]  # BOS and the stable head, already read
    window = []
    for line in range(40):  # 40 new lines of 5 tokens (4 + line end)
        window += [200 + line * 4 + k for k in range(4)] + [NL]
    tokens = [*head, *window, 900, 901]  # the cursor line's typed part last
    cached = [*head, 300, 301]  # the previous prompt diverged after the head
    got = fit_prompt(tokens, cached, 32, {NL})
    assert got[: len(head)] == head  # the reused prefix stays
    tail = got[len(head) :]
    assert len(tail) <= 32 and tail[-2:] == [900, 901]
    assert tokens[len(tokens) - len(tail) - 1] == NL  # the seam is at a line start
    assert tail == tokens[len(tokens) - len(tail) :]


def test_no_line_end_in_the_tail_cuts_at_the_allowance() -> None:
    tokens = [1, *range(100, 400)]
    got = fit_prompt(tokens, [1], 30, {NL})
    assert got == [1, *tokens[-30:]]


def test_the_first_token_is_kept_even_with_nothing_cached() -> None:
    tokens = [2, *range(100, 400)]  # BOS first
    got = fit_prompt(tokens, [], 30, {NL})
    assert got == [2, *tokens[-30:]]


def test_a_fixed_allowance_overrides_the_learned_speed() -> None:
    b = PromptBudget(budget_ms=0, fixed_tokens=64)
    assert b.allowed_new() == 64
