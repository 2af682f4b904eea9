"""The composition root: builds and wires every component from one configuration.

Nothing else constructs providers, caches or governance objects, so the CLI, the LSP
server and the benchmarks all run the same pipeline. A configuration change rebuilds the
parts that depend on configuration and keeps the open documents, the typing-through
index and the statistics. When the data boundary changes (a rebuild whose boundary differs,
an ignore or settings file edited on disk, a workspace folder added or removed), the policy
epoch advances (`governance/epoch.py`): every memory of content answers to it at its next
read, and the sources (the symbol index, the next-edit history) drop what it now refuses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from lsp_assist.config.loader import WORKSPACE_FILE, ConfigLayers, LoadResult, resolve_cache_dir
from lsp_assist.config.schema import TIER_NAMES, Config, LocalConfig, TierConfig
from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.editor_definitions import (
    VERSION_TOLERANCE,
    LoadedFile,
    load_definition_files,
    parse_notification,
)
from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.errors import ConfigError, EndpointRefused, LspAssistError
from lsp_assist.governance.breaker import BreakerState
from lsp_assist.governance.epoch import PolicyEpoch
from lsp_assist.governance.guard import Governance
from lsp_assist.governance.team_settings import default_user
from lsp_assist.languages.registry import canonical
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.model import RAW_PROMPT_PROVIDERS, ModelPredictor
from lsp_assist.nextedit.service import NextEditService
from lsp_assist.pipeline.boundary import admits
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.components import Components
from lsp_assist.pipeline.engine import CompletionEngine
from lsp_assist.pipeline.prebuild import PromptPrebuilder
from lsp_assist.pipeline.prefill import Prefiller
from lsp_assist.pipeline.scheduler import Scheduler, debounce_policy
from lsp_assist.pipeline.typing_index import TypingIndex
from lsp_assist.providers.attribution import Attribution, attribution_wanted
from lsp_assist.providers.base import EmbeddedModel, HttpEndpoint, LoadEvent, Provider
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.offline import OfflineProvider
from lsp_assist.providers.registry import build_provider
from lsp_assist.providers.roles import Roles, assign, installed_candidates, prompt_threads_for
from lsp_assist.providers.roles import apply as apply_roles
from lsp_assist.providers.streaming import StreamingProvider
from lsp_assist.telemetry.events import Labels, SuggestionEvents
from lsp_assist.telemetry.otel import Telemetry, build_telemetry
from lsp_assist.telemetry.retention import scheduler_from_env
from lsp_assist.telemetry.stats import STATS_FILE, StatsCollector
from lsp_assist.telemetry.usage import cost_of
from lsp_assist.workspace.service import WorkspaceService
from lsp_assist.workspace.warmup import run_warmup

log = logging.getLogger(__name__)

_REWARM_AFTER_S = 45.0  # below the connection pools' keep-alive expiry
_PREFILL_AFTER_S = 0.15  # an edit pause this long warms the embedded model's KV cache


def local_model_available() -> bool:
    """True when the `local` extra is installed (llama.cpp bindings importable)."""
    return importlib.util.find_spec("llama_cpp") is not None


# What the embedded model is loaded with; the other `local` fields are tier defaults.
_TIER_DEFAULT_FIELDS = ("context_chars", "first_token_timeout_ms", "total_timeout_ms", "answer_budget_ms")
# (model, the `local` settings it is loaded with, cache dir): equal keys, same model.
LoadKey = tuple[str, tuple[tuple[str, object], ...], str]


def _local_load_key(tier: TierConfig, local: LocalConfig, cache_dir: Path) -> LoadKey:
    load_fields = tuple(
        (name, value) for name, value in dataclasses.asdict(local).items() if name not in _TIER_DEFAULT_FIELDS
    )
    return (tier.model or local.model, load_fields, str(cache_dir))


def resolve_tier(name: str, tier: TierConfig, local: LocalConfig) -> TierConfig:
    """Turn provider "auto" into "local" when the embedded model can run, else "offline".

    A tier on the embedded model gets the local prompt budget and timeouts: a small model
    on a laptop CPU reads ~1,000 prompt tokens a second, so a 4,000-character prompt would
    spend its whole first-token budget reading.
    """
    if tier.provider == "auto":
        tier = dataclasses.replace(tier, provider="local" if local_model_available() else "offline")
    if tier.prompt_layout == "auto":
        stable = tier.provider == "local" and local.backend == "inprocess"
        tier = dataclasses.replace(tier, prompt_layout="stable" if stable else "trimmed")
    if tier.provider == "local":
        tier = dataclasses.replace(
            tier,
            context_chars=min(tier.context_chars, local.context_chars),
            first_token_timeout_ms=max(tier.first_token_timeout_ms, local.first_token_timeout_ms),
            answer_budget_ms=tier.answer_budget_ms or local.answer_budget_ms,
            total_timeout_ms=max(tier.total_timeout_ms, local.total_timeout_ms),
        )
    return tier


def _strong_view(built: Iterable[Provider], model: str) -> Provider | None:
    """The rewrite model of an embedded provider already built, as a provider, when it is
    `model` (`LocalProvider.strong_view`): the quality tier on the code model then shares
    the typing provider's copy of it instead of loading a second one."""
    from lsp_assist.providers.model_rates import model_id

    for provider in built:
        name = getattr(provider, "refiner_name", "")
        make = getattr(provider, "strong_view", None)
        if name and make is not None and model_id(name) == model_id(model):
            view: Provider = make()
            return view
    return None


def team_attribution(config: Config, governance: Governance | None) -> Attribution | None:
    """The labels every model call carries for gateways, when `[team]` asks for them."""
    t = config.team
    team = governance.team if governance is not None else None
    business_line = team.settings.business_line if team is not None else t.business_line
    if not attribution_wanted(business_line, t.store, t.attribution):
        return None
    environment = governance.settings.environment if governance is not None else ""
    return Attribution(business_line, t.user or default_user(), environment, t.attribution)


_EDITOR_LOADS: set[asyncio.Task[None]] = set()  # file loads for editor definitions in flight


class Runtime:
    """Every live component of one server process."""

    def __init__(self, layers: ConfigLayers | None = None, workspace_roots: list[Path] | None = None) -> None:
        self.layers = layers or ConfigLayers()
        self.workspace_roots = list(workspace_roots or [])
        self.store = DocumentStore()
        self.context = ContextEngine()
        # The symbol index follows every open document (tree-sitter definitions per file).
        self.store.on_change.append(self.context.index_document)
        self.store.on_close.append(self.context.forget_document)
        # The workspace index: built in the background, marked dirty on edits, re-read on close.
        self.workspace = WorkspaceService(self)
        self.store.on_change.append(self.workspace.note_change)
        self.store.on_close.append(self.workspace.note_closed)
        self.scheduler = Scheduler()
        # The data boundary's generation: every memory of content answers to it at read time.
        self.policy_epoch = PolicyEpoch()
        self.typing = TypingIndex()
        # The fast tier's prompt, built where each edit ends, ahead of the request it prompts.
        self.prebuilder = PromptPrebuilder(
            self.store, lambda: self.engine.prompts if self.engine else None, self.typing
        )
        self.store.on_change.append(self.prebuilder.note_change)
        self.store.on_close.append(lambda doc: self.prebuilder.forget(doc.uri))
        self.clients = ClientPool()
        self.config = Config()
        self.cache_dir = resolve_cache_dir(self.config)
        self.stats: StatsCollector | None = None
        # Suggestion ids, client events and retention of accepted text (memory + audit rows).
        self.suggestions = SuggestionEvents(
            self._record_suggestion_event, self._document_text, schedule=scheduler_from_env(os.environ)
        )
        self.store.on_close.append(lambda doc: self.suggestions.on_close(doc.uri))
        # Next-edit suggestions: the edit history (never of excluded files) and the service.
        self.history = EditHistory(excluded=lambda path: True)  # fail closed until `build`
        self.store.on_open.append(self.history.open)
        self.store.on_edit.append(self.history.on_edit)
        self.store.on_close.append(lambda doc: self.history.close(doc.uri))
        self.next_edit = NextEditService(self.store, self.history, self.suggestions)
        self.next_edit.epoch = self.policy_epoch
        self.engine: CompletionEngine | None = None
        self.governance: Governance | None = None
        self.providers: dict[str, Provider] = {}
        self.errors: list[str] = []
        self.sources: list[str] = []
        self._last_activity = time.monotonic()
        self._rewarm: asyncio.Task[None] | None = None
        self.telemetry: Telemetry | None = None
        self._telemetry_key = ""
        # Set by the LSP layer: a circuit breaker changed state (name, old, new).
        self.on_breaker_change: Callable[[str, str, str], None] | None = None
        # Set by the LSP layer: the team store went down or came back (message, up).
        self.on_team_store_change: Callable[[str, bool], None] | None = None
        # Loading the embedded model: the last `LoadEvent` and a listener for `$/progress`.
        self.load_state: LoadEvent | None = None
        self.on_load_progress: Callable[[LoadEvent], None] | None = None
        self._prefill_timer: asyncio.TimerHandle | None = None
        # Reads a position's prompt into the idle embedded model (edit pauses, cursor rests).
        self.prefiller = Prefiller(
            self.store, lambda: self.engine, lambda: self.providers.get("fast"), lambda: self.governance
        )
        # The embedded models built so far, with the settings they were loaded with.
        self._local_built: list[tuple[LoadKey, Provider]] = []
        # What the last build replaced, closed by `retire_old` once requests left it.
        self._retired: tuple[CompletionEngine | None, dict[str, Provider]] = (None, {})

    # ------------------------------------------------------------------ building

    def load(self) -> LoadResult:
        self.layers.load_files(self.workspace_roots)
        return self.layers.build()

    def build(self, result: LoadResult | None = None) -> list[str]:
        """(Re)build from configuration; returns the configuration errors to report."""
        result = result or self.load()
        errors = list(result.errors)
        # Each role's model from what is installed and how fast it runs here (roles.py);
        # what the configuration names explicitly wins.
        candidates = installed_candidates(
            result.config.local, resolve_cache_dir(result.config), prompt_threads_for(result.config.local)
        )
        self.roles: Roles = assign(result.config, candidates)
        config = apply_roles(result.config, self.roles)
        config.tiers = {name: resolve_tier(name, t, config.local) for name, t in config.tiers.items()}
        self.config = config
        self.sources = result.sources
        self.cache_dir = resolve_cache_dir(config)
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            errors.append(f"cache.dir: cannot create {self.cache_dir} ({exc}); persistent state disabled")

        old_gov = self.governance
        before = old_gov.boundary.fingerprint() if old_gov is not None else None
        self.governance, gov_errors = Governance.from_config(
            config,
            self.cache_dir,
            [str(r) for r in self.workspace_roots],
            on_breaker_change=self._breaker_changed,
        )
        errors.extend(gov_errors)
        errors.extend(self.governance.govern_folders(self.layers.folder_layers(self.workspace_roots)))
        if old_gov is not None:
            old_gov.close()
        team = self.governance.team
        if team is not None:
            team.store.on_change = lambda up, t=team: self._team_store_changed(t.health_message(up), up)
        gov = self.governance
        self._install_boundary(gov)
        if before is not None and before != gov.boundary.fingerprint():
            self._policy_changed()

        offline = OfflineProvider(corpus=self._corpus)
        providers: dict[str, Provider] = {}
        local_shared: dict[str, Provider] = {}
        built_local: list[tuple[LoadKey, Provider]] = []
        for name in TIER_NAMES:
            tier = config.tier(name)
            if not tier.enabled:
                continue
            if tier.provider == "offline":
                providers[name] = offline
                continue
            local_key = tier.model or config.local.model
            if tier.provider == "local" and local_key in local_shared:
                # One llama.cpp server per model, shared by the tiers that use it.
                providers[name] = local_shared[local_key]
                continue
            strong = _strong_view(local_shared.values(), local_key) if tier.provider == "local" else None
            if strong is not None:  # the typing provider's rewrite model: one copy, one slot
                providers[name] = strong
                continue
            kept = self._kept_local_model(tier, config) if tier.provider == "local" else None
            if kept is not None:
                providers[name] = local_shared[local_key] = kept
                built_local.append((_local_load_key(tier, config.local, self.cache_dir), kept))
                continue
            try:
                api_key = self.governance.api_key(name, tier)
                if not self.governance.tier_allowed(name):
                    self.governance.check_tier_endpoint(name, tier)
                provider = build_provider(
                    name,
                    tier,
                    clients=self.clients,
                    local_config=config.local,
                    cache_dir=self.cache_dir,
                    corpus=self._corpus,
                    api_key=api_key,
                )
                # Building does no I/O; the endpoint is checked where requests will really
                # go, which is the family's default URL when base_url is empty.
                self._check_endpoint(name, tier, provider)
                providers[name] = provider
                if tier.provider == "local":
                    local_shared[local_key] = providers[name]
                    built_local.append((_local_load_key(tier, config.local, self.cache_dir), provider))
            except (ConfigError, LspAssistError) as exc:
                errors.append(f"tiers.{name}: {exc}; this tier falls back to the offline engine")
                providers[name] = offline
        attribution = team_attribution(config, self.governance)
        for p in providers.values():
            if attribution is not None and isinstance(p, StreamingProvider):
                p.attribution = attribution
        old_providers = self.providers
        self.providers = providers
        self._local_built = built_local
        for provider in self.local_models():
            provider.on_progress = self._load_progress

        if self.stats is None:
            self.stats = StatsCollector(config.budget, self.cache_dir / STATS_FILE)
        else:
            self.stats.budget = config.budget
        self._wire_telemetry(config, errors)
        self.scheduler.configure(debounce_policy(config.completion, config.tier("fast").provider))
        cache = SuggestionCache(
            self.cache_dir / "suggestions" if config.cache.enabled else None,
            memory_entries=config.cache.memory_entries,
            disk_size_mb=config.cache.disk_size_mb,
            ttl_s=config.cache.ttl_s,
        )
        parts = Components(
            store=self.store,
            context=self.context,
            governance=self.governance,
            providers=providers,
            offline=offline,
            cache=cache,
            stats=self.stats,
            scheduler=self.scheduler,
            typing=self.typing,
            epoch=self.policy_epoch,
        )
        old_engine = self.engine
        self.engine = CompletionEngine(config, parts)
        if old_engine is not None:
            self.engine.on_suggestion_ready = old_engine.on_suggestion_ready
            self.engine.answers.on_answered = old_engine.answers.on_answered
            self.engine.on_status = old_engine.on_status
            self.engine.on_choices_ready = old_engine.on_choices_ready
        self._retired = (old_engine, old_providers)
        self.errors = errors
        self._configure_next_edit(config, providers)
        for err in errors:
            log.warning("configuration: %s", err)
        return errors

    def _install_boundary(self, gov: Governance) -> None:
        """Every file the context engine records (open tabs, the workspace index, the editor's
        files) and the next-edit history passes the data boundary first; what it refuses now
        is dropped."""
        self.context.editor_definitions.excluded = lambda path: gov.excluded(path) is not None
        self.context.set_boundary(admits(gov))
        self.history.excluded = lambda path: gov.excluded(path) is not None
        self.history.refilter()

    def _policy_changed(self) -> None:
        """The boundary may admit less than before: the epoch advances, so every memory of
        content answers to the new boundary at its next read (`governance/epoch.py`), and the
        suggestion ledger forgets the texts of documents it now refuses."""
        self.policy_epoch.advance()
        gov = self.governance
        if gov is None:
            return
        admit = admits(gov)
        for doc in self.store.documents():
            if not admit(doc.path or doc.uri):
                self.suggestions.on_close(doc.uri)

    def change_folders(self, added: Sequence[Path], removed: Sequence[Path]) -> list[str]:
        """`workspace/didChangeWorkspaceFolders`: an added folder's settings file is read and
        its exclusions are in force when this returns (before any of its files is answered),
        its index is built in the background; a removed folder's index rows leave at once,
        and the epoch moves past everything the old folders admitted. Returns the
        configuration errors to report; the caller rewires what was rebuilt."""
        gone = {os.path.abspath(r) for r in removed}
        roots = [r for r in self.workspace_roots if os.path.abspath(r) not in gone]
        known = {os.path.abspath(r) for r in roots}
        roots += [r for r in added if os.path.abspath(r) not in known]
        self.workspace_roots = roots
        errors = self.build()  # roots differ: the boundary's fingerprint too, so the epoch moves
        self.workspace.roots_changed()
        return errors

    def note_policy_files(self, paths: Sequence[str]) -> bool:
        """Files changed on disk (file events, saves). An ignore file the boundary reads takes
        effect now; True when a workspace folder's settings file changed (the caller rebuilds,
        `build`, and rewires what it rebuilt)."""
        roots = {os.path.abspath(r) for r in self.workspace_roots}
        names = {os.path.basename(p) for p in paths if p}
        if any(os.path.basename(p) == WORKSPACE_FILE and os.path.dirname(os.path.abspath(p)) in roots
               for p in paths):  # fmt: skip
            return True
        gov = self.governance
        if gov is not None and names & set(gov.boundary.ignore_names):
            gov.boundary.refresh()
            self._install_boundary(gov)
            self._policy_changed()
        return False

    def _configure_next_edit(self, config: Config, providers: Mapping[str, Provider]) -> None:
        """The next-edit service's settings and, with `predictor = "model"|"both"`, its model
        (a tier served by a provider that takes raw prompts; else the rules alone, said once)."""
        ne = config.next_edit
        tier = config.next_edit_tier()
        provider = providers.get(tier)
        if ne.predictor == "rules" or self.governance is None:
            self.next_edit.configure(ne, None, ("", "", ""))
            return
        if provider is None or provider.name not in RAW_PROMPT_PROVIDERS:
            name = provider.name if provider is not None else "none"
            self.errors.append(
                f"next_edit.predictor: tier {tier!r} runs on {name!r}; the model predictor needs one of "
                f"{', '.join(RAW_PROMPT_PROVIDERS)} (next edits come from the rules)"
            )
            self.next_edit.configure(ne, None, ("", "", ""))
            return
        key = f"{provider.name}:{provider.endpoint_host or 'local'}:{provider.model}"
        model = ModelPredictor(ne, self.store, provider, tier, self.governance, key)
        self.next_edit.configure(ne, model, (tier, provider.name, provider.model))

    def _kept_local_model(self, tier: TierConfig, config: Config) -> Provider | None:
        """The embedded model already built for these settings, to keep across a rebuild.

        A `didChangeConfiguration` that leaves the model's own settings alone (a debounce, a
        remote tier, governance) used to rebuild it too: the weights were read again and the
        editor got 1-2 s of offline answers. Only the settings the model is loaded with count;
        the prompt budget and timeouts it lends to tiers are read per request."""
        wanted = _local_load_key(tier, config.local, self.cache_dir)
        for key, provider in self._local_built:
            if key == wanted:
                return provider
        return None

    def _check_endpoint(self, name: str, tier: TierConfig, provider: Provider) -> None:
        """Raise EndpointRefused when the provider's effective endpoint may not be called."""
        url = effective_url(provider)
        gov = self.governance
        assert gov is not None  # built before the providers
        try:
            gov.check_tier_endpoint(name, tier, base_url=url)
        except EndpointRefused as exc:
            if tier.base_url:
                raise
            raise EndpointRefused(
                f"{exc} (the default endpoint of provider {tier.provider!r}, {url}; "
                f"set tiers.{name}.base_url or governance.allowed_hosts)"
            ) from None

    async def retire_old(self) -> None:
        """Close what a rebuild replaced (engine streams, local model processes)."""
        old_engine, old_providers = self._retired
        self._retired = (None, {})
        if old_engine is not None:
            await old_engine.aclose()
            old_engine.c.cache.close()
        for name, provider in old_providers.items():
            if self.providers.get(name) is not provider:
                try:
                    await provider.aclose()
                except Exception as exc:
                    log.debug("closing provider %s: %s", name, exc)

    def memory_report(self) -> dict[str, int]:
        """Estimated bytes each long-lived memo holds (every one bounded in bytes), and their
        total: what `lspAssist.stats` reports under "memory"."""
        out = self.context.memory()
        out["typing"] = self.typing.nbytes
        if self.engine is not None:
            out["prompts"] = self.engine.prompts.memo_bytes
            out["suggestions"] = self.engine.c.cache.memory_bytes
        if self.stats is not None:
            out["stats"] = self.stats.nbytes
        out["suggestion_events"] = self.suggestions.nbytes
        out["next_edit_history"] = self.history.nbytes
        out["total"] = sum(out.values())
        return out

    def local_models(self) -> list[EmbeddedModel]:
        """The in-process embedded models among the tiers (one per model file)."""
        unique = {id(p): p for p in self.providers.values()}.values()
        return [p for p in unique if isinstance(p, EmbeddedModel)]

    def start_model_load(self) -> None:
        """Begin loading the typing model in the background (called at `initialize`):
        requests meanwhile are answered by the offline engine, never by a wait. A model that
        serves only another role (escalation, next edits) loads when it is first asked."""
        fast = self.providers.get("fast")
        for provider in self.local_models():
            if provider is fast:
                provider.start_loading()

    async def wait_for_models(self, on_event: Callable[[LoadEvent], None] | None = None) -> None:
        """Wait until the embedded model is loaded (the CLI: `complete`, `demo`)."""
        self.on_load_progress = on_event
        try:
            for provider in self.local_models():
                try:
                    await provider.ready()
                except LspAssistError as exc:
                    log.warning("%s", exc)
        finally:
            self.on_load_progress = None

    def note_definitions(self, params: object) -> str:
        """`lspAssist/definitions` from the editor (context/editor_definitions.py); returns a
        log line with counts only (never names or text). Raises ValueError on a bad envelope."""
        uri, version, defs, bad = parse_notification(params)
        doc = self.store.get(uri)
        if doc is None:
            return "editor definitions for a document that is not open; ignored"
        if doc.version - version > VERSION_TOLERANCE:
            return f"editor definitions for version {version}, {doc.version - version} edits old; ignored"
        kept, excluded = self.context.editor_definitions.update(uri, version, defs)
        # The files they point into that lsp-assist has not indexed (a library, a stub) are
        # outlined too: read and parsed in a worker thread, never on the event loop.
        paths = self.context.editor_files.wanted(
            self.context.symbols, self.context.editor_definitions.current(uri, doc.version)
        )
        if paths:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a direct call): read them now
                self._add_editor_files(load_definition_files(paths))
            else:
                task = loop.create_task(self._load_editor_files(paths))
                _EDITOR_LOADS.add(task)
                task.add_done_callback(_EDITOR_LOADS.discard)
        return (
            f"editor definitions: {kept} kept, {excluded} from excluded files dropped, {bad} malformed;"
            f" {len(paths)} files to outline"
        )

    async def _load_editor_files(self, paths: list[str]) -> None:
        try:
            loaded = await asyncio.to_thread(load_definition_files, paths)
        except Exception:
            log.exception("editor definitions: reading their files failed")
            return
        self._add_editor_files(loaded)

    def _add_editor_files(self, loaded: list[LoadedFile]) -> None:
        excluded = self.context.editor_definitions.excluded
        n = self.context.editor_files.add(self.context.symbols, loaded, excluded)
        log.debug("editor definitions: %d files outlined", n)

    def note_edit(self, uri: str, row: int) -> None:
        """An edit at `row` (from didChange): once the user pauses 150 ms, the embedded model
        reads that line's prompt window in the background if it is idle (`LocalProvider.prefill`)."""
        if self._prefill_timer is not None:
            self._prefill_timer.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._prefill_timer = loop.call_later(_PREFILL_AFTER_S, self._prefill, uri, row)

    def _prefill(self, uri: str, row: int) -> None:
        self._prefill_timer = None
        doc = self.store.get(uri)
        if doc is not None:
            line = doc.line(row)
            self.prefiller.at(uri, Cursor(row, len(line) - len(line.lstrip(" \t"))))

    def note_cursor_rest(self, uri: str, version: int | None, cursor: Cursor) -> str:
        """`lspAssist/cursorRest`: the cursor rests at `cursor`; the idle embedded model reads
        that position's prompt (`pipeline/prefill.py`). Returns a log line (no code)."""
        if self._prefill_timer is not None:  # the rest's own position is the better guess
            self._prefill_timer.cancel()
            self._prefill_timer = None
        self.prebuilder.note_rest(uri, version, cursor)  # a request there finds its prompt built
        return self.prefiller.cursor_rest(uri, version, cursor)

    def _load_progress(self, event: LoadEvent) -> None:
        self.load_state = event
        listener = self.on_load_progress
        if listener is not None:
            listener(event)

    def _team_store_changed(self, message: str, up: bool) -> None:
        listener = self.on_team_store_change
        if listener is not None:
            listener(message, up)

    def _breaker_changed(self, name: str, old: BreakerState, new: BreakerState) -> None:
        listener = self.on_breaker_change
        if listener is not None:
            listener(name, old.value, new.value)

    def _corpus(self) -> list[str]:
        """Texts of the open documents, for the offline engine (excluded files left out)."""
        gov = self.governance
        return [d.text for d in self.store.documents() if gov is None or gov.excluded(d.path) is None]

    # ------------------------------------------------------------------ lifecycle

    def start_background_index(self) -> None:
        """Build the workspace index without delaying anything (idempotent while it runs)."""
        self.workspace.start_background()

    async def warm(self) -> None:
        """Open each tier's connection (and start the local model) ahead of the first request."""
        self.start_background_index()
        self.start_model_load()
        fast = self.providers.get("fast")
        for provider in {id(p): p for p in self.providers.values()}.values():
            if isinstance(provider, EmbeddedModel) and provider is not fast:
                continue  # loads when its role first needs it
            try:
                await provider.warm()
            except Exception as exc:  # warming is best effort
                log.info("warming %s failed: %s", provider.name, exc)

    def touch(self) -> None:
        """Called on every edit: after an idle spell, re-open the fast tier's connection now,
        while the user types, instead of on the next completion (keep-alive pools drop idle
        connections after about a minute; a cold TLS connection costs two round trips)."""
        now = time.monotonic()
        idle = now - self._last_activity
        self._last_activity = now
        if idle < _REWARM_AFTER_S or self._rewarm is not None:
            return
        provider = self.providers.get("fast")
        if provider is None:
            return

        async def rewarm() -> None:
            try:
                await provider.warm()
            finally:
                self._rewarm = None

        try:
            self._rewarm = asyncio.get_running_loop().create_task(rewarm())
        except RuntimeError:
            self._rewarm = None

    async def warmup(self, progress: Callable[[str], None] | None = None) -> dict[str, object]:
        """The `lspAssist.warmCache` command: index, connections, local model, precompute;
        the summary says per tier whether its endpoint answered (and the local model's load)."""
        summary = await run_warmup(self, progress)
        summary["endpoints"] = await self.check_endpoints()
        load = self.load_state
        if load is not None:
            summary["local_model"] = load.error or load.message
        return summary

    async def check_endpoints(self) -> dict[str, str]:
        """Each configured tier: "ok", "in process" (offline, local) or why it cannot be reached."""
        out: dict[str, str] = {}
        for name, provider in self.providers.items():
            url = effective_url(provider)
            if not url or provider.name in ("local", "offline"):
                out[name] = "in process" if provider.name == "offline" else "local model"
                continue
            out[name] = await self.clients.unreachable(url) or "ok"
        return out

    # ------------------------------------------------------------------ suggestion events

    def _document_text(self, uri: str) -> str | None:
        doc = self.store.get(uri)
        return None if doc is None else doc.text

    def _record_suggestion_event(self, row: dict[str, object]) -> None:
        """One suggestion event: the audit log (beside the model calls) and OpenTelemetry."""
        if self.governance is not None:
            self.governance.record_event(row)
        if self.telemetry is not None:
            self.telemetry.observe_event(row)

    def suggestion_labels(self, uri: str, tier: str, provider: str, model: str, source: str) -> Labels:
        """What an answered suggestion is counted under: the tier's provider and model when
        the answer came from a cache or typing-through (which do not name them)."""
        built = self.providers.get(tier)
        if built is not None:
            provider = provider or built.name
            model = model or built.model
        doc = self.store.get(uri)
        return Labels(
            feature="completion",
            tier=tier,
            provider=provider,
            model=model,
            language=(canonical(doc.language_id) or doc.language_id) if doc is not None else "",
            source=source,
        )

    def issue_suggestion(self, uri: str, at: Cursor, text: str, typed: int, labels: Labels) -> str:
        """The suggestion id of an answer inserting `text` at `at` (its range start)."""
        doc = self.store.get(uri)
        start = doc.offset(at) if doc is not None else 0
        return self.suggestions.issue(uri, start, text, typed, labels)

    def _cost_of(self, record: Mapping[str, object]) -> float:
        """A model call's estimated cost at the prices configured now."""
        return cost_of(record, self.governance.settings.prices) if self.governance is not None else 0.0

    def _wire_telemetry(self, config: Config, errors: list[str]) -> None:
        """OpenTelemetry export: (re)built when its settings change, hooked to stats and calls."""
        gov = self.governance
        assert gov is not None  # built first
        team = gov.team
        business_line = team.settings.business_line if team is not None else config.team.business_line
        environment = str(gov.settings.environment)
        key = repr((config.telemetry, business_line, environment))
        if key != self._telemetry_key:
            old, self.telemetry = self.telemetry, None
            if old is not None:
                threading.Thread(target=old.shutdown, name="otel-shutdown", daemon=True).start()
            self.telemetry, terrs = build_telemetry(
                config.telemetry,
                business_line=business_line,
                environment=environment,
                cost_of=self._cost_of,
            )
            errors.extend(terrs)
            self._telemetry_key = key
        if self.telemetry is not None:
            gov.call_observers.append(self.telemetry.observe_call)
        if self.stats is not None:
            self.stats.observers = [] if self.telemetry is None else [self.telemetry.observe_request]

    async def aclose(self) -> None:
        self.workspace.close()
        self.suggestions.close()
        if self.telemetry is not None:
            # Flushes what is queued; bounded by the exporters' timeouts, off the loop.
            await asyncio.to_thread(self.telemetry.shutdown)
            self.telemetry = None
        if self.stats is not None:
            self.stats.flush()
        await self.retire_old()
        if self.engine is not None:
            await self.engine.aclose()
            await self.engine.c.cache.flush()
            self.engine.c.cache.close()
        for provider in {id(p): p for p in self.providers.values()}.values():
            try:
                await provider.aclose()
            except Exception as exc:
                log.debug("closing provider: %s", exc)
        await self.clients.aclose_all()
        if self.governance is not None:
            # Flushes batched quota tokens and closes the team store's connections.
            await self.governance.aclose()


def effective_url(provider: Provider) -> str:
    """Where the provider's requests go: its base URL; "" when it runs in this process or
    in a process we start on loopback (offline, local). A provider that names a host but
    no URL is treated as https to that host, so allowed_hosts still applies to it."""
    url = provider.base_url if isinstance(provider, HttpEndpoint) else None
    if url:
        return url
    host = provider.endpoint_host
    return f"https://{host}" if host else ""


def build_runtime(
    workspace_roots: list[Path] | None = None, init_options: Mapping[str, object] | None = None
) -> Runtime:
    from lsp_assist.config.loader import unwrap_client_settings

    layers = ConfigLayers(init_options=unwrap_client_settings(init_options or {}))
    rt = Runtime(layers, workspace_roots)
    rt.build()
    return rt
