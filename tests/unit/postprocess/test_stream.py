"""StreamAssembler and clean(): stop early, first line, and the cleaning rules."""

from __future__ import annotations

from lsp_assist.domain import PromptContext
from lsp_assist.pipeline.postprocess import StreamAssembler, clean, process


def _ctx(prefix: str, suffix: str, mode: str = "multi", language: str = "python") -> PromptContext:
    line_prefix = prefix.rsplit("\n", 1)[-1]
    line_suffix = suffix.split("\n", 1)[0]
    indent = (line_prefix + line_suffix)[
        : len(line_prefix + line_suffix) - len((line_prefix + line_suffix).lstrip())
    ]
    return PromptContext(
        language=language,
        path="/x",
        prefix=prefix,
        suffix=suffix,
        mode=mode,  # type: ignore[arg-type]
        stop=("\n\n\n", "\ndef ") if mode == "multi" else ("\n",),
        line_prefix=line_prefix,
        line_suffix=line_suffix,
        indent=indent,
    )


def _stream(ctx: PromptContext, raw: str, step: int = 1) -> tuple[StreamAssembler, int]:
    asm = StreamAssembler(ctx, ctx.mode)
    fed = 0
    for i in range(0, len(raw), step):
        fed = i + step
        if asm.feed(raw[i : i + step]):
            break
    return asm, fed


def test_single_line_stops_at_newline_and_gives_first_line() -> None:
    ctx = _ctx("x = ", "", mode="single")
    asm, fed = _stream(ctx, "compute(1)\nmore()\nand more\n")
    assert fed == len("compute(1)\n")
    assert asm.first_line() == "compute(1)" and asm.text() == "compute(1)"


def test_multi_line_stops_at_block_end_and_reports_first_line_early() -> None:
    ctx = _ctx("def f(x):\n    if x:\n        ", "\n    return x\n")
    raw = "a = 1\n        b = 2\n    return x\n" + "junk\n" * 50
    asm = StreamAssembler(ctx, ctx.mode)
    assert asm.first_line() is None
    asm.feed("a = 1")
    assert asm.first_line() is None  # the line may still grow
    asm.feed("\n")
    assert asm.first_line() == "a = 1"
    stopped_after = None
    for i, ch in enumerate(raw[6:]):
        if asm.feed(ch):
            stopped_after = i
            break
    assert stopped_after is not None and stopped_after < 40
    assert asm.text() == "a = 1\n        b = 2"
    assert asm.feed("more") is True  # stays stopped


def test_stop_sequence_and_runaway_cap() -> None:
    ctx = _ctx("def f():\n    ", "")
    asm, _ = _stream(ctx, "return 1\n\ndef g():\n    pass\n", step=3)
    assert asm.done and asm.text() == "return 1"
    asm2 = StreamAssembler(_ctx("", "", mode="multi"))
    assert not asm2.feed("")
    done = False
    for _ in range(2000):
        if asm2.feed("abcdefghi "):
            done = True
            break
    assert done


def test_clean_rules() -> None:
    # duplicates of the following lines
    ctx = _ctx("def g(a):\n    b = a\n    ", "\n    return b\n")
    assert clean(ctx, "b += 1\n    return b\n") == "b += 1"
    # closers the editor already has
    assert clean(_ctx("print(", ")", mode="single"), "x, y)") == "x, y"
    assert clean(_ctx("print(", "", mode="single"), "x, y)") == "x, y)"
    # repeated lines, whitespace-only, trailing whitespace
    assert clean(_ctx("for i in x:\n    ", ""), "f(i)\n    f(i)\n    f(i)") == "f(i)"
    assert clean(_ctx("x = ", "", mode="single"), "   \t ") == ""
    assert clean(_ctx("x = ", "", mode="single"), "") == ""
    assert clean(_ctx("x = ", "", mode="single"), "1   ") == "1"
    # the rest of the line is not re-emitted
    assert clean(_ctx("foo(a, ", ", c)", mode="single"), "b, c)") == "b"
    # a brace inside a string is not a closer
    assert clean(_ctx("s = ", "", mode="single", language="javascript"), "'}' + t;") == "'}' + t;"
    # repeating the line above is dropped
    ctx2 = _ctx("value = compute_everything(1)\n", "")
    assert clean(ctx2, "value = compute_everything(1)") == ""
    assert process(ctx2, "value = compute_everything(1)").why == "repeats the line above"


def test_block_closer_missing_from_file_is_kept() -> None:
    ctx = _ctx("function f(a) {\n  ", "", language="javascript")
    assert clean(ctx, "return a;\n}\n\nfoo();") == "return a;\n}"
    ctx_has = _ctx("function f(a) {\n  ", "\n}\n", language="javascript")
    assert clean(ctx_has, "return a;\n}\n") == "return a;"


def test_the_token_ending_the_first_line_cleans_its_text_once(monkeypatch: object) -> None:
    """`feed` (the line just completed) and `first_line` clean the same text on that token:
    the second is the first's result, the same as a fresh clean (issue 40: the answer path)."""
    import lsp_assist.pipeline.postprocess.stream as stream_mod

    seen: list[str] = []

    def counting(ctx: PromptContext, raw: str, mode: object = None) -> object:
        seen.append(raw)
        return process(ctx, raw, mode)  # type: ignore[arg-type]

    ctx = _ctx("def f(items):\n    ", "\n", "multi")
    asm = StreamAssembler(ctx, ctx.mode)
    monkeypatch.setattr(stream_mod, "process", counting)  # type: ignore[attr-defined]
    for delta in ("return total", "(items", ")", "\n"):
        asm.feed(delta)
    assert asm.first_line() == process(ctx, "return total(items)").text == "return total(items)"
    assert seen.count("return total(items)") == 1
