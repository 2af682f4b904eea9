"""Names that exist: after `x.`, the model may only write a member `x` has.

Monitor-guided decoding (Agrawal et al., NeurIPS 2023), per token: when the text so far
(the prompt's end and what the model wrote) ends with `receiver.` plus a partial
identifier, and `context/members.py` knows the receiver's members for sure, the logits of
every token that would leave the member names are masked; the model still chooses among
the rest (a mask, not a forced answer). Anywhere else, and for a receiver not known,
decoding is free. Figures: docs/member-constraint.md, `benchmarks/member_names.py`.

The allowed tokens come from a trie over the members in the model's own vocabulary
(`Vocabulary`): at a partial name `p`, a token is allowed when its piece is pure
identifier text continuing `p` toward a member (`cen` + `ter`), or when its identifier
head completes a member and the rest starts with something else (`radius` + `)`), or,
when `p` already is a member, when it starts with a non-identifier character (the name
ends there). A piece with a SentencePiece leading space (` center`) is no continuation:
`x. center` is not what anyone writes. Allowed sets are cached per member set and prefix
(`TRIES` of them), so a step inside a name costs a dictionary hit and one masking pass.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

TRIES = 64  # member sets whose allowed-token tables are kept
TAIL_CHARS = 400  # the text the receiver is looked for in
_IDENT = re.compile(r"\w+")
# `receiver.partial` at the end, the receiver a dotted name not following `.`, `)` or `]`.
_ACCESS = re.compile(r"(?<![\w.)\]}'\"])((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\.(\w*)$")


class Members(Protocol):
    """What resolves a receiver (`context.members.MemberScope`)."""

    def members_of(self, receiver: str) -> frozenset[str] | None: ...


class Vocabulary:
    """The model's token pieces, indexed by their identifier part (built once per model)."""

    def __init__(self, pieces: Sequence[bytes], is_end: Callable[[int], bool] | None = None) -> None:
        self.size = len(pieces)
        self.pure: dict[str, list[int]] = {}  # piece is identifier text only
        self.heads: dict[str, list[int]] = {}  # identifier text, then a non-identifier char
        breaks = np.zeros(self.size, dtype=bool)  # starts with a non-identifier char (or ends text)
        self.text: list[str] = []
        for i, raw in enumerate(pieces):
            try:
                piece = raw.decode("utf-8")
            except UnicodeDecodeError:
                piece = "\ufffd"  # a byte of a longer character: never identifier text
            self.text.append(piece)
            m = _IDENT.match(piece)
            if not piece or m is None or (is_end is not None and is_end(i)):
                breaks[i] = True
            elif m.end() == len(piece):
                self.pure.setdefault(piece, []).append(i)
            else:
                self.heads.setdefault(m.group(), []).append(i)
        self.breaks = breaks
        self.break_ids = np.flatnonzero(breaks)
        # Added to the logits where a name may end: one vectorized add masks the rest.
        self.end_penalty = np.where(breaks, np.float32(0.0), np.float32(-np.inf)).astype(np.float32)


class _Trie:
    """Allowed tokens per partial name, for one member set (filled lazily)."""

    def __init__(self, vocab: Vocabulary, members: frozenset[str]) -> None:
        self.vocab = vocab
        self.members = members
        self.nodes: dict[str, tuple[np.ndarray[Any, Any], bool] | None] = {}

    def node(self, partial: str) -> tuple[np.ndarray[Any, Any], bool] | None:
        """(allowed continuation tokens, whether the name may end here), or None when
        `partial` leads to no member."""
        if partial in self.nodes:
            return self.nodes[partial]
        ids: set[int] = set()
        ends = False
        for name in self.members:
            if not name.startswith(partial):
                continue
            rest = name[len(partial) :]
            ends = ends or not rest
            for n in range(1, len(rest) + 1):
                ids.update(self.vocab.pure.get(rest[:n], ()))
            ids.update(self.vocab.heads.get(rest, ()) if rest else ())
        got = (np.fromiter(sorted(ids), dtype=np.int64), ends) if ids or ends else None
        self.nodes[partial] = got
        return got


class TrieCache:
    """The tries of recent member sets (one per engine: it belongs to one vocabulary)."""

    def __init__(self, vocab: Vocabulary, size: int = TRIES) -> None:
        self.vocab = vocab
        self.size = size
        self._tries: OrderedDict[frozenset[str], _Trie] = OrderedDict()

    def get(self, members: frozenset[str]) -> _Trie:
        trie = self._tries.get(members)
        if trie is None:
            trie = self._tries[members] = _Trie(self.vocab, members)
            while len(self._tries) > self.size:
                self._tries.popitem(last=False)
        self._tries.move_to_end(members)
        return trie


def member_tries(pieces: Sequence[bytes]) -> TrieCache:
    """The tries of a model whose token pieces are `pieces` (its vocabulary, indexed: ~0.3 s
    for Gemma's 262k tokens; run it off the event loop)."""
    return TrieCache(Vocabulary(pieces))


def access_at_end(text: str) -> tuple[str, str] | None:
    """(receiver, partial name) when `text` ends inside a member access in code that reads
    a member (not at a statement's start, which may create one; not in a comment or a
    string on its last line), else None."""
    last = text[-TAIL_CHARS:].rpartition("\n")[2]  # a member access is on one line
    m = _ACCESS.search(last)
    if m is None:
        return None
    line = last[: m.start()]
    if "#" in line or line.count('"') % 2 or line.count("'") % 2:
        return None
    if not line.strip():
        return None  # a statement's start may assign a new attribute: `self.total = 0`
    return m.group(1), m.group(2)


class MemberConstraint:
    """One generation's constraint: the engine calls `restrict` before each token choice
    and `accept` with each token it emits (`providers/llama_engine.py`, `Job.constraint`)."""

    def __init__(self, tries: TrieCache, members: Members, prompt_end: str) -> None:
        self.tries = tries
        self.members = members
        self.text = prompt_end[-TAIL_CHARS:]
        self._known: dict[str, frozenset[str] | None] = {}
        self.masked_steps = 0  # steps where the mask applied (for tests and benchmarks)

    def _allowed(self) -> tuple[np.ndarray[Any, Any], bool] | None:
        access = access_at_end(self.text)
        if access is None:
            return None
        receiver, partial = access
        if receiver not in self._known:
            self._known[receiver] = self.members.members_of(receiver)
        names = self._known[receiver]
        if not names:
            return None
        return self.tries.get(names).node(partial)

    def restrict(self, logits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """`logits` with every token that would leave the known member names at -inf (a
        copy), or `logits` itself where nothing is constrained."""
        node = self._allowed()
        if node is None:
            return logits
        ids, ends = node
        self.masked_steps += 1
        penalty = self.tries.vocab.end_penalty
        out: np.ndarray[Any, Any]
        if ends and len(penalty) == len(logits):
            out = np.add(logits, penalty)
        elif ends:
            out = np.where(self.tries.vocab.breaks[: len(logits)], logits, -np.inf).astype(logits.dtype)
        else:
            out = np.full_like(logits, -np.inf)
        out[ids] = logits[ids]
        return out

    def applies(self) -> bool:
        """The next token is masked (the text ends in a known receiver's member access)."""
        return self._allowed() is not None

    def give_back(self, text: str) -> None:
        """The prompt gave its end `text` back to the model (`token_healing.py`), which
        writes it again: it is no longer part of the text before the answer."""
        if text and self.text.endswith(text):
            self.text = self.text[: -len(text)]

    def accept(self, token: int) -> None:
        """The engine emitted `token`: it is part of the text now."""
        vocab = self.tries.vocab
        piece = vocab.text[token] if 0 <= token < vocab.size else ""
        self.text = (self.text + piece)[-TAIL_CHARS:]


__all__ = [
    "TRIES",
    "MemberConstraint",
    "Members",
    "TrieCache",
    "Vocabulary",
    "access_at_end",
    "member_tries",
]
