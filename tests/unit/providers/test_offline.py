"""The offline rule engine."""

from __future__ import annotations

from lsp_assist.domain import ModelRequest, PromptContext
from lsp_assist.providers.base import Provider
from lsp_assist.providers.offline import MAX_CONTINUATION_CHARS, OfflineProvider, close_brackets, suggest


def ctx(prefix: str, suffix: str = "\n", mode: str = "single") -> PromptContext:
    return PromptContext(language="python", path="a.py", prefix=prefix, suffix=suffix, mode=mode)  # type: ignore[arg-type]


def test_continues_from_earlier_in_the_document() -> None:
    src = "def process_item(x):\n    return x\n\nself.process_item(it, flag=True)\nself.proc"
    assert suggest(ctx(src)) == "ess_item(it, flag=True)"


def test_prefers_the_longest_match() -> None:
    src = "a = foo(1)\nb = bar.foo(2)\nc = bar.foo"
    assert suggest(ctx(src)) == "(2)"


def test_uses_the_suffix_and_the_corpus() -> None:
    assert suggest(ctx("x = compute_", "\ny = compute_total(items)\n")) == "total(items)"
    assert suggest(ctx("p = os.pa", ""), ["q = os.path.join(a, b)\n"]) == "th.join(a, b)"


def test_a_minified_line_continues_by_a_line_not_by_its_bundle() -> None:
    # The corpus holds a 1 MB one-line bundle: what follows the match is cut, between tokens.
    bundle = "".join(f"var v{i}=run(v{i - 1});" for i in range(1, 60_000))
    got = suggest(ctx("y = run(v41", ""), [bundle])
    assert got.startswith(");var v43=run(v42);")
    assert len(got) <= MAX_CONTINUATION_CHARS  # before: the rest of the bundle, ~1 MB
    assert bundle[bundle.index("run(v41)") + 7 :].startswith(got)
    nxt = bundle[bundle.index("run(v41)") + 7 + len(got)]
    assert not (got[-1].isalnum() and nxt.isalnum())


def test_token_aligned_start() -> None:
    # "ult" inside "result" is not a token start, so there is no match for "ult".
    assert suggest(ctx("x = result\ny = ult", "")) == ""


def test_drops_what_already_follows_the_cursor() -> None:
    assert suggest(ctx("print(value, sep=', ')\nprint(va", ")\n")) == "lue, sep=', '"


def test_closes_brackets_and_quotes_at_end_of_line() -> None:
    assert suggest(ctx("x = foo(bar(1, 2", "\n")) == "))"
    assert suggest(ctx("s = 'hello", "")) == "'"
    assert close_brackets("it's fine") == ""
    assert close_brackets("call(") == ""  # an argument list just started
    assert close_brackets("x = [1, 2") == "]"
    assert close_brackets("a = b)") == ""  # closes an earlier line: no guess


def test_block_openers_in_multi_mode_get_nothing() -> None:
    assert suggest(ctx("if x:", mode="multi")) == ""
    assert suggest(ctx("function f() {", mode="multi")) == ""


def test_no_rule_matches() -> None:
    assert suggest(ctx("zzqqxx_unique", "")) == ""
    assert suggest(ctx("    ", "")) == ""


def test_deterministic_and_bounded_on_big_inputs() -> None:
    big = "def f(a, b):\n    return a + b\n" * 20000
    c = ctx(big + "    retur", big)
    assert suggest(c, [big] * 10) == suggest(c, [big] * 10) == "n a + b"


async def test_provider_streams_one_chunk() -> None:
    p = OfflineProvider(lambda: ["value = compute_everything(now)\n"])
    assert isinstance(p, Provider) and p.endpoint_host is None and p.name == "offline"
    chunks = [c async for c in p.stream(ModelRequest(ctx("v = compute_e", ""), max_tokens=8, temperature=0))]
    assert len(chunks) == 1 and chunks[0].text == "verything(now)" and chunks[0].finish_reason == "stop"


def test_provider_never_raises() -> None:
    def broken() -> list[str]:
        raise RuntimeError("boom")

    assert OfflineProvider(broken).suggest(ctx("abc")) == ""
