"""Token healing: the prompt's last token given back to the model, where the user stopped.

A prompt that ends where the user stopped typing ends at a token boundary the model rarely
saw: `total = comp` is read as `total`, ` =`, ` comp`, where the file's `compute_total`
would be ` compute` + `_total`, so a model made to go on after ` comp` seldom finds the
word (Gemma wrote `comp_total`). Here the prompt's last token is taken off when its text
lies in what the user typed on the line; the model's first tokens must then spell that text
again (each one's piece starts with what is left of it, or is a start of it: a mask, the
model still chooses), and the text is taken off the answer, as the document already has it.
At 47 places of real code stopped inside a word, the developer's line went from 0% to 19%
of Gemma's answers and from 4% to 36% of the code model's; stopped at a token's end, Gemma
17% both ways, the code model 23% -> 34% (`benchmarks/token_healing.py`, docs/model-roles.md).
A word the vocabulary split is given back whole (`healable`): Qwen reads `chil` as ` ch` +
`il`, and given back `il` alone it wrote `chilren`; inside a word the right first token went
64% -> 77% (Gemma) and 64% -> 79% (the code model).

`HealIndex` finds those tokens in a model's vocabulary (its pieces sorted once per model:
a prefix is a range of them); `healable` says what to give back; `HealConstraint` masks the
first choices and hands each step on to the member constraint, if any; `HealedText` takes
the given-back text off the answer.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

# Tokens allowed per given-back text, kept for the typing that follows (a key changes it).
_ALLOWED_KEPT = 256
_SORT_SLICE = 4096
#: Tokens given back at most: the word the user is typing, where the vocabulary split it.
#: Qwen reads `chil` as ` ch` + `il`; given back `il` alone, it wrote `chilren`.
MAX_GIVEN_BACK = 3
_WORD_END = re.compile(r"\w+$")


class Constraint(Protocol):
    """What `llama_engine.TokenConstraint` is; healing wraps one."""

    def restrict(self, logits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]: ...

    def accept(self, token: int) -> None: ...


class HealIndex:
    """A model's token pieces, sorted to find the tokens whose piece starts with a text."""

    def __init__(self, pieces: Sequence[bytes]) -> None:
        self.pieces = pieces
        # Sorted in slices, then merged by Python code: one sort of a 262k vocabulary holds
        # the GIL ~0.2 s, a keystroke's whole budget, where a slice holds it a few ms.
        slices = [
            sorted(range(start, min(start + _SORT_SLICE, len(pieces))), key=pieces.__getitem__)
            for start in range(0, len(pieces), _SORT_SLICE)
        ]
        order = list(heapq.merge(*slices, key=pieces.__getitem__))
        self._sorted = [pieces[i] for i in order]
        self._ids = np.array(order, dtype=np.int64)
        self._allowed: OrderedDict[bytes, np.ndarray[Any, Any]] = OrderedDict()

    def allowed(self, held: bytes) -> np.ndarray[Any, Any]:
        """The ids of the tokens that may come next while `held` is still to be spelled:
        those whose piece starts with it, and those whose piece is a start of it."""
        got = self._allowed.get(held)
        if got is not None:
            self._allowed.move_to_end(held)
            return got
        lo = bisect.bisect_left(self._sorted, held)
        after = _after_all_starting(held)
        hi = bisect.bisect_left(self._sorted, after) if after else len(self._sorted)
        starts = [j for k in range(1, len(held)) for j in self._equal(held[:k])]
        got = np.concatenate([self._ids[lo:hi], self._ids[np.array(starts, dtype=np.int64)]])
        self._allowed[held] = got
        if len(self._allowed) > _ALLOWED_KEPT:
            self._allowed.popitem(last=False)
        return got

    def _equal(self, piece: bytes) -> range:
        """Where in the sorted order the tokens spelling exactly `piece` are."""
        lo = bisect.bisect_left(self._sorted, piece)
        return range(lo, bisect.bisect_right(self._sorted, piece, lo))


def _after_all_starting(prefix: bytes) -> bytes:
    """The least byte string greater than every string starting with `prefix` (b"" when
    there is none: `prefix` is all 0xff bytes)."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return b""
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


def healable(tokens: Sequence[int], piece: Callable[[int], bytes], line: str) -> str:
    """The text of the prompt's last tokens when they are to be given back: the last one, a
    text token (not a control token: those have no piece) lying in `line`, what the prompt
    holds of the cursor's line before the cursor, and not the line's indentation (the
    model's to write as it reads it); and the ones before it while they spell the same word
    (`_word_start`). A blank typed after code is given back alone: Gemma reads `return `
    as `return` + ` `, a seam it never saw before a name, and wrote `0` where, given the
    blank back, it wrote ` s[pos + 1:pos + 5]`. "" when nothing is given back."""
    if len(tokens) < 2:
        return ""
    text = _text(piece(tokens[-1]))
    if "\n" in text or not line.endswith(text):
        return ""
    if not text.strip() and not line[: len(line) - len(text)].strip():
        return ""  # indentation: the model's to write as it reads it
    start = _word_start(line)
    for k in range(2, min(MAX_GIVEN_BACK, len(tokens) - 1) + 1):
        longer = _text(piece(tokens[-k])) + text
        at = len(line) - len(longer)
        if len(longer) == len(text) or not line.endswith(longer) or at < start:
            break
        text = longer
    return text


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # a byte of a longer character
        return ""


def _word_start(line: str) -> int:
    """Where the word the line ends in starts, one blank before it included (` ch` + `il`);
    the line's end when it ends in no word."""
    word = _WORD_END.search(line)
    if word is None:
        return len(line)
    at = word.start()
    return at - 1 if at and line[at - 1] == " " else at


def without_given_back(tokens: list[int], piece: Callable[[int], bytes], text: str) -> list[int]:
    """`tokens` without the last ones that spell `text` (`healable`); unchanged when they
    do not (another prompt with the same end, tokenized otherwise)."""
    want = text.encode("utf-8")
    spelled = b""
    for k in range(1, min(MAX_GIVEN_BACK, len(tokens) - 1) + 1):
        spelled = piece(tokens[-k]) + spelled
        if spelled == want:
            return tokens[:-k]
        if len(spelled) >= len(want):
            break
    return tokens


class HealConstraint:
    """The first choices spell the given-back text (`held`); then `inner` alone decides."""

    def __init__(self, index: HealIndex, held: str, inner: Constraint | None = None) -> None:
        self._index = index
        self._held = held.encode("utf-8")
        self.inner = inner

    @property
    def healing(self) -> bool:
        return bool(self._held)

    def restrict(self, logits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        if self.inner is not None:
            logits = self.inner.restrict(logits)
        if not self._held:
            return logits
        ids = self._index.allowed(self._held)
        ids = ids[ids < len(logits)]
        if not ids.size:  # nothing spells the rest (a vocabulary with no byte tokens): free
            self._held = b""
            return logits
        out = np.full_like(logits, -np.inf)
        out[ids] = logits[ids]
        return out

    def accept(self, token: int) -> None:
        if self._held:
            pieces = self._index.pieces
            piece = pieces[token] if 0 <= token < len(pieces) else b""
            self._held = self._held[len(piece) :] if len(piece) < len(self._held) else b""
        if self.inner is not None:
            self.inner.accept(token)


class HealedText:
    """The answer without the given-back text it starts with (the constraint made it so)."""

    def __init__(self, held: str = "") -> None:
        self._held = held
        self._seen = ""

    @property
    def held(self) -> str:
        """The text given back, while the answer has not passed it yet."""
        return self._held

    def hold(self, held: str) -> None:
        """Take `held` off the answer's start (set before the model writes)."""
        self._held, self._seen = held, ""

    def feed(self, text: str) -> str:
        if not self._held:
            return text
        self._seen += text
        if len(self._seen) < len(self._held):
            return ""
        seen, held = self._seen, self._held
        self._held, self._seen = "", ""
        return seen[len(held) :] if seen.startswith(held) else seen


__all__ = ["HealConstraint", "HealIndex", "HealedText", "healable", "without_given_back"]
