"""Rules applied to each line of a multi-line suggestion, in order, until one ends it.

`Scene` holds what the rules need to know about the cursor (computed once per call) and
what the lines before told them (lines kept, bracket depth). A rule returns None to let
the line through, or a `Cut`: the suggestion ends here, keeping `keep` of this line (or
nothing of it, or nothing at all). `LINE_RULES` lists them in the order they apply:

1. `end_of_block`: the indentation drops below the cursor's block (the block's own closer,
   missing from the file, is kept);
2. `duplicates_following`: the line is the code right after the cursor;
3. `repeated_line`: the line repeats one of the two before it;
4. `repeats_line_above`: the first line re-types the line above the cursor (nothing kept);
5. `unbalanced_closer`: the line closes a bracket it did not open, or one the editor
   already closes after the cursor (cut there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lsp_assist.domain import Mode, PromptContext

_PAIRS = {")": "(", "]": "[", "}": "{"}
_OPEN = frozenset("([{")
# Lines at the block's own indentation that continue it rather than end it.
_CONTINUATIONS = ("else", "elif", "except", "finally", "catch", "case", "default")
_HASH_COMMENT = frozenset({"python", "ruby", "shell", "bash", "perl", "r", "toml", "yaml"})


def width(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def is_closer_line(stripped: str) -> bool:
    return bool(stripped) and all(ch in ")]};," for ch in stripped)


class Brackets:
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


def leading_closers(text: str) -> str:
    out = []
    for ch in text:
        if ch in _PAIRS:
            out.append(ch)
        elif ch.isspace() or ch in ";,":
            continue
        else:
            break
    return "".join(out)


def following_lines(ctx: PromptContext, limit: int = 3) -> list[str]:
    """The first non-blank lines after the cursor line (stripped), from the prompt suffix."""
    out = []
    for line in ctx.suffix.split("\n")[1:]:
        s = line.strip()
        if s:
            out.append(s)
            if len(out) >= limit:
                break
    return out


def previous_line(ctx: PromptContext) -> str:
    head = ctx.prefix[: len(ctx.prefix) - len(ctx.line_prefix)]
    for line in reversed(head.split("\n")):
        if line.strip():
            return line.strip()
    return ""


@dataclass
class Scene:
    """The cursor's surroundings, and what the lines so far told the rules."""

    mode: Mode
    typed: str  # the cursor line before the cursor, stripped
    opens_block: bool  # ... ends with `:`, `{`, `(`, `[` or `=>`
    base: int  # the indentation width of the cursor's block
    brackets: Brackets
    suffix_closers: str  # closers the editor already has right after the cursor
    following: list[str]
    next_suffix_char: str
    prev_line: str
    seen: list[str] = field(default_factory=list)  # stripped non-blank lines kept so far

    @classmethod
    def of(cls, ctx: PromptContext, mode: Mode) -> Scene:
        line_prefix = ctx.line_prefix
        typed = line_prefix.strip()
        brackets = Brackets(ctx.language in _HASH_COMMENT)
        brackets.feed_line_prefix(line_prefix)
        # Closers the editor already has right after the cursor (auto-inserted), matched to
        # what the typed line opened: the suggestion must leave those open.
        suffix_closers = leading_closers(ctx.line_suffix)
        reserved = 0
        for ch, opener in zip(suffix_closers, reversed(brackets.stack), strict=False):
            if _PAIRS[ch] != opener:
                break
            reserved += 1
        # With closers already after the cursor, the suggestion may not close what the typed
        # line opened; without them it may (it completes the line itself).
        brackets.floor = len(brackets.stack) if reserved else 0
        return cls(
            mode=mode,
            typed=typed,
            opens_block=typed.endswith((":", "{", "(", "[", "=>")),
            base=width(ctx.indent if typed else line_prefix),
            brackets=brackets,
            suffix_closers=suffix_closers,
            following=following_lines(ctx),
            next_suffix_char=ctx.suffix[len(ctx.line_suffix) :].lstrip()[:1],
            prev_line=previous_line(ctx),
        )


@dataclass(frozen=True)
class Cut:
    """The suggestion ends at this line."""

    why: str
    keep: str | None = None  # what of this line stays (None: nothing of it)
    discard_all: bool = False  # nothing of the suggestion stays


LineRule = Callable[[Scene, int, str], "Cut | None"]


def end_of_block(sc: Scene, i: int, line: str) -> Cut | None:
    stripped = line.strip()
    if i == 0 or not stripped:
        return None
    w = width(line)
    continuation = stripped.startswith(_CONTINUATIONS) or is_closer_line(stripped)
    if w < sc.base or (sc.opens_block and w == sc.base and not continuation):
        if is_closer_line(stripped) and sc.next_suffix_char != stripped[:1] and w >= sc.base - 4:
            return Cut("end of block", keep=line.rstrip())  # the block's own closer, missing
        return Cut("end of block")
    return None


def duplicates_following(sc: Scene, i: int, line: str) -> Cut | None:
    stripped = line.strip()
    if i == 0 or not stripped or not sc.following:
        return None
    if stripped == sc.following[0] and (len(stripped) > 2 or not sc.seen):
        return Cut("duplicates the following lines")
    return None


def repeated_line(sc: Scene, i: int, line: str) -> Cut | None:
    stripped = line.strip()
    if i > 0 and len(stripped) >= 3 and not is_closer_line(stripped) and stripped in sc.seen[-2:]:
        return Cut("repeated line")
    return None


def repeats_line_above(sc: Scene, i: int, line: str) -> Cut | None:
    stripped = line.strip()
    if i == 0 and len(stripped) >= 10 and (sc.typed + stripped).strip() == sc.prev_line:
        return Cut("repeats the line above", discard_all=True)
    return None


def unbalanced_closer(sc: Scene, i: int, line: str) -> Cut | None:
    """Feeds the bracket depth: must come last (a line a rule above cut is never scanned)."""
    unmatched = sc.brackets.scan(line + "\n")
    if not unmatched:
        return None
    cut_at, closing = unmatched[0]
    head = line[:cut_at].rstrip()
    if head.strip() or i == 0:
        return Cut("unbalanced closer", keep=head)
    if sc.mode == "multi" and sc.next_suffix_char != closing and not sc.suffix_closers:
        return Cut("unbalanced closer", keep=line[: cut_at + 1].rstrip())  # the file lacks it
    return Cut("unbalanced closer")


LINE_RULES: tuple[LineRule, ...] = (
    end_of_block,
    duplicates_following,
    repeated_line,
    repeats_line_above,
    unbalanced_closer,
)
