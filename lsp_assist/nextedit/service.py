"""The one function the next-edit handler calls, and the suggestion ids it answers with.

`NextEditService.suggest(uri, version, cursor)` answers for exactly that version of an
open document: nothing when the version is stale (before or after the predictor ran), when
the feature is off, when the data boundary excludes the file, or when there is no recorded
edit. `next_edit.predictor` picks who answers: the rules (the default), a model predictor
(`model.py`, under the same governance as completions: quota, rate limit, breaker, audit
with feature `next_edit`), or both (the rules first, the model when they have nothing). Each
proposal gets a suggestion id from the same ledger completions use, so shown / accepted /
dismissed reach the audit log and telemetry under feature `next_edit`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from lsp_assist.config.schema import NextEditConfig
from lsp_assist.documents.store import Document, DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.governance.epoch import PolicyEpoch
from lsp_assist.languages.registry import canonical
from lsp_assist.nextedit import confidence, rules
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.proposal import Proposal
from lsp_assist.telemetry.events import Labels, SuggestionEvents

log = logging.getLogger(__name__)

#: A model predictor: (document, its history, cursor) -> proposals (`model.ModelPredictor`).
ModelPredict = Callable[[Document, EditHistory, Cursor], Awaitable[list[Proposal]]]


@dataclass(frozen=True)
class Answer:
    """A proposal with the suggestion id the client reports it by."""

    proposal: Proposal
    id: str


class NextEditService:
    """Edit history in, proposals out; rebuilt parts are swapped in by `configure`."""

    def __init__(self, store: DocumentStore, history: EditHistory, events: SuggestionEvents) -> None:
        self.store = store
        self.history = history
        self.events = events
        self.config = NextEditConfig()
        self.model: ModelPredict | None = None
        self.model_name = ("", "", "")  # (tier, provider, model) for the labels
        # The data boundary's generation (the runtime shares its own): proposals worked out
        # under an older boundary are not given (`governance/epoch.py`).
        self.epoch = PolicyEpoch()

    def configure(
        self, config: NextEditConfig, model: ModelPredict | None, name: tuple[str, str, str]
    ) -> None:
        self.config = config
        self.model = model
        self.model_name = name

    def _current(self, uri: str, version: int) -> Document | None:
        doc = self.store.get(uri)
        return doc if doc is not None and doc.version == version else None

    async def suggest(self, uri: str, version: int, cursor: Cursor) -> list[Answer]:
        """Proposals for `uri` at `version` with the cursor at `cursor` (code points)."""
        doc = self._current(uri, version)
        history = self.history.get(uri)
        if doc is None or history is None or history.last is None or not self.config.enabled:
            return []  # stale, not open, excluded (never recorded), nothing edited, or off
        if self.history.excluded(doc.path):
            return []  # excluded since it was recorded: the boundary's word is the last one
        epoch = self.epoch.value
        others = [d for d in self.store.documents() if d is not doc and self.history.get(d.uri) is not None]
        predictor = self.config.predictor
        found = []
        if predictor != "model":
            earlier = list(history.edits)[-1 - rules.LOOKBACK : -1]
            table = confidence.TABLE if self.config.confidence == "learned" else None
            gate = rules.Gate(self.config.min_confidence, table)
            found = rules.predict(doc, history.last, cursor, others, earlier, gate)
        source = "rules"
        if not found and predictor in ("model", "both") and self.model is not None:
            found = await self.model(doc, self.history, cursor)
            source = "model"
        if self._current(uri, version) is None or not self.epoch.admits(epoch):
            return []  # typed, or the policy changed, while the model answered
        return [self._issue(p, doc, source) for p in found if self._valid(p)]

    def _valid(self, p: Proposal) -> bool:
        doc = self.store.get(p.uri)
        return doc is not None and doc.version == p.version and self.history.get(p.uri) is not None

    def _issue(self, p: Proposal, asked: Document, source: str) -> Answer:
        doc = self.store.get(p.uri) or asked
        tier, provider, model = self.model_name if source == "model" else ("rules", "rules", "")
        labels = Labels(
            feature="next_edit",
            tier=tier,
            provider=provider,
            model=model,
            language=canonical(doc.language_id) or doc.language_id,
            source=p.rule,
        )
        return Answer(p, self.events.issue(p.uri, doc.offset(p.start), p.text, 0, labels))

    def event(self, sid: str, kind: str) -> bool:
        """A client's report on a proposal: "shown", "accepted" or "dismissed"."""
        return self.events.event(sid, kind)
