"""Read a position's prompt into the embedded model's KV cache before anyone asks for it.

Two triggers (docs/embedded-latency.md):
- an edit pause (`Runtime.note_edit`): the user started a line far from the last prompt;
- `lspAssist/cursorRest` from the editor: the cursor rested at a position (after a jump,
  a click, a search), debounced by the client. Typing there then finds the prompt read
  and pays only for its own keys, instead of ~1 s of prompt reading on two cores.

Only while the model is idle: a real request cancels the read at its next 16-token batch
(`LocalProvider`), keeping what was read. Never for excluded files, never for stale
versions, never blocking: the prompt is built on the loop (the builder's memo makes it a
few ms) and read on the model's own thread. Counts only (never code) go to `counts` for
`lspAssist.stats`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.providers.base import EmbeddedModel, Provider

if TYPE_CHECKING:
    from lsp_assist.governance.guard import Governance
    from lsp_assist.pipeline.engine import CompletionEngine

log = logging.getLogger(__name__)

NOTIFY_CURSOR_REST = "lspAssist/cursorRest"  # client -> server


@dataclass
class RestCounts:
    """What happened to the cursor-rest notifications (numbers for `lspAssist.stats`)."""

    received: int = 0
    prefilled: int = 0  # a background read was started
    skipped: dict[str, int] = field(default_factory=dict)  # why not, per reason

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def as_dict(self) -> dict[str, object]:
        return {"received": self.received, "prefilled": self.prefilled, "skipped": dict(self.skipped)}


@dataclass
class Prefiller:
    """Builds the fast tier's prompt at a position and hands it to the embedded model."""

    store: DocumentStore
    engine: Callable[[], CompletionEngine | None]
    provider: Callable[[], Provider | None]
    governance: Callable[[], Governance | None]
    counts: RestCounts = field(default_factory=RestCounts)

    def cursor_rest(self, uri: str, version: int | None, cursor: Cursor) -> str:
        """`lspAssist/cursorRest`: prefill at `cursor` when the document is at `version`.
        Returns a log line (counts and reasons only)."""
        self.counts.received += 1
        doc = self.store.get(uri)
        if doc is not None and version is not None and version != doc.version:
            why: str | None = "stale version"  # the user typed since: a request is coming
        else:
            self._moved(uri, cursor)
            why = self.at(uri, cursor, preempt=True)
        if why is not None:
            self.counts.skip(why)
            return f"cursor rest: no prefill ({why})"
        self.counts.prefilled += 1
        return "cursor rest: prefill started"

    def _moved(self, uri: str, cursor: Cursor) -> None:
        """The cursor rests at `cursor`: a prefetch that follows a suggestion somewhere else
        (the one the user just left) is dropped, or it would take the model from the read of
        this position and from the request that follows it. A rest inside the suggestion it
        follows, or at its end (accepted), keeps it."""
        engine, doc = self.engine(), self.store.get(uri)
        if engine is None or doc is None:
            return
        c = doc.clamp(cursor)
        engine.prefetcher.drop_unrelated(engine.prompts.target(doc.snapshot(), c))

    def at(self, uri: str, cursor: Cursor, *, preempt: bool = False) -> str | None:
        """Read the prompt at `cursor` of open document `uri` into the idle model; None
        when the read started, else why not. `preempt`: a generation still running for
        another place gives way (the cursor rests elsewhere now)."""
        provider, engine, doc = self.provider(), self.engine(), self.store.get(uri)
        if doc is None or engine is None:
            return "not open"
        if not isinstance(provider, EmbeddedModel) or not provider.loaded:
            return "no embedded model"
        gov = self.governance()
        if doc.path is None or (gov is not None and gov.excluded(doc.path)):
            return "excluded"  # never read an excluded file into the model, even in-process
        try:
            prompt = engine.prompts.for_open(uri, doc.clamp(cursor), "fast")
        except Exception as exc:  # a background warm-up never breaks editing
            log.debug("prefill prompt failed: %s", exc)
            return "prompt failed"
        if prompt is None or provider.prefill(prompt.context, preempt=preempt) is None:
            return "model busy"
        return None


__all__ = ["NOTIFY_CURSOR_REST", "Prefiller", "RestCounts"]
