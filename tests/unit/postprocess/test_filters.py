"""Each post-processing filter and line rule on its own (the golden cases test them together)."""

from __future__ import annotations

from lsp_assist.domain import Mode, PromptContext
from lsp_assist.pipeline.postprocess import line_rules as lr
from lsp_assist.pipeline.postprocess import text_filters as tf
from lsp_assist.pipeline.postprocess.text_filters import Draft


def ctx(
    prefix: str = "", suffix: str = "", *, language: str = "python", stop: tuple[str, ...] = ()
) -> PromptContext:
    line_prefix = prefix.rsplit("\n", 1)[-1]
    line_suffix = suffix.split("\n", 1)[0]
    whole = line_prefix + line_suffix
    return PromptContext(
        language=language,
        path="/x",
        prefix=prefix,
        suffix=suffix,
        stop=stop,
        line_prefix=line_prefix,
        line_suffix=line_suffix,
        indent=whole[: len(whole) - len(whole.lstrip())],
    )


def run(f: tf.TextFilter, text: str, c: PromptContext | None = None, mode: Mode = "multi") -> Draft:
    return f(c or ctx(), mode, Draft(text))


def scene(c: PromptContext, mode: Mode = "multi") -> lr.Scene:
    return lr.Scene.of(c, mode)


# ----------------------------------------------------------------------------- text filters


def test_the_filters_run_in_the_documented_order() -> None:
    assert tf.BEFORE_LINES == (
        tf.normalize_newlines, tf.strip_fences, tf.cut_at_stop_sequences, tf.first_line_only,
    )  # fmt: skip
    assert tf.AFTER_LINES == (
        tf.trim_trailing_whitespace, tf.drop_shown_line_tail, tf.drop_space_after_typed_space,
        tf.nothing_if_blank,
    )  # fmt: skip
    assert lr.LINE_RULES[-1] is lr.unbalanced_closer  # it feeds the bracket depth


def test_normalize_newlines() -> None:
    assert run(tf.normalize_newlines, "a\r\nb\rc").text == "a\nb\nc"


def test_strip_fences() -> None:
    assert run(tf.strip_fences, "```python\nx = 1\n```\ntrailing").text == "x = 1\n"
    assert run(tf.strip_fences, "x = 1\n```\nprose").text == "x = 1"
    assert run(tf.strip_fences, "x = `y`").text == "x = `y`"


def test_cut_at_stop_sequences_ignores_the_bare_newline() -> None:
    c = ctx(stop=("\n", "\ndef "))
    assert run(tf.cut_at_stop_sequences, "a\nb\ndef f():", c).text == "a\nb"


def test_first_line_only_in_single_mode() -> None:
    d = run(tf.first_line_only, "one\ntwo", mode="single")
    assert (d.text, d.stopped, d.why) == ("one", True, "end of line")
    assert run(tf.first_line_only, "one\ntwo", mode="multi").text == "one\ntwo"
    assert not run(tf.first_line_only, "one", mode="single").stopped


def test_trim_trailing_whitespace() -> None:
    assert run(tf.trim_trailing_whitespace, "x = 1  \n\n").text == "x = 1"


def test_drop_shown_line_tail() -> None:
    c = ctx("print(", ")")
    assert run(tf.drop_shown_line_tail, "value)", c).text == "value"
    assert run(tf.drop_shown_line_tail, "value)\nmore", c).text == "value)\nmore"  # multi-line kept


def test_drop_space_after_typed_space() -> None:
    assert run(tf.drop_space_after_typed_space, "  total", ctx("x = ")).text == "total"
    assert run(tf.drop_space_after_typed_space, " total", ctx("    ")).text == " total"  # nothing typed


def test_nothing_if_blank() -> None:
    d = run(tf.nothing_if_blank, "  \n ")
    assert (d.text, d.why) == ("", "empty")
    assert run(tf.nothing_if_blank, "x").text == "x"


# ----------------------------------------------------------------------------- line rules


def test_end_of_block_on_an_indentation_drop_keeps_a_missing_closer() -> None:
    c = ctx("def f():\n    ", "")
    sc = scene(c)
    assert lr.end_of_block(sc, 1, "    y = 2") is None
    cut = lr.end_of_block(sc, 1, "x = 1")
    assert cut is not None and cut.why == "end of block" and cut.keep is None
    js = ctx("function f() {\n  ", "", language="javascript")
    kept = lr.end_of_block(scene(js), 1, "}")
    assert kept is not None and kept.keep == "}"
    assert lr.end_of_block(sc, 0, "x = 1") is None  # the first line is never a block end


def test_duplicates_following() -> None:
    sc = scene(ctx("    ", "\n    return total\n"))
    cut = lr.duplicates_following(sc, 1, "    return total")
    assert cut is not None and cut.why == "duplicates the following lines"
    assert lr.duplicates_following(sc, 1, "    total += 1") is None


def test_repeated_line() -> None:
    sc = scene(ctx("    ", ""))
    sc.seen.extend(["a = 1", "b = 2"])
    cut = lr.repeated_line(sc, 2, "    a = 1")
    assert cut is not None and cut.why == "repeated line"
    assert lr.repeated_line(sc, 2, "    )") is None  # closers repeat legitimately


def test_repeats_line_above_discards_everything() -> None:
    sc = scene(ctx("result = compute(values)\n", ""))
    cut = lr.repeats_line_above(sc, 0, "result = compute(values)")
    assert cut is not None and cut.discard_all
    assert lr.repeats_line_above(sc, 0, "other = compute(values)") is None


def test_unbalanced_closer_cuts_where_the_suggestion_closes_what_it_did_not_open() -> None:
    sc = scene(ctx("x = f(", ")"))  # the editor already closes the call
    cut = lr.unbalanced_closer(sc, 0, "a, b)")
    assert cut is not None and cut.keep == "a, b"
    balanced = scene(ctx("x = ", ""))
    assert lr.unbalanced_closer(balanced, 0, "f(a, b)") is None
