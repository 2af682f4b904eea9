"""Token healing (`providers/token_healing.py`) on a small made-up vocabulary: which tokens
may spell the given-back text, when a prompt gives its last token back, and the answer
without it."""

from __future__ import annotations

import numpy as np

from lsp_assist.providers.token_healing import (
    HealConstraint,
    HealedText,
    HealIndex,
    healable,
    without_given_back,
)

PIECES = [
    b"",  # a control token: no text
    b" comp",
    b" compute",
    b" c",
    b" co",
    b" com",
    b" cat",
    b"ute",
    b"_total",
    b"(",
    b"()",
    b"(self",
    b"x",
    b"    ",
    b"\n",
    b"\xff",
    b"\xff\xfe",
    b" comp",  # two tokens may spell the same text
]


def _ids(index: HealIndex, held: bytes) -> set[str]:
    return {PIECES[int(i)].decode("utf-8", "replace") for i in index.allowed(held)}


def test_allowed_are_the_pieces_starting_with_it_and_its_starts() -> None:
    index = HealIndex(PIECES)
    assert _ids(index, b" comp") == {" comp", " compute", " c", " co", " com"}
    assert sorted(int(i) for i in index.allowed(b" comp") if PIECES[int(i)] == b" comp") == [1, 17]
    assert _ids(index, b"(") == {"(", "()", "(self"}
    assert _ids(index, b"ute") == {"ute"}
    assert index.allowed(b"\xff").tolist().count(16) == 1  # all-0xff prefixes have no upper bound
    assert index.allowed(b"zz").size == 0
    assert index.allowed(b" comp") is index.allowed(b" comp")  # kept for the next key


def test_a_prompt_gives_back_its_last_token_only_where_the_user_typed_it() -> None:
    piece = PIECES.__getitem__
    assert healable([3, 1], piece, "total = comp") == " comp"
    assert healable([3, 9], piece, "print(") == "("
    assert healable([3, 1], piece, "x = 1") == ""  # not what ends the line
    assert healable([3, 13], piece, "    ") == ""  # indentation: the model writes it
    assert healable([3, 14], piece, "x\n") == ""  # a line end
    assert healable([3, 0], piece, "") == ""  # a control token (a FIM marker)
    assert healable([3, 15], piece, "\xff") == ""  # a byte of a longer character
    assert healable([1], piece, " comp") == ""  # nothing would be left of the prompt


def test_a_blank_typed_after_code_is_given_back_alone() -> None:
    # `return ` reads as `return` + ` `: a seam the model never saw before a name.
    pieces = [b"", b"    ", b"return", b" ", b"  ", b" x", b"\t"]
    piece = pieces.__getitem__
    assert healable([0, 1, 2, 3], piece, "    return ") == " "
    assert healable([0, 1, 2, 4], piece, "    return  ") == "  "
    assert healable([0, 5, 3], piece, " x ") == " "  # not the word before it too
    assert healable([0, 2, 1], piece, "    ") == ""  # indentation: the model writes it
    assert healable([0, 6], piece, "\t") == ""
    assert without_given_back([0, 1, 2, 3], piece, " ") == [0, 1, 2]


def test_a_word_the_vocabulary_split_is_given_back_whole() -> None:
    pieces = [b"", b" =", b" ch", b"il", b"self", b"._", b"max", b"_wo", b"a", b"b", b"c", b"d", b" x"]
    piece = pieces.__getitem__
    assert healable([0, 4, 1, 2, 3], piece, "append = chil") == " chil"  # ` ch` + `il`, its blank
    assert healable([0, 4, 5, 6, 7], piece, "self._max_wo") == "max_wo"  # not `._`: it holds the dot
    assert healable([0, 8, 9, 10, 11], piece, "abcd") == "bcd"  # three tokens at most
    assert healable([0, 1, 12, 3], piece, "y = xil") == " xil"
    assert healable([2, 3], piece, " chil") == "il"  # something of the prompt is left
    assert healable([0, 6, 3], piece, "max il") == "il"  # `max` is another word
    assert without_given_back([0, 4, 1, 2, 3], piece, " chil") == [0, 4, 1]
    assert without_given_back([0, 4, 1, 2, 3], piece, "il") == [0, 4, 1, 2]
    assert without_given_back([0, 4, 1, 2, 3], piece, "hil") == [0, 4, 1, 2, 3]  # spelled otherwise


class _Inner:
    """A constraint that bans token 2 and records what it saw."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def restrict(self, logits: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
        out = logits.copy()
        out[2] = -np.inf
        return out

    def accept(self, token: int) -> None:
        self.seen.append(token)


def test_the_first_choices_spell_the_text_then_decoding_is_the_inner_ones() -> None:
    index = HealIndex(PIECES)
    inner = _Inner()
    heal = HealConstraint(index, " comp", inner)
    logits = np.zeros(len(PIECES), dtype=np.float32)
    allowed = np.flatnonzero(np.isfinite(heal.restrict(logits)))
    assert {PIECES[i] for i in allowed} == {b" comp", b" c", b" co", b" com"}  # " compute" banned by inner
    heal.accept(4)  # " co": "mp" left to spell
    assert heal.healing
    # No piece spells "mp" here: the healing gives up rather than mask every token.
    assert np.isfinite(heal.restrict(logits)).sum() == len(PIECES) - 1
    assert not heal.healing
    heal.accept(12)
    heal2 = HealConstraint(index, " comp", inner)
    heal2.accept(2)  # " compute": spelled past the text
    assert not heal2.healing
    assert np.isfinite(heal2.restrict(logits)).sum() == len(PIECES) - 1  # the inner's ban only
    assert inner.seen == [4, 12, 2]


def test_the_answer_starts_after_the_given_back_text() -> None:
    healed = HealedText()
    healed.hold(" comp")
    assert [healed.feed(t) for t in (" co", "mput", "e_total", "(")] == ["", "ut", "e_total", "("]
    assert HealedText().feed("abc") == "abc"  # nothing given back
    other = HealedText(" comp")
    assert other.feed(" compute") == "ute"
