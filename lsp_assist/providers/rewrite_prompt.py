"""The rewrite model's prompt: its shape, and how much of it a rewrite reads at the rest.

The rewrite (the code model's line after a rest, `local.refine_model`) reads what changed
since its KV cache's last read, so its prompt keeps a stable head and is no longer than the
model reads in time (issue 36, figures in docs/model-roles.md#the-rewrites-reads):

- the typed part of the cursor line goes after the middle marker, as the start of the
  middle the model writes (`render`): the prefix up to the line, the code after the cursor
  and the marker then stay the same while the user types on the line, so after a key only
  the key is read (in prefix-suffix-middle order the whole suffix came after the typed
  text and was read again after every key);
- the whole prompt is what the model reads in `REWRITE_READ_S` at its measured rate
  (`rewrite_chars`): the code after the cursor is short; other files' outlines come only
  within a share of what is left (on two cores, none); the code before the cursor takes
  the rest, whole lines from a start on a coarse grid, so typing never moves it;
- at the rest, what the warm-up left unread is read only as far as lets the rewrite be on
  screen `REWRITE_ON_SCREEN_S` after the rest (`rewrite_allowance`).

`shaped` is the one place the warm-up (`local_prefill.py`) and the rewrite
(`local_stream.py`) get the prompt from, so the rewrite finds what the warm-up read.
"""

from __future__ import annotations

import dataclasses

from lsp_assist.context.templates import render_completion, resolve_template
from lsp_assist.domain import PromptContext, Snippet
from lsp_assist.providers.model_rates import ModelRates

#: Lines and characters of the code after the cursor the rewrite model reads: the rest of
#: the line and the next lines say what the line must lead into; more is re-read per key.
REWRITE_SUFFIX_LINES = 4
REWRITE_SUFFIX_CHARS = 240
#: The same, when the rest cannot read all its warm-up left (`rest_cut`): the cut keeps the
#: prompt's tail, and with four lines of suffix that tail was the suffix and hardly a line
#: of the code above the cursor (a 64-token read at the rest, 40-55 of them suffix).
REST_CUT_SUFFIX_LINES = 2
REST_CUT_SUFFIX_CHARS = 100
#: The rewrite's whole prompt: what the model reads in this long at its measured prompt
#: rate (`rewrite_chars`). Its KV cache is warmed while the user reads (~2 s before typing
#: in `benchmarks/quality_over_time.py`); what is left at the rest is read then, before the
#: line is written. On two cores the code model reads ~60-110 tokens/s, so the whole
#: 1,500-character window (300-440 tokens) was 3-5 s of reading, and a prefix of 2 s with
#: the suffix and other files' outlines on top (130-270 tokens) still 2-5 s.
REWRITE_READ_S = 2.0
#: Other files' outlines (whole, in the order given) within this share of what the suffix
#: leaves, as the typing model's window gives them a quarter (`CROSS_SHARE`).
SNIPPET_SHARE = 0.25
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


def rewrite_chars(prompt_tps: float) -> int:
    """The rewrite's whole prompt, in characters, for a model reading `prompt_tps` tokens/s."""
    return int(prompt_tps * REWRITE_READ_S * CHARS_PER_TOKEN)


def rewrite_tokens(prompt_tps: float) -> int:
    """About how many tokens the rewrite's prompt holds for a model reading `prompt_tps`
    tokens/s (`shaped`, no other files' outlines): `rewrite_chars`, or the least prefix and
    the suffix where that is more."""
    return int(max(rewrite_chars(prompt_tps), MIN_PREFIX_CHARS + REWRITE_SUFFIX_CHARS) / CHARS_PER_TOKEN)


def rewrite_prefix_chars(prompt_tps: float, snippet_chars: int = 0) -> int:
    """The rewrite's prefix length for a model reading `prompt_tps` tokens/s: what the
    suffix and `snippet_chars` of other files leave of `rewrite_chars`."""
    return max(MIN_PREFIX_CHARS, rewrite_chars(prompt_tps) - REWRITE_SUFFIX_CHARS - snippet_chars)


def rewrite_snippets(snippets: tuple[Snippet, ...], prompt_tps: float) -> tuple[Snippet, ...]:
    """The leading `snippets` whose text fits in `SNIPPET_SHARE` of what the suffix leaves:
    the same ones while the rates hold, so the prompt's head does too."""
    room = int((rewrite_chars(prompt_tps) - REWRITE_SUFFIX_CHARS) * SNIPPET_SHARE)
    kept = 0
    for n, snip in enumerate(snippets):
        kept += len(snip.text)
        if kept > room:
            return snippets[:n]
    return snippets


def rewrite_context(ctx: PromptContext, prefix_chars: int | None = None) -> PromptContext:
    """`ctx` for the rewrite model: its suffix cut to REWRITE_SUFFIX_LINES lines /
    REWRITE_SUFFIX_CHARS, and (`prefix_chars`) its prefix to about that many characters of
    whole lines ending at the cursor, cut on a coarse grid (`PREFIX_STEP_SHARE`)."""
    short = _suffix_lines(ctx.suffix, REWRITE_SUFFIX_LINES, REWRITE_SUFFIX_CHARS)
    prefix = ctx.prefix if prefix_chars is None else _recent_lines(ctx.prefix, prefix_chars)
    if short == ctx.suffix and prefix is ctx.prefix:
        return ctx
    return dataclasses.replace(ctx, prefix=prefix, suffix=short)


def rest_cut(ctx: PromptContext) -> PromptContext:
    """The rewrite's context for a rest that cannot read all its warm-up left: the same
    prefix (what the warm-up read stays of use) and a suffix of REST_CUT_SUFFIX_LINES lines,
    so the tail a cut keeps (`fit_prompt`) holds the lines above the cursor."""
    short = _suffix_lines(ctx.suffix, REST_CUT_SUFFIX_LINES, REST_CUT_SUFFIX_CHARS)
    return ctx if short == ctx.suffix else dataclasses.replace(ctx, suffix=short)


def _suffix_lines(suffix: str, lines: int, chars: int) -> str:
    cut = 0
    for _ in range(lines):
        nl = suffix.find("\n", cut)
        if nl < 0:
            cut = len(suffix)
            break
        cut = nl + 1
    return suffix[: min(cut, chars)]


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
    snippets = rewrite_snippets(ctx.snippets, rates.prompt_tps)
    prefix_chars = rewrite_prefix_chars(rates.prompt_tps, sum(len(s.text) for s in snippets))
    short = rewrite_context(ctx, prefix_chars)
    return short if snippets == ctx.snippets else dataclasses.replace(short, snippets=snippets)


#: Templates whose markers are special tokens, so a middle may begin with given text: the
#: model reads it as the start of the middle it writes (its own tokens, teacher-forced).
#: CodeLlama's text markers expect a space after `<MID>`; it keeps the plain order.
MIDDLE_START_TEMPLATES = ("qwen", "starcoder", "deepseek")


@dataclasses.dataclass(frozen=True)
class RewritePrompt:
    """The rewrite's prompt text, and the blanks the user typed last that it leaves to the
    model (`held`): the answer's text starts with them, and `MiddleStart` takes them off."""

    text: str
    held: str = ""
    stop: tuple[str, ...] = ()  # the template's stop strings


def render(ctx: PromptContext, template: str) -> RewritePrompt:
    """The rewrite's prompt for `ctx` in `template`: with a FIM template of
    `MIDDLE_START_TEMPLATES`, the cursor line's typed part after the middle marker, so the
    prompt's head holds while the user types on the line. Blanks it ends with are left for
    the model to write (`held`): a word after them is one token with its leading space
    (`" name"`), so a prompt ending in a space made the model write a second one."""
    cut = ctx.prefix.rfind("\n") + 1
    typed = ctx.prefix[cut:]
    if not typed or resolve_template(template, "") not in MIDDLE_START_TEMPLATES:
        plain = render_completion(ctx, template, "")
        return RewritePrompt(plain.prompt, stop=plain.stop)
    head = render_completion(dataclasses.replace(ctx, prefix=ctx.prefix[:cut]), template, "")
    given = typed.rstrip(" \t")
    return RewritePrompt(head.prompt + given, typed[len(given) :], head.stop)


class MiddleStart:
    """The rewrite's answer from the cursor: its first text without the `held` blanks the
    user typed (an answer that does not start with them is passed on as it is)."""

    def __init__(self, held: str) -> None:
        self._held: str | None = held or None
        self._text = ""

    def feed(self, text: str) -> str:
        """What of `text` (the model's next piece) is the answer's."""
        held = self._held
        if held is None:
            return text
        self._text += text
        if len(self._text) < len(held) and held.startswith(self._text):
            return ""  # not yet told apart
        self._held = None
        return self._text[len(held) :] if self._text.startswith(held) else self._text


__all__ = [
    "REWRITE_MIN_NEW",
    "REWRITE_ON_SCREEN_S",
    "REWRITE_READ_S",
    "REWRITE_SUFFIX_CHARS",
    "REWRITE_SUFFIX_LINES",
    "MiddleStart",
    "RewritePrompt",
    "render",
    "rest_cut",
    "rewrite_allowance",
    "rewrite_chars",
    "rewrite_context",
    "rewrite_prefix_chars",
    "rewrite_snippets",
    "rewrite_tokens",
    "shaped",
]
