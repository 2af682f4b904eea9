"""The jump budget (providers/prompt_budget.py): the prompt cost is learned from what the
engine reports (a fixed overhead from typed keys, a per-token cost from longer reads), and a
prompt whose uncached part would take longer than the budget is cut to the cached head plus
whole lines nearest the cursor; while the user types on, the seam stays where it was."""

from __future__ import annotations

from lsp_assist.providers.prompt_budget import MIN_NEW_TOKENS, Cut, PromptBudget, fit_prompt, same_place

NL = 10  # the "line end" token in these token lists


def test_the_cost_is_learned_from_real_reads() -> None:
    b = PromptBudget(budget_ms=125, overhead_ms=25)
    b.observe(2, 20.0)  # a typed key: the overhead moves toward 20 ms
    assert 20 < b.overhead_ms < 25 and b.observations == 0
    b.overhead_ms = 25.0
    b.observe(100, 525.0)  # 100 tokens in 500 ms past the overhead: 5 ms a token
    assert b.ms_per_token == 5.0 and b.tokens_per_s == 200.0
    assert b.allowed_new() == 24  # (125 - 25) / 5 = 20, under the floor
    b.budget_ms = 525
    assert b.allowed_new() == 100
    b.observe(100, 225.0)  # faster now (2 ms a token): the estimate moves toward it
    assert 2.0 < b.ms_per_token < 5.0
    b.observe(8, 1000.0)  # too short to say anything about the per-token cost
    assert b.observations == 2


def test_a_zero_budget_switches_the_cut_off() -> None:
    b = PromptBudget(budget_ms=0)
    assert b.allowed_new() is None
    tokens = list(range(100, 500))
    got, cut = fit_prompt(tokens, [], b.allowed_new(), {NL})
    assert got is tokens and cut is None


def test_a_prompt_that_fits_is_kept_whole() -> None:
    cached = [1, *range(100, 300)]
    tokens = [*cached, 7, 8, 9]  # typing: three new tokens
    got, cut = fit_prompt(tokens, cached, 24, {NL})
    assert got is tokens and cut is None


def _jump() -> tuple[list[int], list[int], list[int]]:
    head = [1, 50, 51, 52, NL]  # BOS and the stable head, already read
    window: list[int] = []
    for line in range(40):  # 40 new lines of 5 tokens (4 + line end)
        window += [200 + line * 4 + k for k in range(4)] + [NL]
    return head, [*head, *window, 900, 901], [*head, 300, 301]  # the cursor line's part last


def test_a_jump_keeps_the_cached_head_and_whole_lines_near_the_cursor() -> None:
    head, tokens, cached = _jump()
    got, cut = fit_prompt(tokens, cached, 32, {NL})
    assert cut == Cut(len(head), len(tokens) - (len(got) - len(head)))
    assert got[: len(head)] == head  # the reused prefix stays
    tail = got[len(head) :]
    assert len(tail) <= 32 and tail[-2:] == [900, 901]
    assert tokens[len(tokens) - len(tail) - 1] == NL  # the seam is at a line start
    assert tail == tokens[len(tokens) - len(tail) :]


def test_typing_on_after_a_cut_keeps_the_seam_so_only_the_new_keys_are_read() -> None:
    _, tokens, cached = _jump()
    first, cut = fit_prompt(tokens, cached, 32, {NL})
    typed = [*tokens, 902]  # one more key; the cache holds the cut prompt
    again, cut2 = fit_prompt(typed, first, 32, {NL}, cut)
    assert cut2 == cut and again == [*first, 902]
    # A seam that no longer fits (the cache moved on elsewhere) gives way to a new cut.
    elsewhere, cut3 = fit_prompt(typed, [1, 77], 24, {NL}, cut)
    assert cut3 is not None and cut3.head == 1 and len(elsewhere) - 1 <= 24


def test_no_line_end_in_the_tail_cuts_at_the_allowance() -> None:
    tokens = [1, *range(100, 400)]
    got, _ = fit_prompt(tokens, [1], 30, {NL})
    assert got == [1, *tokens[-30:]]


def test_the_first_token_is_kept_even_with_nothing_cached() -> None:
    tokens = [2, *range(100, 400)]  # BOS first
    got, _ = fit_prompt(tokens, [], 30, {NL})
    assert got == [2, *tokens[-30:]]


def test_a_fixed_allowance_overrides_the_learned_cost() -> None:
    b = PromptBudget(budget_ms=0, fixed_tokens=64)
    assert b.allowed_new() == 64
    assert PromptBudget(budget_ms=1).allowed_new() == MIN_NEW_TOKENS


def test_same_place_means_one_prompt_is_the_other_plus_a_few_keys() -> None:
    window = "def f(x):\n" + "    y = x + 1\n" * 40
    assert same_place(window + "    ret", window + "    return y")
    assert not same_place(window + "    ret", "import os\n" + window[:-300] + "    z = 2\n")
