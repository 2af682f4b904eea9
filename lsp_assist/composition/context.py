"""Build step 0, context: what lives as long as the process, built once.

The open documents, the symbol and workspace indexes, the typing-through index, the
policy epoch, the suggestion ledger and the next-edit history survive every rebuild; a
configuration change only re-points them (the data boundary, `governance.py`). Where a
part needs what a build makes (the engine, governance, telemetry), it reads it from the
runtime at call time (`ContextHost`), so it always sees the current build.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from lsp_assist.context.builder import ContextEngine
from lsp_assist.documents.store import DocumentStore
from lsp_assist.governance.epoch import PolicyEpoch
from lsp_assist.governance.guard import Governance
from lsp_assist.governance.redaction import clean_lines_bytes, snippet_memo_bytes
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.service import NextEditService
from lsp_assist.pipeline.engine import CompletionEngine
from lsp_assist.pipeline.prebuild import PromptPrebuilder
from lsp_assist.pipeline.prefill import Prefiller
from lsp_assist.pipeline.scheduler import Scheduler
from lsp_assist.pipeline.typing_index import TypingIndex
from lsp_assist.providers.base import Provider
from lsp_assist.providers.http import ClientPool
from lsp_assist.telemetry.events import SuggestionEvents
from lsp_assist.telemetry.otel import Telemetry
from lsp_assist.telemetry.retention import scheduler_from_env
from lsp_assist.telemetry.stats import StatsCollector
from lsp_assist.workspace.service import WorkspaceHost, WorkspaceService


class ContextHost(WorkspaceHost, Protocol):
    """What the long-lived parts read of the runtime's current build."""

    @property
    def engine(self) -> CompletionEngine | None: ...

    @property
    def governance(self) -> Governance | None: ...

    @property
    def telemetry(self) -> Telemetry | None: ...

    @property
    def providers(self) -> dict[str, Provider]: ...


@dataclass(frozen=True)
class ContextParts:
    """The process's long-lived components."""

    store: DocumentStore
    context: ContextEngine
    workspace: WorkspaceService
    scheduler: Scheduler
    policy_epoch: PolicyEpoch  # the data boundary's generation: memories answer to it
    typing: TypingIndex
    prebuilder: PromptPrebuilder  # the fast tier's prompt, built where each edit ends
    clients: ClientPool
    suggestions: SuggestionEvents  # ids, client events, retention of accepted text
    history: EditHistory  # never of excluded files; fails closed until the first build
    next_edit: NextEditService
    prefiller: Prefiller  # the idle embedded model reads a position's prompt
    corpus: Callable[[], list[str]]  # the offline engine's texts (excluded files left out)


def build_context(host: ContextHost) -> ContextParts:
    """The long-lived parts, each hooked to the documents' events (the symbol and workspace
    indexes follow every open document; the workspace index is re-read on close)."""
    store = DocumentStore()
    context = ContextEngine()
    store.on_change.append(context.index_document)
    store.on_close.append(context.forget_document)
    workspace = WorkspaceService(host)
    store.on_change.append(workspace.note_change)
    store.on_close.append(workspace.note_closed)
    typing = TypingIndex()
    prebuilder = PromptPrebuilder(
        store,
        lambda: host.engine.prompts if host.engine else None,
        typing,
        # Only an embedded model has `busy` (the one worker thread it reads on).
        models_busy=lambda: any(getattr(p, "busy", False) is True for p in host.providers.values()),
    )
    store.on_change.append(prebuilder.note_change)
    store.on_close.append(lambda doc: prebuilder.forget(doc.uri))
    suggestions = SuggestionEvents(
        lambda row: _record_event(host, row),
        lambda uri: None if (doc := store.get(uri)) is None else doc.text,
        schedule=scheduler_from_env(os.environ),
    )
    store.on_close.append(lambda doc: suggestions.on_close(doc.uri))
    history = EditHistory(excluded=lambda path: True)
    store.on_open.append(history.open)
    store.on_edit.append(history.on_edit)
    store.on_close.append(lambda doc: history.close(doc.uri))
    epoch = PolicyEpoch()
    next_edit = NextEditService(store, history, suggestions)
    next_edit.epoch = epoch
    prefiller = Prefiller(
        store, lambda: host.engine, lambda: host.providers.get("fast"), lambda: host.governance
    )
    return ContextParts(
        store, context, workspace, Scheduler(), epoch, typing, prebuilder, ClientPool(), suggestions,
        history, next_edit, prefiller, lambda: _corpus(store, host.governance),
    )  # fmt: skip


def _record_event(host: ContextHost, row: dict[str, object]) -> None:
    """One suggestion event: the audit log (beside the model calls) and OpenTelemetry."""
    if host.governance is not None:
        host.governance.record_event(row)
    if host.telemetry is not None:
        host.telemetry.observe_event(row)


def _corpus(store: DocumentStore, gov: Governance | None) -> list[str]:
    return [d.text for d in store.documents() if gov is None or gov.excluded(d.path) is None]


def memory_report(
    parts: ContextParts, engine: CompletionEngine | None, stats: StatsCollector | None
) -> dict[str, int]:
    """Estimated bytes each long-lived memo holds (every one bounded in bytes), and their
    total: what `lspAssist.stats` reports under "memory"."""
    out = parts.context.memory()
    out["typing"] = parts.typing.nbytes
    if engine is not None:
        out["prompts"] = engine.prompts.memo_bytes
        out["suggestions"] = engine.c.cache.memory_bytes
    if stats is not None:
        out["stats"] = stats.nbytes
    out["suggestion_events"] = parts.suggestions.nbytes
    out["next_edit_history"] = parts.history.nbytes
    out["redacted_snippets"] = snippet_memo_bytes()
    out["redaction_clean_lines"] = clean_lines_bytes()
    out["total"] = sum(out.values())
    return out
