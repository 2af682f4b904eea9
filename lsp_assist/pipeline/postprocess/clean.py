"""Clean raw model output into the text to insert at the cursor.

`process` applies, in order: markdown fences and carriage returns out; single-line mode
keeps the first line; the block ends at an indentation drop below the cursor's block or at
a closer the prompt did not open; closers the editor already has after the cursor are not
re-emitted; lines that repeat, or that duplicate the code following the cursor, end the
suggestion; trailing whitespace goes; an empty or whitespace-only result becomes "".
It also says whether a stop condition fired, which the streaming assembler uses to stop
reading early. Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.domain import Mode, PromptContext

_PAIRS = {")": "(", "]": "[", "}": "{"}
_OPEN = frozenset("([{")
# Lines at the block's own indentation that continue it rather than end it.
_CONTINUATIONS = ("else", "elif", "except", "finally", "catch", "case", "default")
_HASH_COMMENT = frozenset({"python", "ruby", "shell", "bash", "perl", "r", "toml", "yaml"})


@dataclass(frozen=True)
class Cleaned:
    text: str
    stopped: bool  # a stop condition fired: reading more output cannot change the result
    why: str = ""


def _width(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def _is_closer_line(stripped: str) -> bool:
    return bool(stripped) and all(ch in ")]};," for ch in stripped)


class _Brackets:
    """Bracket depth over code, skipping strings and line comments (a cheap lexer)."""

    def __init__(self, hash_comments: bool) -> None:
        self.stack: list[str] = []
        self.floor = 0  # openers below this depth belong to the editor (closed after the cursor)
        self.quote = ""
        self.hash_comments = hash_comments

    def feed_line_prefix(self, text: str) -> None:
        self.scan(text)
        self.quote = "" if self.quote != "`" else self.quote  # strings end with the line

    def scan(self, text: str) -> list[tuple[int, str]]:
        """Feed text; returns (index, char) of each closer that had no opener to match."""
        unmatched: list[tuple[int, str]] = []
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if self.quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == self.quote:
                    self.quote = ""
                elif ch == "\n" and self.quote != "`":
                    self.quote = ""
                i += 1
                continue
            if ch in "\"'`":
                self.quote = ch
            elif (ch == "#" and self.hash_comments) or (ch == "/" and text.startswith("//", i)):
                j = text.find("\n", i)
                i = n if j < 0 else j
                continue
            elif ch in _OPEN:
                self.stack.append(ch)
            elif ch in _PAIRS:
                if len(self.stack) > self.floor and self.stack[-1] == _PAIRS[ch]:
                    self.stack.pop()
                else:
                    unmatched.append((i, ch))
            i += 1
        return unmatched


def _leading_closers(text: str) -> str:
    out = []
    for ch in text:
        if ch in _PAIRS:
            out.append(ch)
        elif ch.isspace() or ch in ";,":
            continue
        else:
            break
    return "".join(out)


def _following_lines(ctx: PromptContext, limit: int = 3) -> list[str]:
    """The first non-blank lines after the cursor line (stripped), from the prompt suffix."""
    lines = ctx.suffix.split("\n")[1:]
    out = []
    for line in lines:
        s = line.strip()
        if s:
            out.append(s)
            if len(out) >= limit:
                break
    return out


def _previous_line(ctx: PromptContext) -> str:
    head = ctx.prefix[: len(ctx.prefix) - len(ctx.line_prefix)]
    for line in reversed(head.split("\n")):
        if line.strip():
            return line.strip()
    return ""


def _strip_fences(raw: str) -> str:
    s = raw.lstrip("\n")
    if s.startswith("```"):
        nl = s.find("\n")
        s = s[nl + 1 :] if nl >= 0 else ""
        end = s.find("```")
        return s[:end] if end >= 0 else s
    end = raw.find("\n```")
    return raw[:end] if end >= 0 else raw


def process(ctx: PromptContext, raw: str, mode: Mode | None = None) -> Cleaned:
    """The cleaned suggestion for `raw` and whether a stop condition fired."""
    mode = mode or ctx.mode
    text = _strip_fences(raw.replace("\r\n", "\n").replace("\r", "\n"))
    for stop in ctx.stop:
        if stop and stop != "\n":
            k = text.find(stop)
            if k >= 0:
                text = text[:k]
    stopped = False
    why = ""
    lines = text.split("\n")
    if mode == "single":
        if len(lines) > 1:
            stopped, why = True, "end of line"
        lines = lines[:1]

    line_prefix = ctx.line_prefix
    typed = line_prefix.strip()
    opens_block = typed.endswith((":", "{", "(", "[", "=>"))
    base = _width(ctx.indent if typed else line_prefix)
    hash_comments = ctx.language in _HASH_COMMENT
    brackets = _Brackets(hash_comments)
    brackets.feed_line_prefix(line_prefix)
    # Closers the editor already has right after the cursor (auto-inserted), matched to what
    # the typed line opened: the suggestion must leave those open.
    suffix_closers = _leading_closers(ctx.line_suffix)
    reserved = 0
    for ch, opener in zip(suffix_closers, reversed(brackets.stack), strict=False):
        if _PAIRS[ch] != opener:
            break
        reserved += 1
    # With closers already after the cursor, the suggestion may not close what the typed
    # line opened; without them it may (it completes the line itself).
    brackets.floor = len(brackets.stack) if reserved else 0
    following = _following_lines(ctx)
    next_suffix_char = ctx.suffix[len(ctx.line_suffix) :].lstrip()[:1]
    prev_line = _previous_line(ctx)

    out: list[str] = []
    seen: list[str] = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if i > 0 and stripped:
            w = _width(line)
            continuation = stripped.startswith(_CONTINUATIONS) or _is_closer_line(stripped)
            if w < base or (opens_block and w == base and not continuation):
                if _is_closer_line(stripped) and next_suffix_char != stripped[:1] and w >= base - 4:
                    out.append(line.rstrip())  # the block's own closer, missing from the file
                stopped, why = True, "end of block"
                break
            if following and stripped == following[0] and (len(stripped) > 2 or not seen):
                stopped, why = True, "duplicates the following lines"
                break
            if len(stripped) >= 3 and not _is_closer_line(stripped) and stripped in seen[-2:]:
                stopped, why = True, "repeated line"
                break
        if i == 0 and len(stripped) >= 10 and (typed + stripped).strip() == prev_line:
            return Cleaned("", True, "repeats the line above")
        # Unbalanced closers: cut where the suggestion closes a bracket it did not open,
        # or one the editor already closes right after the cursor.
        unmatched = brackets.scan(line + "\n")
        if unmatched:
            cut_at, closing = unmatched[0]
            head = line[:cut_at].rstrip()
            if head.strip() or i == 0:
                out.append(head)
            elif mode == "multi" and next_suffix_char != closing and not suffix_closers:
                out.append(line[: cut_at + 1].rstrip())  # the file lacks this closer: keep it
            stopped, why = True, "unbalanced closer"
            break
        out.append(line.rstrip())
        if stripped:
            seen.append(stripped)

    result = "\n".join(out).rstrip()
    # Do not re-emit the rest of the line the editor already shows after the cursor.
    first, _, rest = result.partition("\n")
    tail = ctx.line_suffix.strip()
    if tail and first.rstrip().endswith(tail) and not rest:
        first = first.rstrip()[: len(first.rstrip()) - len(tail)].rstrip()
        result = first
    if typed and line_prefix.endswith((" ", "\t")) and result.startswith(" "):
        result = result.lstrip(" ")  # a model's leading space after typed whitespace
    if not result.strip():
        return Cleaned("", stopped, why or "empty")
    return Cleaned(result, stopped, why)


def clean(ctx: PromptContext, raw: str) -> str:
    """The text to insert at the cursor for raw model output ("" when nothing useful)."""
    return process(ctx, raw).text
