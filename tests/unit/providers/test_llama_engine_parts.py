"""The model-free parts of the in-process engine: stop strings, prompt lookup, prefixes."""

from __future__ import annotations

from lsp_assist.providers.llama_engine import StopMatcher, common_prefix, lookup_draft


def test_stop_matcher_cuts_at_a_stop_string_split_across_pieces() -> None:
    m = StopMatcher(("<end_of_turn>", "\n\n\n"))
    out = []
    for piece in ("x = 1", "<end", "_of", "_turn>", "more"):
        text, stopped = m.feed(piece)
        out.append(text)
        if stopped:
            break
    assert "".join(out) == "x = 1"


def test_stop_matcher_releases_a_partial_match_that_does_not_complete() -> None:
    m = StopMatcher(("\n\n\n",))
    assert m.feed("a\n\n") == ("a", False)
    assert m.feed("b") == ("\n\nb", False)
    assert m.flush() == ""


def test_no_stops_passes_text_through() -> None:
    assert StopMatcher(()).feed("abc") == ("abc", False)


def test_lookup_draft_copies_what_followed_the_last_ngram() -> None:
    history = [1, 2, 3, 4, 5, 6, 9, 9, 2, 3, 4]
    assert lookup_draft(history, 3) == [5, 6, 9]
    assert lookup_draft(history, 0) == []
    assert lookup_draft([1, 2, 3], 4) == []  # no earlier occurrence


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([1, 2], [1, 2]) == 2


def test_line_goes_on() -> None:
    from lsp_assist.providers.llama_engine import line_goes_on

    assert line_goes_on("    total = ")
    assert line_goes_on("    x = foo(a, ")
    assert line_goes_on("    return ")
    assert line_goes_on("    path = os.")
    assert not line_goes_on("    return")  # may still become `returns`
    assert not line_goes_on("    x = foo(a)")
    assert not line_goes_on("    if x:")
    assert not line_goes_on("")


def test_prompt_threads_follow_the_idle_cores() -> None:
    from lsp_assist.providers.local import default_threads, prompt_threads

    assert default_threads(2) == (1, 2) and default_threads(16) == (1, 4)
    assert prompt_threads(2, cpus=2, busy=0.0) == 2
    assert prompt_threads(2, cpus=2, busy=1.0) == 1  # one core busy
    assert prompt_threads(4, cpus=8, busy=6.0) == 2
    assert prompt_threads(4, cpus=2, busy=6.0) == 1
    assert 1 <= prompt_threads(2) <= 2  # from this machine's /proc/loadavg
