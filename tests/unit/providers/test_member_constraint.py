"""The member constraint's token trie on a small hand-made vocabulary (no model): after
`receiver.`, only tokens that stay on a known member's name, or end one, keep their logits."""

from __future__ import annotations

from typing import Any

import numpy as np

from lsp_assist.providers.member_constraint import MemberConstraint, TrieCache, Vocabulary, access_at_end

PIECES = [
    b"",  # 0: end of text (control tokens have no text)
    b"center",  # 1
    b"centre",  # 2: a name the class does not have
    b"cen",  # 3
    b"ter",  # 4
    b"dist",  # 5
    b"ance",  # 6
    b"_to",  # 7
    b"(",  # 8
    b" center",  # 9: SentencePiece's leading space
    b"radius)",  # 10: a name and what follows it, in one token
    b".",  # 11
    b"\n",  # 12
    b"x",  # 13
    b"\xe2",  # 14: a byte of a longer character
    b"radii",  # 15
    b"area",  # 16
]
T = {p.decode("utf-8", "replace"): i for i, p in enumerate(PIECES)}


class Known:
    """A resolver that knows two receivers."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def members_of(self, receiver: str) -> frozenset[str] | None:
        self.asked.append(receiver)
        table = {
            "self": frozenset({"center", "radius", "distance_to"}),
            "self.center": frozenset({"x", "distance_to"}),
        }
        return table.get(receiver)


def _vocab() -> Vocabulary:
    return Vocabulary(PIECES)


def _constraint(prompt_end: str, resolver: Any = None) -> MemberConstraint:
    return MemberConstraint(TrieCache(_vocab()), resolver or Known(), prompt_end)


def _allowed(c: MemberConstraint) -> set[str]:
    logits = np.zeros(len(PIECES), dtype=np.float32)
    out = c.restrict(logits)
    return {PIECES[i].decode("utf-8", "replace") for i in np.flatnonzero(np.isfinite(out))}


def _greedy(c: MemberConstraint, preference: list[str], steps: int) -> str:
    """Decode `steps` tokens from fixed logits (the earlier in `preference`, the likelier)."""
    logits = np.full(len(PIECES), -10.0, dtype=np.float32)
    for rank, piece in enumerate(preference):
        logits[T[piece]] = 100.0 - rank
    text = ""
    for _ in range(steps):
        token = int(np.argmax(c.restrict(logits)))
        c.accept(token)
        text += PIECES[token].decode("utf-8", "replace")
    return text


def test_the_vocabulary_splits_pieces_at_the_identifier_boundary() -> None:
    v = _vocab()
    assert v.pure["center"] == [1] and v.pure["_to"] == [7]
    assert v.heads["radius"] == [10]
    assert {0, 8, 9, 11, 12, 14} == set(v.break_ids.tolist())  # leading space, bytes, end


def test_right_after_the_dot_only_starts_of_member_names_are_allowed() -> None:
    assert _allowed(_constraint("        return self.")) == {"center", "cen", "dist", "radius)"}


def test_a_name_is_built_from_several_tokens_and_may_end_only_at_a_member() -> None:
    c = _constraint("        d = self.")
    # The model prefers "centre" (not a member), then "dist": it gets "dist".
    assert _greedy(c, ["centre", "dist"], 1) == "dist"
    assert _allowed(c) == {"ance"}  # neither "(" nor the end: "dist" is no member
    assert _greedy(c, ["(", "ance"], 1) == "ance"
    assert _greedy(c, ["(", "_to"], 2) == "_to("  # after "distance_to" it may end
    assert c.masked_steps == 5  # every step so far, the `_allowed` look included
    logits = np.zeros(len(PIECES), dtype=np.float32)
    assert c.restrict(logits) is logits  # inside the call's brackets: free again


def test_at_a_complete_name_any_non_identifier_token_ends_it_and_a_chain_goes_on() -> None:
    c = _constraint("        return self.")
    assert _greedy(c, ["centre", "center"], 1) == "center"
    allowed = _allowed(c)
    assert {"(", ".", "\n", " center", ""} <= allowed and "x" not in allowed and "ter" not in allowed
    # `self.center.` is a receiver of its own: its members are x and distance_to.
    assert _greedy(c, [".", "x"], 2) == ".x"
    assert _allowed(c) >= {"(", "."} and "ter" not in _allowed(c)


def test_unknown_receivers_comments_and_strings_leave_the_logits_alone() -> None:
    logits = np.arange(len(PIECES), dtype=np.float32)
    ends = ("x = other.", "    # see self.", '    s = "self.', "x = foo().bar.", "    x = 1.", "    self.")
    for end in ends:  # the last: a statement's start may create the attribute
        c = _constraint(end)
        assert c.restrict(logits) is logits, end
        assert c.masked_steps == 0
    # A partial name that leads to no member (written before the mask could act): free.
    assert _constraint("    a = self.zzz").restrict(logits) is logits


def test_receivers_are_resolved_once_per_generation_and_tries_kept_per_member_set() -> None:
    resolver = Known()
    tries = TrieCache(_vocab(), size=1)
    c = MemberConstraint(tries, resolver, "    a = self.")
    _greedy(c, ["dist", "ance", "_to"], 3)
    assert resolver.asked == ["self"]
    first = tries.get(frozenset({"center", "radius", "distance_to"}))
    assert tries.get(frozenset({"center", "radius", "distance_to"})) is first
    tries.get(frozenset({"x"}))  # evicts the older set (size 1)
    assert tries.get(frozenset({"center", "radius", "distance_to"})) is not first


def test_access_at_end_finds_the_receiver_and_the_partial_name() -> None:
    assert access_at_end("    return self.center.dis") == ("self.center", "dis")
    assert access_at_end("x = json.") == ("json", "")
    assert access_at_end("    self.center.dis") is None  # may be `self.center.dis = 1`
    assert access_at_end("x = a[0].b") is None
    assert access_at_end("print('a.b") is None
