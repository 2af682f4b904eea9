"""The runtime: one server process's components, built in named steps, and the facade
the protocol handlers, the CLI and the benchmarks call.

Nothing else constructs providers, caches or governance objects, so the CLI, the LSP
server and the benchmarks all run the same pipeline. `Runtime.build` runs the steps of
`lsp_assist/composition/` in order (configuration, governance, providers, telemetry,
pipeline); a configuration change runs them again and keeps the long-lived parts (open
documents, indexes, statistics: `composition/context.py`). When the data boundary changes
(a rebuild whose boundary differs, an ignore or settings file edited on disk, a workspace
folder added or removed), the policy epoch advances (`governance/epoch.py`): every memory
of content answers to it at its next read, and the sources (the symbol index, the
next-edit history) drop what it now refuses.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from lsp_assist.after_reply import settled
from lsp_assist.composition.configuration import local_model_available, resolve_configuration
from lsp_assist.composition.context import build_context, memory_report
from lsp_assist.composition.editor_feed import EditorDefinitions
from lsp_assist.composition.governance import build_governance, policy_files_changed, team_attribution
from lsp_assist.composition.idle import EditPauses, Rewarm
from lsp_assist.composition.listeners import Listeners
from lsp_assist.composition.pipeline import build_pipeline
from lsp_assist.composition.providers import LoadedModels, build_providers, effective_url, local_models
from lsp_assist.composition.teardown import close_engine, close_providers, retire
from lsp_assist.composition.telemetry import TelemetryParts, build_telemetry, close_telemetry
from lsp_assist.composition.warming import endpoint_report, wait_loaded, warm_providers
from lsp_assist.config.loader import ConfigLayers, LoadResult, resolve_cache_dir, unwrap_client_settings
from lsp_assist.config.schema import Config
from lsp_assist.domain import Cursor
from lsp_assist.governance.guard import Governance
from lsp_assist.languages.registry import canonical
from lsp_assist.pipeline.engine import CompletionEngine
from lsp_assist.providers.base import EmbeddedModel, LoadEvent, Provider
from lsp_assist.telemetry.events import Labels
from lsp_assist.telemetry.otel import Telemetry
from lsp_assist.telemetry.stats import StatsCollector
from lsp_assist.workspace.warmup import run_warmup

# What callers import from here besides the runtime.
__all__ = ["Runtime", "build_runtime", "effective_url", "local_model_available", "team_attribution"]

log = logging.getLogger(__name__)


class Runtime:
    """Every live component of one server process, and what the handlers ask of them."""

    def __init__(self, layers: ConfigLayers | None = None, workspace_roots: list[Path] | None = None) -> None:
        self.layers = layers or ConfigLayers()
        self.workspace_roots = list(workspace_roots or [])
        # Who is told what (the LSP layer sets them once; every build hands them on).
        self.listeners = Listeners()
        # What each build replaces: read by the long-lived parts at call time.
        self.config = Config()
        self.cache_dir = resolve_cache_dir(self.config)
        self.sources: list[str] = []
        self.errors: list[str] = []
        self.governance: Governance | None = None
        self.providers: dict[str, Provider] = {}
        self.engine: CompletionEngine | None = None
        self.stats: StatsCollector | None = None
        self.telemetry: Telemetry | None = None
        self._loaded: LoadedModels = ()  # the embedded models built, to keep across a rebuild
        self._telemetry: TelemetryParts | None = None
        # What the last build replaced, closed by `retire_old` once requests left it.
        self._retired: tuple[CompletionEngine | None, dict[str, Provider]] = (None, {})
        parts = self._context = build_context(self)
        self.store, self.context, self.workspace = parts.store, parts.context, parts.workspace
        self.scheduler, self.policy_epoch, self.typing = parts.scheduler, parts.policy_epoch, parts.typing
        self.prebuilder, self.clients, self.suggestions = parts.prebuilder, parts.clients, parts.suggestions
        self.history, self.next_edit, self.prefiller = parts.history, parts.next_edit, parts.prefiller
        self._pauses = EditPauses(self.store, self.prefiller)
        self._rewarm = Rewarm(lambda: self.providers.get("fast"))
        self._editor = EditorDefinitions(self.store, self.context)

    # ------------------------------------------------------------------ building

    def load(self) -> LoadResult:
        self.layers.load_files(self.workspace_roots)
        return self.layers.build()

    def build(self, result: LoadResult | None = None) -> list[str]:
        """(Re)build from configuration, step by step; returns the configuration errors."""
        resolved = resolve_configuration(result or self.load())
        self.config, self.roles, self.cache_dir = resolved.config, resolved.roles, resolved.cache_dir
        self.sources = resolved.sources
        gov = build_governance(
            resolved, self.workspace_roots, self.layers, self.governance, self.listeners, self._context
        )
        self.governance = governance = gov.governance
        corpus = self._context.corpus
        models = build_providers(resolved, governance, self.clients, corpus, self._loaded, self.listeners)
        retired = (self.engine, self.providers)
        self.providers, self._loaded = models.providers, models.loaded
        tel = self._telemetry = build_telemetry(resolved, governance, self._telemetry, self)
        self.stats, self.telemetry = tel.stats, tel.telemetry
        pipeline = build_pipeline(resolved, governance, models, tel.stats, self._context, self.listeners)
        self.engine, self._retired = pipeline.engine, retired
        self.errors = resolved.errors + gov.errors + models.errors + tel.errors + pipeline.errors
        for err in self.errors:
            log.warning("configuration: %s", err)
        return self.errors

    def change_folders(self, added: Sequence[Path], removed: Sequence[Path]) -> list[str]:
        """`workspace/didChangeWorkspaceFolders`: an added folder's settings file is read and
        its exclusions are in force when this returns (before any of its files is answered),
        its index is built in the background; a removed folder's index rows leave at once,
        and the epoch moves past everything the old folders admitted. Returns the
        configuration errors to report."""
        gone = {os.path.abspath(r) for r in removed}
        roots = [r for r in self.workspace_roots if os.path.abspath(r) not in gone]
        known = {os.path.abspath(r) for r in roots}
        roots += [r for r in added if os.path.abspath(r) not in known]
        self.workspace_roots = roots
        errors = self.build()  # roots differ: the boundary's fingerprint too, so the epoch moves
        self.workspace.roots_changed()
        return errors

    def note_policy_files(self, paths: Sequence[str]) -> bool:
        """Files changed on disk: an ignore file takes effect now; True when a workspace
        folder's settings file changed (the caller rebuilds)."""
        return policy_files_changed(self._context, self.governance, self.workspace_roots, paths)

    async def retire_old(self) -> None:
        """Close what a rebuild replaced (engine streams, local model processes)."""
        (engine, providers), self._retired = self._retired, (None, {})
        await retire(engine, providers, self.providers)

    # ------------------------------------------------------------------ models

    def local_models(self, tiers: Sequence[str] | None = None) -> list[EmbeddedModel]:
        """The in-process embedded models among the tiers, or among `tiers` (one per file)."""
        return local_models(self.providers[t] for t in tiers or self.providers if t in self.providers)

    def start_model_load(self) -> None:
        """Begin loading the typing model in the background (called at `initialize`):
        requests meanwhile are answered by the offline engine, never by a wait. A model that
        serves only another role (escalation, next edits) loads when it is first asked."""
        for provider in self.local_models(["fast"]):
            provider.start_loading()

    async def wait_for_models(
        self, on_event: Callable[[LoadEvent], None] | None = None, tier: str = "fast"
    ) -> None:
        """Wait until `tier`'s embedded model is loaded (the CLI: `complete`, `demo`); no other."""
        self.listeners.load_progress = on_event
        try:
            await wait_loaded(self.local_models([tier]))
        finally:
            self.listeners.load_progress = None

    # ------------------------------------------------------------------ editor events

    def note_definitions(self, params: object) -> str:
        """`lspAssist/definitions` (`composition/editor_feed.py`); returns a log line."""
        return self._editor.note(params)

    def note_edit(self, uri: str, row: int) -> None:
        """An edit at `row`: the idle embedded model reads its line after a pause."""
        self._pauses.note_edit(uri, row)

    def note_cursor_rest(self, uri: str, version: int | None, cursor: Cursor) -> str:
        """`lspAssist/cursorRest`: prebuild the prompt and prefill where the cursor rests;
        returns a log line."""
        self.prebuilder.note_rest(uri, version, cursor)  # a request there finds its prompt built
        return self._pauses.cursor_rest(uri, version, cursor)

    def touch(self) -> None:
        """Called on every edit: re-open the fast tier's connection after an idle spell."""
        self._rewarm.touch()

    # ------------------------------------------------------------------ lifecycle

    def start_background_index(self) -> None:
        """Build the workspace index without delaying anything (idempotent while it runs)."""
        self.workspace.start_background()

    async def warm(self) -> None:
        """Open each tier's connection (and start the local model) ahead of the first request."""
        self.start_background_index()
        self.start_model_load()
        await warm_providers(self.providers)

    async def warmup(self, progress: Callable[[str], None] | None = None) -> dict[str, object]:
        """The `lspAssist.warmCache` command: index, connections, local model, precompute;
        the summary says per tier whether its endpoint answered (and the local model's load)."""
        summary = await run_warmup(self, progress)
        summary["endpoints"] = await self.check_endpoints()
        load = self.listeners.load_state
        if load is not None:
            summary["local_model"] = load.error or load.message
        return summary

    async def check_endpoints(self) -> dict[str, str]:
        """Each configured tier: "ok", "in process" (offline, local) or why it cannot be reached."""
        return await endpoint_report(self.providers, self.clients)

    def memory_report(self) -> dict[str, int]:
        """Estimated bytes each long-lived memo holds, and their total (`lspAssist.stats`)."""
        return memory_report(self._context, self.engine, self.stats)

    async def aclose(self) -> None:
        await settled()  # what waited for the last reply (stats, audit lines) is written first
        self.prebuilder.close()  # a fill still queued would read the index closed next
        self.workspace.close()
        self.suggestions.close()
        if self._telemetry is not None:
            self._telemetry, self.telemetry = await close_telemetry(self._telemetry), None
        await self.retire_old()
        if self.engine is not None:
            await close_engine(self.engine)
        await close_providers(self.providers.values())
        await self.clients.aclose_all()
        if self.governance is not None:  # batched quota tokens, the team store's connections
            await self.governance.aclose()

    # ------------------------------------------------------------------ suggestion events

    def suggestion_labels(self, uri: str, tier: str, provider: str, model: str, source: str) -> Labels:
        """What an answered suggestion is counted under: the tier's provider and model when
        the answer came from a cache or typing-through (which do not name them)."""
        built = self.providers.get(tier)
        if built is not None:
            provider = provider or built.name
            model = model or built.model
        doc = self.store.get(uri)
        language = (canonical(doc.language_id) or doc.language_id) if doc is not None else ""
        return Labels("completion", tier, provider, model, language, source)

    def issue_suggestion(self, uri: str, at: Cursor, text: str, typed: int, labels: Labels) -> str:
        """The suggestion id of an answer inserting `text` at `at` (its range start)."""
        doc = self.store.get(uri)
        start = doc.offset(at) if doc is not None else 0
        return self.suggestions.issue(uri, start, text, typed, labels)


def build_runtime(
    workspace_roots: list[Path] | None = None, init_options: Mapping[str, object] | None = None
) -> Runtime:
    layers = ConfigLayers(init_options=unwrap_client_settings(init_options or {}))
    rt = Runtime(layers, workspace_roots)
    rt.build()
    return rt
