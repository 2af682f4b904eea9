"""The embedded model, in this process: `llama_cpp` on one worker thread with KV-cache reuse.

Why in-process (measured in ``benchmarks/local_latency.py``; docs/design.md, "The embedded model"):
every request's prompt shares its start with the previous one (see
`lsp_assist.context.layout`), and a `Llama` context that is kept between requests reads
only the tokens after the longest common prefix: time to first token falls from over a
second to ~15-30 ms on a 2-core laptop CPU. No HTTP hop, no second Python process and no
server lock sit between a keystroke and the model, and a newer request interrupts the
running one between two tokens (`Job.cancel`). The managed llama-cpp-python server
(`local.backend = "server"`, `providers/local_server.py`) stays available: it isolates
crashes in a child process, at the cost of ~2x more memory per server and a prompt cache
that today's trimmed prompts never hit.

Loading starts at `initialize` (`start_loading`, from `Runtime.warm`), never on a
keystroke: while it runs `available_now()` is False and the pipeline answers from the
offline engine at once instead of waiting; `lsp-assist complete`/`demo` await `ready()`.
The load reports `LoadEvent`s (stage, percent) for `$/progress` and the CLI's stderr.

The worker thread is the only one that touches the llama.cpp context; the event loop
only enqueues jobs and reads streamed text from an asyncio queue.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.context.templates import render_completion, resolve_template
from lsp_assist.domain import ModelRequest, PromptContext, StreamChunk
from lsp_assist.errors import Unavailable
from lsp_assist.providers.base import LoadEvent
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.local_loader import ModelLoader
from lsp_assist.providers.local_prefill import BackgroundReads
from lsp_assist.providers.local_rates import RatesKeeper
from lsp_assist.providers.local_refine import RefineModel
from lsp_assist.providers.local_server import LocalServerProvider, free_port, missing_modules
from lsp_assist.providers.local_shared import CutPrompts, LocalSettings
from lsp_assist.providers.local_stream import LocalParts, LocalStreamer
from lsp_assist.providers.local_threads import default_threads, prompt_threads
from lsp_assist.providers.local_worker import ModelWorker
from lsp_assist.providers.model_rates import ModelRates
from lsp_assist.providers.prompt_budget import PromptBudget
from lsp_assist.providers.strong_model import StrongModel

#: The typing model when `local.model` is "auto" and nothing chose one (`roles.apply` does).
DEFAULT_MODEL = "gemma3-270m"


def _parts(tier: TierConfig, local: LocalConfig, cache_dir: Path) -> LocalParts:
    """The provider's collaborators, wired to one another."""
    name = tier.model or local.model
    settings = LocalSettings(local, Path(cache_dir), DEFAULT_MODEL if name == "auto" else name)
    worker = ModelWorker()
    cuts = CutPrompts(PromptBudget(budget_ms=float(local.prompt_budget_ms)))
    # An engine is in use while the loader or the refine model holds it (looked up at call time).
    rates = RatesKeeper(settings, worker, lambda engine: engine in (loader.engine, refiner.engine))
    refiner = RefineModel(settings, worker, rates, lambda: loader.engine is not None)
    loader = ModelLoader(settings, worker, rates, cuts, on_loaded=refiner.start)
    reads = BackgroundReads(worker, loader, refiner, rates, cuts)
    return LocalParts(settings, worker, loader, refiner, rates, cuts, reads)


class LocalProvider:
    """A `Provider` running the embedded GGUF model in this process (see module docstring):
    the face of its parts, each with one job: `ModelLoader` (the typing model's load),
    `ModelWorker` (the one thread and its jobs), `LocalStreamer` (a request's stream),
    `BackgroundReads` (prefill, read-ahead), `RefineModel` (the rewrite model) and
    `RatesKeeper` (each model's measured speed).

    `single_slot`: one generation at a time; a newer stream interrupts the running one.
    """

    def __init__(self, tier: TierConfig, local: LocalConfig, cache_dir: Path) -> None:
        self._tier = tier
        self._parts = parts = _parts(tier, local, cache_dir)
        self._settings, self._worker, self._loader = parts.settings, parts.worker, parts.loader
        self._refiner, self._reads = parts.refiner, parts.reads
        # Looked up per request: benchmarks/member_names.py times it by replacing it.
        self._streamer = LocalStreamer(parts, lambda request, refiner: self._constraint(request, refiner))
        self.single_slot = True
        self._strong_view: StrongModel | None = None

    # -- Provider protocol ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "local"

    @property
    def model(self) -> str:
        return self._settings.model_name

    @property
    def endpoint_host(self) -> str | None:
        return None  # in-process: nothing leaves the machine

    @property
    def loaded(self) -> bool:
        return self._loader.engine is not None

    def available_now(self) -> bool:
        """True when a stream would start generating at once. Starts (or, after a failure
        and a pause, retries) the load when it is not running; never waits."""
        return self._loader.available_now()

    def start_loading(self) -> asyncio.Task[Any]:
        """Begin loading in the background (idempotent while a load runs)."""
        return self._loader.start_loading()

    async def ready(self) -> None:
        """Wait until the model is loaded; raises Unavailable if it cannot be."""
        await self._loader.ready()

    def stream(self, request: ModelRequest, *, strong: bool = False) -> AsyncGenerator[StreamChunk, None]:
        """Stream `request` from the typing model; a rewrite (`request.refine`) and `strong`
        (the quality tier's `StrongModel`) run on the rewrite model when it is loaded."""
        return self._streamer.stream(request, strong)

    def prefill(self, context: PromptContext, *, preempt: bool = False) -> asyncio.Future[None] | None:
        """Read the prompt for `context` into the KV cache in the background, when the model
        is idle (`BackgroundReads.prefill`); None when a request runs or nothing is loaded."""
        return self._reads.prefill(context, preempt=preempt)

    @property
    def busy(self) -> bool:
        """True while a request or a background read holds the model (or one is due)."""
        return self._worker.busy

    async def warm(self) -> None:
        with contextlib.suppress(Unavailable):
            await self.ready()

    async def aclose(self) -> None:
        self._worker.stop_current()
        self._worker.stop_background()
        await self._loader.wait_load()
        self._parts.rates.cancel()
        await self._loader.stop_vocabulary()
        await self._refiner.stop_loading()
        await self._worker.close((self._loader.detach(), self._refiner.detach()))
        self._loader.forget_load()

    # -- the refine model -------------------------------------------------------------------------
    @property
    def refine_after_s(self) -> float | None:
        """How long the user rests after an answer before the refine model rewrites it; None
        while there is no refine model (then only an answer cut to the jump budget is
        refined, at once, by the main model: `pipeline/launcher.py`)."""
        return self._refiner.rest_s

    @property
    def refiner_name(self) -> str:
        """The stronger model that rewrites answers after a rest ("" for none)."""
        return self._refiner.name

    @property
    def strong_loaded(self) -> bool:
        return self._refiner.engine is not None

    def strong_view(self) -> StrongModel:
        """This provider's rewrite model as a provider (the quality tier on it)."""
        if self._strong_view is None:
            self._strong_view = StrongModel(self)
        return self._strong_view

    async def refiner_ready(self, urgent: bool = False) -> bool:
        """Wait for the refine model's load; True when it is in use. `urgent` (an escalation
        the user waits for) starts the load now instead of at the next idle spell."""
        return await self._refiner.ready(urgent)

    # -- the member constraint ----------------------------------------------------------------------
    def _constraint(self, request: ModelRequest, refiner: bool = False) -> Any:
        """The member constraint for this request on the typing model or (`refiner`) the
        refine model, each over its own vocabulary, or None (switched off, no receivers
        known for the language, or that model's vocabulary not read yet: free decoding)."""
        members = request.context.members
        tries = self._refiner.tries if refiner else self._loader.tries
        if not self._settings.local.constrain_members or members is None or tries is None:
            return None
        from lsp_assist.providers.member_constraint import MemberConstraint

        return MemberConstraint(tries, members, request.context.prefix)

    async def members_ready(self) -> bool:
        """Wait until the member constraint can apply (the vocabulary indexed after the
        load, ~2 s); False when it is switched off or the model is not loaded."""
        return await self._loader.members_ready()

    async def settled(self) -> None:
        """Wait until the healing index and the member names are built after the load."""
        await self._loader.settled()

    # -- figures and settings -------------------------------------------------------------------------
    def threads(self) -> tuple[int, int]:
        """(generation, most prompt threads); configured values win over the defaults."""
        return self._settings.threads()

    @property
    def budget(self) -> PromptBudget:
        """After a jump the first request reads only what fits this budget (prompt_budget.py)."""
        return self._parts.cuts.budget

    @budget.setter
    def budget(self, budget: PromptBudget) -> None:
        self._parts.cuts.budget = budget

    @property
    def on_progress(self) -> Callable[[LoadEvent], None] | None:
        return self._loader.on_progress

    @on_progress.setter
    def on_progress(self, listener: Callable[[LoadEvent], None] | None) -> None:
        self._loader.on_progress = listener

    @property
    def load_s(self) -> float:
        return self._loader.load_s

    @property
    def rates(self) -> dict[str, ModelRates]:
        """Each engine's speed here (`model_rates`): measured once per machine when idle."""
        return self._parts.rates.rates

    @property
    def last_stats(self) -> Any:
        return self._streamer.last_stats

    @property
    def last_constraint(self) -> Any:
        """The member constraint of the last stream, if any."""
        return self._streamer.last_constraint

    @property
    def read_ahead_runs(self) -> int:
        """Full prompts read in the background after a cut one."""
        return self._reads.read_ahead_runs

    @property
    def refined_runs(self) -> int:
        """Refinements the refine model ran."""
        return self._refiner.runs

    # -- for tests and benchmarks that drive the engine itself ----------------------------------------
    @property
    def _local(self) -> LocalConfig:
        return self._settings.local

    @_local.setter
    def _local(self, local: LocalConfig) -> None:
        self._settings.local = local

    @property
    def _engine(self) -> Any:
        return self._loader.engine

    @property
    def _executor(self) -> Any:
        return self._worker.executor

    @property
    def _current(self) -> Any:
        return self._worker.current

    @property
    def _background(self) -> Any:
        return self._worker.background

    @property
    def _template(self) -> str:
        return self._loader.template

    @property
    def _path_name(self) -> str:
        return self._loader.path_name

    @property
    def _line_enders(self) -> frozenset[int]:
        return self._parts.cuts.line_enders

    def _stop_background(self) -> None:
        self._worker.stop_background()


def build_local(tier: TierConfig, local: LocalConfig, clients: ClientPool, cache_dir: Path) -> Any:
    """The local provider for `local.backend`: "inprocess" (default) or "server"."""
    if local.backend == "server":
        return LocalServerProvider(tier, local, clients, cache_dir)
    return LocalProvider(tier, local, cache_dir)


__all__ = [
    "LoadEvent",
    "LocalProvider",
    "LocalServerProvider",
    "build_local",
    "default_threads",
    "free_port",
    "missing_modules",
    "prompt_threads",
    "render_completion",  # for benchmarks/humaneval_rerank.py, which renders as the provider does
    "resolve_template",
]
