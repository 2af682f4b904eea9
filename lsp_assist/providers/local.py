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
import concurrent.futures
import contextlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.context.templates import MARKERS, is_fim_model, render_completion, resolve_template
from lsp_assist.domain import ModelRequest, PromptContext, StreamChunk, Usage
from lsp_assist.errors import ProviderError, Unavailable
from lsp_assist.providers.base import LoadEvent
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.local_server import LocalServerProvider, free_port, missing_modules
from lsp_assist.providers.model_rates import (
    QUIET_CORES,
    ModelRates,
    RatesCache,
    busy_cores,
    measure,
    model_id,
    prior_rates,
    rates_key,
)
from lsp_assist.providers.models import INSTALL_HINT, resolve_model
from lsp_assist.providers.prompt_budget import Cut, PromptBudget, fit_prompt, same_place
from lsp_assist.providers.refine_model import load_refiner, refine_model_name
from lsp_assist.providers.roles import BACKGROUND_BATCH_BUDGET_S
from lsp_assist.providers.strong_model import StrongModel, rewrite_context

log = logging.getLogger(__name__)
stats_log = logging.getLogger("lsp_assist.local_model")

RETRY_LOAD_AFTER_S = 30.0
VOCAB_SLICE = 8192  # tokens whose text one worker-thread step reads (member constraint)
# Prompt tokens per decode call in background reads (prefill, read-ahead, a refinement): a
# request arriving meanwhile waits for one batch (~50 ms on two cores), not for 128 tokens.
BACKGROUND_BATCH = 16
# A prefill reads the jump budget's cut of a prompt at once and the whole prompt only after
# this much more idleness: a key typed meanwhile keeps the cut's seam and reads only itself.
FULL_READ_AFTER_S = 1.0
# An escalation on the stronger model reads in batches a key waits this long for at most
# (the user asked and waits; larger batches waste fewer passes over the weights).
STRONG_BATCH_BUDGET_S = 0.5
# A model is measured (`model_rates.measure`) once nothing has used it for this long.
MEASURE_IDLE_S = 2.0
MEASURE_TRIES = 30
#: The typing model when `local.model` is "auto" and nothing chose one (`roles.apply` does).
DEFAULT_MODEL = "gemma3-270m"


def default_threads(cpus: int | None = None) -> tuple[int, int]:
    """(generation threads, prompt threads) when `local.threads` / `local.batch_threads` are 0.

    Measured on 2 cores (`benchmarks/local_latency.py --threads`, docs/benchmarks.md): generating with 1
    thread is as fast as with 2 on an idle machine (95 vs 98 tokens/s) and 3x faster with
    one core busy (93 vs 34: llama.cpp's threads spin-wait on each other); reading a prompt
    with 2 threads is 2x faster idle (418 vs 796 ms for 380 tokens) but 2x slower loaded
    (1,466 vs 791 ms). So: 1 generation thread, and prompt threads chosen per request by
    `prompt_threads` from the load average; above 4 a 270M model stops scaling.
    """
    n = cpus if cpus is not None else (os.cpu_count() or 2)
    return 1, max(1, min(4, n))


def _busy_cores() -> float:
    """Cores busy with other work right now: runnable tasks from /proc/loadavg (an instant
    count, minus the thread asking), else the 1-minute load average (macOS)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            running = int(fh.read().split()[3].split("/")[0])
        return float(max(0, running - 1))
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def prompt_threads(most: int, cpus: int | None = None, busy: float | None = None) -> int:
    """As many prompt threads as there are idle cores, from 1 to `most`: a spinning
    llama.cpp thread on a busy core slows all the others down."""
    n = cpus if cpus is not None else (os.cpu_count() or 2)
    load = _busy_cores() if busy is None else busy
    return max(1, min(most, int(n - load + 0.5)))


class LocalProvider:
    """A `Provider` running the embedded GGUF model in this process (see module docstring).

    `single_slot`: one generation at a time; a newer stream interrupts the running one.
    """

    def __init__(self, tier: TierConfig, local: LocalConfig, cache_dir: Path) -> None:
        self._tier = tier
        self._local = local
        self._cache_dir = Path(cache_dir)
        name = tier.model or local.model
        self._model_name = DEFAULT_MODEL if name == "auto" else name
        self.single_slot = True
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._engine: Any = None
        self._load: asyncio.Task[Any] | None = None
        self._failed_at = 0.0
        self._error: BaseException | None = None
        self._current: Any = None  # the Job running or queued last
        # A background read (prefill, read-ahead): any request or newer prefill cancels it.
        self._background: Any = None
        # After a jump the first request reads only what fits this budget (prompt_budget.py).
        self.budget = PromptBudget(budget_ms=float(local.prompt_budget_ms))
        self._line_enders: frozenset[int] = frozenset()
        self._cut: Cut | None = None  # where the last cut prompt joined (kept while typing on)
        self._current_prompt = ""  # the running stream's prompt text
        self._full_read: asyncio.TimerHandle | None = None  # a prefill's whole-prompt read, pending
        self.read_ahead_runs = 0  # full prompts read in the background after a cut one
        self._template = "none"
        self._path: Path | None = None
        self.on_progress: Callable[[LoadEvent], None] | None = None
        self.last_stats: Any = None
        self.last_constraint: Any = None  # the member constraint of the last stream, if any
        self.load_s: float = 0.0
        self._tries: Any = None  # member_constraint.TrieCache once the vocabulary is read
        self._vocab_task: asyncio.Task[None] | None = None
        # The refine model (`local.refine_model`): a second engine on the same worker thread,
        # loaded after the main one; refinements run on it once it is there.
        self._refiner_name = refine_model_name(local, self._model_name)
        self._refiner: Any = None
        self._refiner_template = "none"
        self._refiner_task: asyncio.Task[None] | None = None
        self._refiner_wanted = asyncio.Event()  # an escalation waits: load without idling first
        self.refined_runs = 0  # refinements the refine model ran (tests, stats)
        # Each engine's speed here (`model_rates`): measured once per machine when idle.
        self._rates_cache = RatesCache(self._cache_dir)
        self.rates: dict[str, ModelRates] = {}
        self._last_use = time.monotonic()
        self._measures: set[asyncio.Task[None]] = set()
        self._strong_view: StrongModel | None = None
        self._warm_rewrite: Callable[[], list[int]] | None = None  # the rewrite prompt to warm

    # -- Provider protocol ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "local"

    @property
    def model(self) -> str:
        return self._model_name

    @property
    def endpoint_host(self) -> str | None:
        return None  # in-process: nothing leaves the machine

    @property
    def loaded(self) -> bool:
        return self._engine is not None

    @property
    def refine_after_s(self) -> float | None:
        """How long the user rests after an answer before the refine model rewrites it; None
        while there is no refine model (then only an answer cut to the jump budget is
        refined, at once, by the main model: `pipeline/launcher.py`)."""
        return self._local.refine_rest_ms / 1000.0 if self._refiner is not None else None

    @property
    def refiner_name(self) -> str:
        """The stronger model that rewrites answers after a rest ("" for none)."""
        return self._refiner_name

    @property
    def strong_loaded(self) -> bool:
        return self._refiner is not None

    def strong_view(self) -> StrongModel:
        """This provider's rewrite model as a provider (the quality tier on it)."""
        if self._strong_view is None:
            self._strong_view = StrongModel(self)
        return self._strong_view

    def _batch(self, model: str, budget_s: float) -> int:
        """The prompt batch `model` reads within `budget_s` at its measured (else estimated) rates."""
        rates = self.rates.get(model) or prior_rates(1_000_000_000, self.threads()[1])
        return rates.batch_for(budget_s)

    def _note_loaded(self, name: str, path: Path, engine: Any) -> None:
        """Take `engine`'s rates from the cache, else estimate them and measure it once the
        model has been idle for MEASURE_IDLE_S (never while a request runs)."""
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        key = rates_key(model_id(name, size), self.threads()[1])
        cached = self._rates_cache.get(key)
        self.rates[name] = cached or prior_rates(size or 1_000_000_000, self.threads()[1])
        if cached is None:
            task = asyncio.get_running_loop().create_task(self._measure_when_idle(name, engine, key))
            self._measures.add(task)
            task.add_done_callback(self._measures.discard)

    def _measure(self, engine: Any, cancel: threading.Event) -> ModelRates | None:
        """`model_rates.measure` with the typing threads set: it times one generation
        thread and then every prompt thread (on the worker thread)."""
        gen, most = self.threads()
        engine.set_threads(gen, most)
        return measure(engine, cancel)

    async def _measure_when_idle(self, name: str, engine: Any, key: str) -> None:
        """Measure `engine` on the worker thread as background work: any stream cancels it,
        and it is tried again after the next idle spell (MEASURE_TRIES at most)."""
        from lsp_assist.providers.llama_engine import Job

        loop = asyncio.get_running_loop()
        for _ in range(MEASURE_TRIES):
            await asyncio.sleep(MEASURE_IDLE_S)
            idle = time.monotonic() - self._last_use >= MEASURE_IDLE_S and not self.busy
            if not idle or self._executor is None or engine not in (self._engine, self._refiner):
                continue
            # Other work on the cores (a build, a test run) would slow the figures that are
            # kept for good: measure only on a quiet machine.
            if await asyncio.to_thread(busy_cores) > QUIET_CORES:
                continue
            job = Job(tokens=[], max_tokens=0, temperature=0.0, emit=lambda _t: False)
            self._background = job
            try:
                rates = await loop.run_in_executor(self._executor, self._measure, engine, job.cancel)
            finally:
                if self._background is job:
                    self._background = None
            if rates is not None:
                self.rates[name] = rates
                await asyncio.to_thread(self._rates_cache.put, key, rates)
                log.info(
                    "local model %s measured: reads %.0f prompt tokens/s, writes %.1f tokens/s",
                    name,
                    rates.prompt_tps,
                    rates.gen_tps,
                )
                return

    def available_now(self) -> bool:
        """True when a stream would start generating at once. Starts (or, after a failure
        and a pause, retries) the load when it is not running; never waits."""
        if self._engine is not None:
            return True
        pause_over = time.monotonic() - self._failed_at > RETRY_LOAD_AFTER_S
        if self._load is None or (self._load.done() and pause_over):
            self.start_loading()
        return False

    def start_loading(self) -> asyncio.Task[Any]:
        """Begin loading in the background (idempotent while a load runs)."""
        if self._load is None or (self._load.done() and self._engine is None):
            self._load = asyncio.get_running_loop().create_task(self._do_load())
            self._load.add_done_callback(lambda t: t.cancelled() or t.exception())
        return self._load

    async def ready(self) -> None:
        """Wait until the model is loaded; raises Unavailable if it cannot be."""
        if self._engine is not None:
            return
        task = self._load if self._load is not None and not self._load.done() else self.start_loading()
        await asyncio.shield(task)
        if self._engine is None:
            raise Unavailable(str(self._error or "the local model did not load"))

    async def stream(
        self, request: ModelRequest, *, strong: bool = False
    ) -> AsyncGenerator[StreamChunk, None]:
        """Stream `request` from the typing model; a rewrite (`request.refine`) and `strong`
        (the quality tier's `StrongModel`) run on the rewrite model when it is loaded."""
        await self.ready()
        from lsp_assist.providers.llama_engine import PROMPT_BATCH, Job, line_goes_on

        self._last_use = time.monotonic()
        refiner = self._refiner if request.refine or strong else None
        engine = refiner if refiner is not None else self._engine
        template = resolve_template(request.fim_template, self._path_name, self._template)
        main_prompt = render_completion(request.context, template, "").prompt
        context = request.context
        if refiner is not None:  # its own template (a FIM model: the code after the cursor too)
            template = self._refiner_template
            if request.refine:  # read again after every key: a short suffix keeps that cheap
                context = rewrite_context(context)
        rendered = render_completion(context, template, "")
        if refiner is not None:
            budget = BACKGROUND_BATCH_BUDGET_S if request.refine else STRONG_BATCH_BUDGET_S
            prompt_batch = self._batch(self._refiner_name, budget)
        else:
            prompt_batch = BACKGROUND_BATCH if request.refine else PROMPT_BATCH
        markers = MARKERS.get(template, ())
        stops = tuple(dict.fromkeys((*rendered.stop, *request.stop)))
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | StreamChunk | None] = asyncio.Queue()

        def emit(text: str) -> bool:
            loop.call_soon_threadsafe(queue.put_nowait, text)
            return not job.cancel.is_set()

        job = Job(
            tokens=[],
            max_tokens=max(1, request.max_tokens),
            temperature=request.temperature,
            emit=emit,
            stop=stops,
            draft_tokens=self._local.draft_tokens,
            line_goes_on=request.context.mode == "single" and line_goes_on(request.context.line_prefix),
            # The trie is of the main model's vocabulary: the refine model decodes freely.
            constraint=self._constraint(request) if refiner is None else None,
            prompt_batch=prompt_batch,
        )
        self.last_constraint = job.constraint
        # A newer request supersedes the running one: it stops at its next token.
        previous, self._current = self._current, job
        self._current_prompt = main_prompt  # `prefill` compares places in the main template
        if previous is not None:
            previous.cancel.set()
        if refiner is None or not request.refine:
            self._stop_background()
        # else: the main model's read-ahead of this place (queued when the answer ended)
        # runs first on the worker thread, so the next key there finds its whole prompt.
        full: list[list[int]] = []  # the whole prompt, when the one read was cut to the budget

        gen_threads, most = self.threads()
        adaptive = self._local.batch_threads <= 0

        def work() -> Any:
            try:
                batch = prompt_threads(most) if adaptive else most
                # The rewrite and an escalation run while the user rests or waits: every idle
                # core writes (the coder: 5.4 -> 10.5 tokens/s on two idle cores); typing
                # keeps its one generation thread beside the editor.
                gen = batch if refiner is not None else gen_threads
                if (gen, batch) != (engine.threads, engine.batch_threads):
                    engine.set_threads(gen, batch)
                tokens = engine.tokenize(rendered.prompt, markers)
                # Only a completion's first answer is cut to the jump budget: its refinement
                # reads the whole prompt and replaces it. Nothing refines an escalation, a
                # next edit or a warmup (the user asked for the fuller answer and waits for it;
                # a raw next-edit prompt cut in the middle is not the prompt), so they read it all.
                whole = request.refine or request.feature != "completion"
                allowed = None if whole else self.budget.allowed_new()
                if refiner is not None:  # the main model's cache and seam are not its own
                    job.tokens = tokens
                    self.refined_runs += int(request.refine)
                    st = engine.run(job)
                    self.last_stats = st
                    stats_log.debug(
                        "local model: refine model: prompt %d tokens, evaluated %d in %.0f ms, "
                        "%d tokens generated, end %s",
                        st.prompt_tokens,
                        st.evaluated_tokens,
                        st.prompt_ms,
                        st.generated_tokens,
                        st.stop_reason,
                    )
                    return st
                job.tokens, self._cut = fit_prompt(
                    tokens, engine.cached_tokens, allowed, self._line_enders, self._cut
                )
                if self._cut is not None:
                    full.append(tokens)
                    # Tell the pipeline, before the first token, that this answer saw only
                    # part of the prompt: it asks for a refinement from the whole prompt.
                    cut = StreamChunk("", meta={"prompt_cut": float(len(tokens) - len(job.tokens))})
                    loop.call_soon_threadsafe(queue.put_nowait, cut)
                st = engine.run(job)
                self.budget.observe(st.evaluated_tokens, st.prompt_ms)
                self.last_stats = st
                _log_stats(st)  # here, so that cancelled generations are counted too
                return st
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, None)

        assert self._executor is not None
        fut = loop.run_in_executor(self._executor, work)
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            while (piece := await queue.get()) is not None:
                yield piece if isinstance(piece, StreamChunk) else StreamChunk(piece)
            try:
                st = await fut
            except Exception as exc:  # llama_decode failure: a provider error, not a crash
                raise ProviderError(f"the local model failed: {exc}") from exc
            yield StreamChunk(
                "",
                usage=Usage(st.prompt_tokens, st.generated_tokens, estimated=False),
                finish_reason="length" if st.stop_reason == "length" else "stop",
            )
        finally:
            # Closing the stream (superseded, cancelled, enough text) stops the worker at
            # its next token; the next job queues behind it on the single thread.
            job.cancel.set()
            if self._current is job:
                self._current = None
                if full:  # the prompt was cut to the budget: read all of it for the next key
                    self.read_ahead_runs += 1
                    self._read_in_background(lambda: full[0], "read-ahead")

    def _constraint(self, request: ModelRequest) -> Any:
        """The member constraint for this request, or None (switched off, no receivers
        known for the language, or the vocabulary not read yet: free decoding)."""
        members = request.context.members
        if not self._local.constrain_members or members is None or self._tries is None:
            return None
        from lsp_assist.providers.member_constraint import MemberConstraint

        return MemberConstraint(self._tries, members, request.context.prefix)

    async def members_ready(self) -> bool:
        """Wait until the member constraint can apply (the vocabulary indexed after the
        load, ~2 s); False when it is switched off or the model is not loaded."""
        task = self._vocab_task
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
        return self._tries is not None

    async def _read_vocabulary(self, engine: Any) -> None:
        """Index the model's vocabulary for the member constraint, in slices on the worker
        thread between requests (a request waits for one slice at most, ~50 ms)."""
        from lsp_assist.providers.member_constraint import TrieCache, Vocabulary

        loop = asyncio.get_running_loop()
        pieces: list[bytes] = []
        for start in range(0, engine.n_vocab, VOCAB_SLICE):
            if self._engine is not engine or self._executor is None:
                return
            pieces += await loop.run_in_executor(self._executor, engine.pieces, start, start + VOCAB_SLICE)
        vocab = await asyncio.to_thread(Vocabulary, pieces)  # control tokens have empty text
        if self._engine is engine:
            self._tries = TrieCache(vocab)

    def prefill(self, context: PromptContext, *, preempt: bool = False) -> asyncio.Future[None] | None:
        """Read the prompt for `context` into the KV cache in the background, when the model
        is idle (like llama.vim's ring-buffer warm-up): the user has started editing a line
        far from the last prompt, or the cursor rests there (`pipeline/prefill.py`), so the
        request that follows finds its window already read.

        First the part a request would read within the jump budget (the cached head and the
        lines nearest the cursor, `fit_prompt`), at once: the first key there then reads only
        itself. The whole prompt follows after `FULL_READ_AFTER_S` more of idleness, so a
        key typed meanwhile does not find a half-read window. Any stream cancels the read at
        its next 16-token batch, keeping what was read; a newer prefill replaces it.

        `preempt` (a cursor rest): a stream still generating for another place (the user
        moved on) is stopped for it. Never waits; returns the running read, or None when a
        request runs (or the model is not loaded)."""
        engine = self._engine
        if engine is None or self._executor is None:
            return None
        prompt = render_completion(context, self._template, "").prompt
        running = self._current
        if running is not None:
            if not preempt or same_place(self._current_prompt, prompt):
                return None
            running.cancel.set()  # its request was answered; the rest of it is for a place left
            self._current = None
        markers = MARKERS.get(self._template, ())
        self._last_use = time.monotonic()
        refiner = self._refiner
        if refiner is not None:  # after the typing model's read: the rewrite model's prompt
            rewrite = render_completion(rewrite_context(context), self._refiner_template, "").prompt
            refiner_markers = MARKERS.get(self._refiner_template, ())
            self._warm_rewrite = lambda: refiner.tokenize(rewrite, refiner_markers)
        return self._read_in_background(lambda: engine.tokenize(prompt, markers), "prefill", cut_first=True)

    def _stop_background(self) -> None:
        running, self._background = self._background, None
        if running is not None:
            running.cancel.set()
        timer, self._full_read = self._full_read, None
        if timer is not None:
            timer.cancel()

    def _read_in_background(
        self, tokens: Callable[[], list[int]], what: str, *, cut_first: bool = False, strong: bool = False
    ) -> asyncio.Future[None] | None:
        """Queue a prompt read on the model's thread; cancelled by the next stream or read.
        `cut_first`: read the budget's cut of it now, the whole of it after a further pause.
        `strong`: into the rewrite model's cache (the last read of an idle spell)."""
        engine, executor = (self._refiner if strong else self._engine), self._executor
        if engine is None or executor is None:
            return None
        batch = self._batch(self._refiner_name, BACKGROUND_BATCH_BUDGET_S) if strong else BACKGROUND_BATCH
        from lsp_assist.providers.llama_engine import Job

        self._stop_background()
        job = Job(tokens=[], max_tokens=0, temperature=0.0, emit=lambda _t: False)
        self._background = job
        loop = asyncio.get_running_loop()
        whole: list[list[int]] = []  # the whole prompt, when only its cut was read

        def done() -> None:
            if self._background is not job:
                return
            self._background = None
            if job.cancel.is_set():
                return
            if whole:
                self._full_read = loop.call_later(
                    FULL_READ_AFTER_S, lambda: self._read_in_background(lambda: whole[0], "read-ahead")
                )
                return
            warm, self._warm_rewrite = self._warm_rewrite, None
            if warm is not None and not strong:
                # The typing model's window is read: warm the rewrite model's cache for the
                # same place, so a rest there reads only what changed (issue 36).
                self._read_in_background(warm, "rewrite warm-up", strong=True)

        def work() -> None:
            try:
                if job.cancel.is_set():
                    return
                toks = tokens()
                if cut_first:
                    cut, seam = fit_prompt(
                        toks, engine.cached_tokens, self.budget.allowed_new(), self._line_enders
                    )
                    if seam is not None:
                        whole.append(toks)
                        toks = cut
                        self._cut = seam  # the first key there keeps this seam: it reads itself
                # Small batches: a request waits for the running one (~50 ms at 16).
                n = engine.prefill(toks, job.cancel, batch=batch)
                stats_log.debug("local model: %s evaluated %d tokens", what, n)
            finally:
                loop.call_soon_threadsafe(done)

        fut = loop.run_in_executor(executor, work)
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        return fut

    @property
    def busy(self) -> bool:
        """True while a request or a background read holds the model (or one is due)."""
        return self._current is not None or self._background is not None or self._full_read is not None

    async def warm(self) -> None:
        with contextlib.suppress(Unavailable):
            await self.ready()

    async def aclose(self) -> None:
        job = self._current
        if job is not None:
            job.cancel.set()
        self._stop_background()
        if self._load is not None and not self._load.done():
            with contextlib.suppress(BaseException):
                await self._load
        for task in list(self._measures):
            task.cancel()
        if self._vocab_task is not None:
            self._vocab_task.cancel()
            with contextlib.suppress(BaseException):
                await self._vocab_task
        if self._refiner_task is not None:
            self._refiner_task.cancel()
            with contextlib.suppress(BaseException):
                await self._refiner_task
            self._refiner_task = None
        self._tries = None
        engine, self._engine = self._engine, None
        refiner, self._refiner = self._refiner, None
        executor, self._executor = self._executor, None
        if executor is not None:
            for closing in (engine, refiner):
                if closing is not None:
                    await asyncio.get_running_loop().run_in_executor(executor, closing.close)
            executor.shutdown(wait=False)
        self._load = None

    # -- loading -----------------------------------------------------------------------------------
    @property
    def _path_name(self) -> str:
        return self._path.name if self._path is not None else self._model_name

    def _report(self, event: LoadEvent) -> None:
        listener = self.on_progress
        if listener is not None:
            try:
                listener(event)
            except Exception as exc:  # a progress listener never breaks the load
                log.debug("progress listener failed: %s", exc)

    def threads(self) -> tuple[int, int]:
        """(generation, most prompt threads); configured values win over the defaults."""
        gen, batch = default_threads()
        if self._local.threads > 0:
            gen = self._local.threads
        if self._local.batch_threads > 0:
            batch = self._local.batch_threads
        return gen, batch

    async def refiner_ready(self, urgent: bool = False) -> bool:
        """Wait for the refine model's load; True when it is in use. `urgent` (an escalation
        the user waits for) starts the load now instead of at the next idle spell."""
        if urgent:
            self._refiner_wanted.set()
        task = self._refiner_task
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
        return self._refiner is not None

    async def _load_refiner(self) -> None:
        """Load the refine model after the main one (`refine_model.load_refiner`); a failure
        is logged once and completions go on without it."""
        # On the worker thread (`load_refiner`), once the typing model has been idle a while:
        # a key typed during the ~1.5 s load would wait for it.
        for _ in range(MEASURE_TRIES):
            if self._refiner_wanted.is_set():
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._refiner_wanted.wait(), MEASURE_IDLE_S / 4)
            if time.monotonic() - self._last_use >= MEASURE_IDLE_S and not self.busy:
                break
        if self._executor is None:
            return
        threads = self.threads()
        loaded = await load_refiner(
            self._refiner_name, self._cache_dir, self._local.n_ctx, threads, self._executor
        )
        if loaded is None:
            return
        if self._engine is None or self._executor is None:  # closed meanwhile
            loaded[0].close()
            return
        self._refiner, self._refiner_template, path = loaded
        self._note_loaded(self._refiner_name, path, self._refiner)

    async def _do_load(self) -> None:
        t0 = time.perf_counter()
        self._report(LoadEvent("loading the local model", 0))
        try:
            if importlib.util.find_spec("llama_cpp") is None:
                raise Unavailable(f"the local model needs llama_cpp: {INSTALL_HINT}")
            self._report(LoadEvent("verifying the model file", 10))
            path = await asyncio.to_thread(resolve_model, self._model_name, self._cache_dir)
            self._path = path
            self._template = "none"
            if is_fim_model(path.name):
                self._template = resolve_template("auto", path.name, "none")
            self._report(LoadEvent("reading the model weights", 40))
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="lsp-llama")
            gen, batch = self.threads()
            from lsp_assist.providers.llama_engine import LlamaEngine

            engine = await asyncio.get_running_loop().run_in_executor(
                self._executor,
                lambda: LlamaEngine(path, n_ctx=self._local.n_ctx, threads=gen, batch_threads=batch),
            )
            self._line_enders = frozenset(int(t) for t in engine.line_enders)
            self._engine = engine
            self._note_loaded(self._model_name, path, engine)
            self._error = None
            if self._local.constrain_members:
                self._vocab_task = asyncio.get_running_loop().create_task(self._read_vocabulary(engine))
                self._vocab_task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self.load_s = time.perf_counter() - t0
            log.info(
                "local model %s loaded in %.1f s (%d generation / %d prompt threads)",
                path.name,
                self.load_s,
                gen,
                batch,
            )
            self._report(LoadEvent(f"local model ready ({self.load_s:.1f} s)", 100, done=True))
            if self._refiner_name and self._refiner_task is None:
                self._refiner_task = asyncio.get_running_loop().create_task(self._load_refiner())
                self._refiner_task.add_done_callback(lambda t: t.cancelled() or t.exception())
        except Exception as exc:
            if not isinstance(exc, Unavailable):
                exc = Unavailable(f"the local model did not load: {exc}")
            self._error = exc
            self._failed_at = time.monotonic()
            log.warning("%s", self._error)
            self._report(LoadEvent("the local model did not load", None, done=True, error=str(self._error)))


def _log_stats(st: Any) -> None:
    stats_log.debug(
        "local model: prompt %d tokens, reused %d, evaluated %d, first token %.1f ms, "
        "%d tokens in %.1f ms, drafted %d accepted %d, end %s",
        st.prompt_tokens,
        st.reused_tokens,
        st.evaluated_tokens,
        st.prompt_ms,
        st.generated_tokens,
        st.generation_ms,
        st.drafted_tokens,
        st.accepted_tokens,
        st.stop_reason,
    )


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
]
