"""Where a partial first line may be shown at the answer budget."""

from __future__ import annotations

from lsp_assist.pipeline.inflight import early_answer


def test_a_word_is_shown_only_once_the_next_token_does_not_continue_it() -> None:
    assert early_answer("total = compute", "_sum") == ""
    assert early_answer("total = compute_sum", "(a") == "total = compute_sum"


def test_operators_brackets_and_spaces_end_as_code() -> None:
    assert early_answer("x = foo(a,", " b") == "x = foo(a,"
    assert early_answer("x = foo(a)", ".bar") == "x = foo(a)"
    assert early_answer("x = ", "1") == "x = "


def test_nothing_to_show() -> None:
    assert early_answer("", "x") == ""
    assert early_answer("   ", "x") == ""
    assert early_answer("a = 1\nb = ", "2") == ""  # more than one line is no partial line
