"""`StreamSpec`: one model call to start (`StreamLauncher.launch`), and the anchor its
stream is attached by."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.pipeline.inflight import Anchor
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import Target

_TAIL = 2048
_HEAD = 512


def anchor_of(target: Target) -> Anchor:
    text, offset = target.snap.text, target.offset
    return Anchor(
        uri=target.uri,
        version=target.snap.version,
        before_len=offset,
        before_tail=text[max(0, offset - _TAIL) : offset],
        after_head=text[offset : offset + _HEAD],
    )


@dataclass(frozen=True)
class StreamSpec:
    """One model call to start: what to ask, for whom, and how it is accounted."""

    target: Target
    prompt: Prompt
    feature: str = "completion"
    max_tokens: int | None = None
    live: bool = True  # registered as the document's live stream (attachable)
    speculative: bool = False  # nobody waits for it yet: it yields the one slot
    fallback_from: str | None = None
    retries: int = 0
    hedged: bool = False
    # Remember the answer for typing-through at the target; False caches only (precompute
    # for a file that is not open: no one types along with it yet).
    remember: bool = True
    # An extra sample for an Invoked request's choices (`choices.second_sample`): its own
    # temperature, and its text is neither cached nor remembered (it is not the answer).
    temperature: float | None = None
    sample: bool = False
    # A refinement (see `Refinements.refine`): the answer the editor was given from a
    # prompt the provider cut; this stream reads the whole prompt and its answer replaces it.
    shown: str | None = None

    @property
    def tier(self) -> str:
        return self.prompt.tier
