"""The offline rule engine: instant, deterministic suggestions with no model at all.

It is the floor every other path falls back to, so it must never fail and never be slow
(well under 1 ms on typical files). Rules, in order:

1. A line ending with ``:`` or ``{`` in multi-line mode gets nothing: a block body
   guessed by rules would be garbage.
2. Continue the current line from the longest matching context elsewhere: take the
   shortest token-aligned tail (at least `MIN_MATCH` characters) of the text before the
   cursor on this line, find its occurrences (bounded) in the document before this line,
   the document after the cursor, the snippets and the other open documents, extend each
   occurrence backwards to see how much of the line it matches, and propose what followed
   the longest match, up to the end of its line (`MAX_CONTINUATION_CHARS` at most). Ties
   go to the first found, in that search order (nearest-first in the document above), so
   the answer is deterministic.
3. At the end of a line, close an unclosed quote or bracket opened on it.

All scanning is `str.find` on bounded text, no index to maintain.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable, Iterator

from lsp_assist.domain import ModelRequest, PromptContext, StreamChunk, Usage

MIN_MATCH = 3  # characters of the line that must match elsewhere
MAX_HITS_PER_TEXT = 32  # occurrences examined per searched text
MAX_TEXT_CHARS = 256_000  # per other document
MAX_CORPUS_CHARS = 1_000_000  # over all other documents
MAX_KEY_CHARS = 200  # how much of the current line is compared backwards
# Of what followed a match: a line's worth (the rest of a minified line is its whole bundle).
MAX_CONTINUATION_CHARS = 200

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _token_tail(key: str) -> str | None:
    """The shortest suffix of `key` that starts at a token boundary and has >= MIN_MATCH chars."""
    n = len(key)
    for i in range(n - MIN_MATCH, -1, -1):
        c = key[i]
        if c.isspace():
            continue
        prev = key[i - 1] if i else " "
        if not _is_word(c) or not _is_word(prev):
            return key[i:]
    return None


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _rest_of_line(text: str, start: int) -> str:
    """What follows `start` on its line, at most `MAX_CONTINUATION_CHARS` (cut before a
    word the limit would split), without trailing whitespace."""
    line_end = _line_end(text, start)
    stop = min(line_end, start + MAX_CONTINUATION_CHARS)
    if stop < line_end:
        while stop > start and _is_word(text[stop - 1]) and _is_word(text[stop]):
            stop -= 1
    return text[start:stop].rstrip()


def _back_match(text: str, end: int, key: str) -> int:
    """How many characters before `end` in `text` equal the end of `key`."""
    n = 0
    limit = min(len(key), end)
    while n < limit and text[end - 1 - n] == key[-1 - n]:
        n += 1
    return n


def _occurrences(text: str, tail: str, *, reverse: bool) -> Iterator[int]:
    """Up to MAX_HITS_PER_TEXT token-aligned positions of `tail` in `text`."""
    word_start = _is_word(tail[0])
    found = 0
    pos = len(text) if reverse else 0
    while found < MAX_HITS_PER_TEXT:
        pos = text.rfind(tail, 0, pos) if reverse else text.find(tail, pos)
        if pos < 0:
            return
        if not (word_start and pos > 0 and _is_word(text[pos - 1])):
            found += 1
            yield pos
        if reverse:
            pos = pos + len(tail) - 1  # rfind's end bound is exclusive: step back one
            if pos <= 0:
                return
        else:
            pos += 1


def continue_line(key: str, texts: Iterable[tuple[str, bool]], line_suffix: str = "") -> str:
    """Rule 2. `texts`: (text, search_backwards) pairs in priority order."""
    key = key[-MAX_KEY_CHARS:]
    tail = _token_tail(key)
    if tail is None:
        return ""
    best_len, best = 0, ""
    for text, reverse in texts:
        for pos in _occurrences(text, tail, reverse=reverse):
            end = pos + len(tail)
            cont = _rest_of_line(text, end)
            if not cont.strip():
                continue
            length = _back_match(text, end, key)
            if length > best_len:
                best_len, best = length, cont
                if length == len(key):
                    break
        if best_len == len(key):
            break
    after = line_suffix.strip()
    if best and after and best.endswith(after):
        best = best[: -len(after)].rstrip()
    return best


def close_brackets(line_prefix: str) -> str:
    """Rule 3: the closers for what this line left open, or "" when unsure."""
    stack: list[str] = []
    quote = ""
    prev = ""
    for c in line_prefix:
        if quote:
            if c == quote and prev != "\\":
                quote = ""
        elif c in "\"'`":
            if c == "'" and _is_word(prev):
                prev = c
                continue  # an apostrophe (don't), not a quote
            quote = c
        elif c in _OPEN:
            stack.append(c)
        elif c in _CLOSE:
            if not stack or stack[-1] != _CLOSE[c]:
                return ""  # closes something from an earlier line: do not guess
            stack.pop()
        prev = "" if prev == "\\" and c == "\\" else c
    if quote:
        return quote
    last = line_prefix.rstrip()[-1:]
    if not stack or last in _OPEN or last in (",", "="):
        return ""  # a block or an argument list just started: closing it would be garbage
    return "".join(_OPEN[b] for b in reversed(stack))


def suggest(ctx: PromptContext, corpus: Iterable[str] = ()) -> str:
    """The offline suggestion for `ctx` (the three rules), possibly ""."""
    before_line = ctx.prefix.rfind("\n") + 1
    line_prefix = ctx.line_prefix or ctx.prefix[before_line:]
    line_suffix = ctx.line_suffix if ctx.line_prefix else ctx.suffix[: _line_end(ctx.suffix, 0)]
    stripped = line_prefix.rstrip()
    if ctx.mode == "multi" and stripped.endswith((":", "{")):
        return ""
    key = line_prefix.lstrip()
    if len(key) >= MIN_MATCH and key.strip():
        above = ctx.prefix[:before_line]

        def texts() -> Iterator[tuple[str, bool]]:
            yield above, True
            yield ctx.suffix, False
            for snip in ctx.snippets:
                yield snip.text, False
            budget = MAX_CORPUS_CHARS
            for doc in corpus:
                if budget <= 0:
                    return
                piece = doc[:MAX_TEXT_CHARS]
                budget -= len(piece)
                yield piece, False

        found = continue_line(key, texts(), line_suffix)
        if found:
            return found
    if line_suffix.strip():
        return ""  # rule 3 only at the end of a line
    return close_brackets(line_prefix)


class OfflineProvider:
    """A `Provider` that answers instantly from rules. `corpus` returns the texts of the
    other open documents (called once per request)."""

    def __init__(self, corpus: Callable[[], Iterable[str]] | None = None) -> None:
        self._corpus = corpus or (lambda: ())

    @property
    def name(self) -> str:
        return "offline"

    @property
    def model(self) -> str:
        return "rules"

    @property
    def endpoint_host(self) -> str | None:
        return None

    @property
    def single_slot(self) -> bool:
        return False  # rules run inline, nothing to interrupt

    def suggest(self, ctx: PromptContext) -> str:
        try:
            return suggest(ctx, self._corpus())
        except Exception:  # the floor must never fail; an empty answer is always valid
            return ""

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        text = self.suggest(request.context)
        yield StreamChunk(text, usage=Usage(0, 0, estimated=False), finish_reason="stop")

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


__all__ = ["OfflineProvider", "close_brackets", "continue_line", "suggest"]
