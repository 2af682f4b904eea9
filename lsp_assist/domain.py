"""Plain data types shared by every layer below the protocol.

These are the contracts between `documents`, `context`, `pipeline`, `providers`,
`governance` and `telemetry`. They carry no behaviour beyond small helpers and never
import pygls or lsprotocol, so every layer can be tested without an LSP session.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from typing import Literal, Protocol

Mode = Literal["single", "multi"]
Feature = Literal["completion", "escalation", "warmup", "enrichment", "next_edit"]
TierName = Literal["fast", "quality", "backup"]


@dataclass(frozen=True)
class DocumentSnapshot:
    """An immutable view of one document at one version, taken before any await."""

    uri: str
    language_id: str
    version: int
    text: str
    path: str | None = None  # filesystem path when the URI is file:, else None


@dataclass(frozen=True)
class Cursor:
    """A cursor in code points (0-based line, 0-based column in Unicode scalar values)."""

    line: int
    character: int


@dataclass(frozen=True)
class Snippet:
    """A piece of cross-file context: where it came from and why it was picked."""

    path: str
    text: str
    score: float = 0.0
    reason: str = "similar"  # "similar" (windows like the cursor's) | "outline" (structure/outline.py)


class MemberLookup(Protocol):
    """Resolves a receiver to the names that may follow `receiver.` (None: not known for
    sure). Built by the context engine (`context/members.py`), read by the embedded model."""

    def members_of(self, receiver: str) -> frozenset[str] | None: ...


@dataclass(frozen=True)
class PromptPart:
    """One labelled piece of the prompt, for `lsp-assist context` and audits of size."""

    label: str  # e.g. "prefix.cursor_lines", "prefix.enclosing", "imports", "suffix", "snippet"
    reason: str  # why it was included, in words
    chars: int


@dataclass(frozen=True)
class PromptContext:
    """Everything the model needs for one completion, already trimmed to budget.

    `prefix` ends exactly at the cursor and `suffix` starts exactly at it: the text the
    model must produce goes between them. Snippets come from other files.
    """

    language: str
    path: str
    prefix: str
    suffix: str
    snippets: tuple[Snippet, ...] = ()
    mode: Mode = "single"
    stop: tuple[str, ...] = ()
    max_tokens: int | None = None  # a suggestion from the syntax at the cursor; the tier caps it
    parts: tuple[PromptPart, ...] = ()
    # The text of the current line before and after the cursor, for post-processing: whole,
    # except on a minified line of thousands of characters (cut at tokens: context/long_lines.py).
    line_prefix: str = ""
    line_suffix: str = ""
    indent: str = ""  # indentation of the cursor line
    # The receivers at the cursor (the member constraint); derived from the document, so
    # neither part of the key nor of equality; never logged (it holds the document's text).
    members: MemberLookup | None = field(default=None, compare=False, repr=False)

    def key(self, tier: str, model: str) -> str:
        """A stable hash of everything that changes what the model would produce."""
        h = hashlib.blake2b(digest_size=16)
        for piece in (tier, model, self.language, self.mode, self.prefix, "\x00", self.suffix):
            h.update(piece.encode("utf-8", "surrogatepass"))
            h.update(b"\x1f")
        for snip in self.snippets:
            h.update(snip.path.encode("utf-8", "surrogatepass"))
            h.update(snip.text.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    @property
    def size(self) -> int:
        return len(self.prefix) + len(self.suffix) + sum(len(s.text) for s in self.snippets)


@dataclass(frozen=True)
class ModelRequest:
    """What a provider is asked for: the context plus the sampling settings of the tier."""

    context: PromptContext
    max_tokens: int
    temperature: float
    stop: tuple[str, ...] = ()
    fim_template: str = "auto"
    feature: Feature = "completion"
    # Next-edit prompts (nextedit/formats/): `context.prefix` is the whole prompt, sent as
    # it is (no FIM template, no snippets header); chat APIs get it as the user message
    # after `system`.
    raw: bool = False
    system: str = ""
    # A background refinement (pipeline/launcher.py): the answer was given from a prompt cut
    # to the embedded model's jump budget; this call reads the whole prompt, interruptibly.
    refine: bool = False
    # The answer on screen, when this call rewrites it: a model that verifies drafted tokens
    # in one pass drafts its first line (the embedded model, `llama_engine`), others ignore it.
    draft: str = ""


@dataclass
class Usage:
    """Token counts, from the provider's usage fields when it sends them, else estimated."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = True


@dataclass(frozen=True)
class StreamChunk:
    """One piece of streamed model output. `usage` arrives at most once, near the end."""

    text: str
    usage: Usage | None = None
    finish_reason: str | None = None
    # Transport timings in ms (e.g. {"connect": 3.8}) sent once, before the first token.
    meta: dict[str, float] | None = None


class Outcome(str, enum.Enum):
    """How a request was answered; every request gets exactly one."""

    MODEL = "model"
    CACHE = "cache"
    TYPING_THROUGH = "typing_through"
    ATTACHED = "attached"
    FALLBACK = "fallback"
    CANCELLED = "cancelled"
    EMPTY = "empty"
    EXCLUDED = "excluded"
    STALE = "stale"
    SKIPPED = "skipped"
    ERROR = "error"


@dataclass
class Suggestion:
    """A finished suggestion: text to insert at the cursor (after the typed prefix)."""

    text: str
    outcome: Outcome
    tier: str = ""
    provider: str = ""
    model: str = ""
    stages: dict[str, float] = field(default_factory=dict)  # stage name -> milliseconds
    complete: bool = True  # False when an enrichment may produce a longer one
    # What the user typed of this suggestion since it was computed (typing-through, attach):
    # the LSP answer's range covers it, so accepting replaces it instead of adding to it.
    typed: str = ""
    # An Invoked request's other distinct choices, after `text` (the editor cycles them).
    alternatives: list[str] = field(default_factory=list)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 3.5 characters per token for code)."""
    return max(1, int(len(text) / 3.5 + 0.5)) if text else 0
