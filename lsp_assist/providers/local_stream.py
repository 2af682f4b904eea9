"""`LocalStreamer`: one request's stream on the embedded model.

The event loop plans the stream (which engine, prompt and batch), queues its `Job` on the
worker thread (superseding the running one) and yields the text the thread sends back
through an asyncio queue. On the thread the typing model reads only what fits the jump
budget (`fit_prompt`) and says so before the first token; the whole prompt is then read in
the background for the next key. A rewrite (`request.refine`) and an escalation (`strong`)
run on the refine model when it is loaded, on the prompt its warm-up reads: sized to the
model's measured reading rate (`rewrite_prompt.py`); at the rest a rewrite reads only as much
of what the warm-up left as lets it be on screen soon, an escalation all of it.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from lsp_assist.context.templates import MARKERS, render_completion, resolve_template
from lsp_assist.domain import ModelRequest, StreamChunk, Usage
from lsp_assist.errors import ProviderError
from lsp_assist.providers.local_loader import ModelLoader
from lsp_assist.providers.local_prefill import ABORTABLE_MAX_BATCH, BACKGROUND_BATCH, BackgroundReads
from lsp_assist.providers.local_rates import RatesKeeper
from lsp_assist.providers.local_refine import RefineModel
from lsp_assist.providers.local_shared import CutPrompts, LocalSettings
from lsp_assist.providers.local_threads import prompt_threads, typing_threads
from lsp_assist.providers.local_worker import ModelWorker
from lsp_assist.providers.prompt_budget import fit_prompt
from lsp_assist.providers.rewrite_prompt import (
    MiddleStart,
    RewritePrompt,
    rest_cut,
    rewrite_allowance,
    shaped,
)
from lsp_assist.providers.rewrite_prompt import render as render_rewrite
from lsp_assist.providers.token_healing import HealConstraint, HealedText, healable, without_given_back

stats_log = logging.getLogger("lsp_assist.local_model")

Piece = str | StreamChunk | None


@dataclass(frozen=True)
class LocalParts:
    """The embedded provider's collaborators, each with one job."""

    settings: LocalSettings
    worker: ModelWorker
    loader: ModelLoader
    refiner: RefineModel
    rates: RatesKeeper
    cuts: CutPrompts
    reads: BackgroundReads


@dataclass(frozen=True)
class StreamPlan:
    """What one stream runs: on which engine, from which prompt, in what batches."""

    engine: Any
    on_refiner: bool  # the refine model runs it (a rewrite or an escalation)
    prompt: str
    markers: tuple[str, ...]
    stops: tuple[str, ...]
    prompt_batch: int
    main_prompt: str  # the prompt in the typing model's template (`prefill` compares places)
    held: str = ""  # typed blanks the prompt leaves to the model (`rewrite_prompt.render`)
    cut_prompt: str = ""  # a rewrite's prompt when the rest must cut it (`rewrite_prompt.rest_cut`)
    # New prompt tokens a stream of the rewrite model reads at most (an escalation: all of
    # them; a rewrite at a rest: `rewrite_allowance`); -1 on the typing model.
    reads_at_most: int = -1


@dataclass
class _Run:
    """One stream in flight: its plan and job, and the queue its text comes back on."""

    request: ModelRequest
    plan: StreamPlan
    job: Any
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[Piece]
    full: list[list[int]] = field(default_factory=list)  # the whole prompt, when the read one was cut
    healed: HealedText = field(default_factory=HealedText)  # the text given back (`token_healing`)


class LocalStreamer:
    """Streams requests (see module docstring); `constraint(request, on_refiner)` is the
    member constraint for a request on the typing or the refine model, or None."""

    def __init__(self, parts: LocalParts, constraint: Callable[[ModelRequest, bool], Any]) -> None:
        self._parts = parts
        self._constraint = constraint
        self.last_stats: Any = None
        self.last_constraint: Any = None  # the member constraint of the last stream, if any

    def plan(self, request: ModelRequest, strong: bool) -> StreamPlan:
        from lsp_assist.providers.llama_engine import PROMPT_BATCH

        loader, refine = self._parts.loader, self._parts.refiner
        refiner = refine.engine if request.refine or strong else None
        template = resolve_template(request.fim_template, loader.path_name, loader.template)
        # The typing model's prompt is rendered once: it is the typing request's prompt and
        # `main_prompt` (where `prefill` compares places) alike.
        main = render_completion(request.context, template, "")
        prompt = RewritePrompt(main.prompt, stop=main.stop)
        prompt_batch = BACKGROUND_BATCH if request.refine else PROMPT_BATCH
        cut_prompt = ""
        reads_at_most = -1
        if refiner is not None:  # its own template (a FIM model: the code after the cursor too)
            template, rates = refine.template, self._parts.rates
            # The prompt its warm-up read (`BackgroundReads.prefill`), for an escalation too:
            # the whole quality window (~430 tokens) was 10-20 s of reading on two cores,
            # past the stream's timeout, where the warm-up's shape is what is cached.
            rewrite_ctx = shaped(request.context, rates.shape_of(refine.name))
            prompt = render_rewrite(rewrite_ctx, template)
            if request.refine:
                cut_prompt = render_rewrite(rest_cut(rewrite_ctx), template).text
            # The user asked and waits (an escalation) or rests (a rewrite): the largest
            # batches, which a key stops midway (`prefill(abortable=True)`). The warm-up's
            # are sized to what a key throws away (`abortable_batch`); here a key ends the
            # answer being read, and each batch costs a pass over the weights: the rest's
            # ~55 tokens in one call, not two of ~30.
            prompt_batch = ABORTABLE_MAX_BATCH
            reads_at_most = (
                rewrite_allowance(rates.of(refine.name), prompt_batch) if request.refine else sys.maxsize
            )
        return StreamPlan(
            engine=refiner if refiner is not None else loader.engine,
            on_refiner=refiner is not None,
            prompt=prompt.text,
            held=prompt.held,
            markers=MARKERS.get(template, ()),
            stops=tuple(dict.fromkeys((*prompt.stop, *request.stop))),
            prompt_batch=prompt_batch,
            main_prompt=main.prompt,
            cut_prompt=cut_prompt,
            reads_at_most=reads_at_most,
        )

    def _job(self, request: ModelRequest, plan: StreamPlan, emit: Callable[[str], bool]) -> Any:
        from lsp_assist.providers.llama_engine import Job, line_goes_on

        return Job(
            tokens=[],
            max_tokens=max(1, request.max_tokens),
            temperature=request.temperature,
            emit=emit,
            stop=plan.stops,
            draft_tokens=self._parts.settings.local.draft_tokens,
            line_goes_on=request.context.mode == "single" and line_goes_on(request.context.line_prefix),
            # Whichever model writes: each has a trie over its own vocabulary.
            constraint=self._constraint(request, plan.on_refiner),
            prompt_batch=plan.prompt_batch,
            # The rewrite and an escalation read in large batches; a key stops one midway.
            abortable=plan.on_refiner,
        )

    async def stream(self, request: ModelRequest, strong: bool = False) -> AsyncGenerator[StreamChunk, None]:
        """Stream `request` (see module docstring)."""
        parts = self._parts
        await parts.loader.ready()
        worker = parts.worker
        worker.touch()
        plan = self.plan(request, strong)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Piece] = asyncio.Queue()

        start = MiddleStart(plan.held)
        healed = HealedText()

        def emit(text: str) -> bool:
            text = start.feed(healed.feed(text))
            if text:
                loop.call_soon_threadsafe(queue.put_nowait, text)
            return not job.cancel.is_set()

        job = self._job(request, plan, emit)
        self.last_constraint = job.constraint
        # A newer request supersedes the running one: it stops at its next token.
        worker.take(job, plan.main_prompt)
        # Every background read gives way, the rewrite's too: the typing model's read-ahead
        # of a long prompt in small batches held the rewrite the user rests for for seconds
        # (each read keeps what it read; the rewrite model's warm-up is its own prompt). The
        # warm-up's batch under way is kept where it reads what this stream would read.
        worker.stop_background(rewrite_reads=plan.reads_at_most)
        run = _Run(request, plan, job, loop, queue, healed=healed)
        executor = worker.executor
        assert executor is not None
        fut = loop.run_in_executor(executor, self._work, run, parts.settings.threads())
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
            if worker.release(job):
                if run.full:  # the prompt was cut to the budget: read all of it for the next key
                    parts.reads.read_ahead(run.full[0])
                else:  # the rewrite model's warm-up this stream stopped goes on after a pause
                    parts.reads.resume()

    def _work(self, run: _Run, threads: tuple[int, int]) -> Any:
        """On the worker thread: read the prompt and generate; the queue ends with None."""
        try:
            engine = run.plan.engine
            self._set_threads(engine, run.plan.on_refiner, threads)
            tokens = self._heal(run, engine, engine.tokenize(run.plan.prompt, run.plan.markers))
            line = run.request.draft.split("\n", 1)[0]
            if line.strip():  # a rewrite: the line on screen is its draft (`Job.hint`)
                run.job.hint = engine.continuation(run.healed.held + run.plan.held + line)
            if run.plan.on_refiner:
                return self._run_refiner(run, tokens)
            return self._run_typing(run, tokens)
        finally:
            run.loop.call_soon_threadsafe(run.queue.put_nowait, None)

    def _heal(self, run: _Run, engine: Any, tokens: list[int]) -> list[int]:
        """`tokens` without their last one where the user stopped inside it (`token_healing`):
        the model's first tokens then spell it again, and the answer starts after it."""
        index = getattr(engine, "heal_index", None)
        wanted = run.request.feature == "completion" and self._parts.settings.local.token_healing
        if index is None or not wanted:
            return tokens
        inner = run.job.constraint
        if inner is not None and inner.applies() and not run.plan.on_refiner:
            # A member name: the member constraint spells it (`member_constraint.py`). The
            # code model's vocabulary joins the dot to the name (`.append`): left after a
            # lone `.` it named the class's member 43% of the time, against 67% healed.
            return tokens
        line, blanks = run.request.context.line_prefix, len(run.plan.held)
        text = healable(tokens, index.pieces.__getitem__, line[: len(line) - blanks] if blanks else line)
        if not text or not run.plan.prompt.endswith(text):
            return tokens
        if inner is not None:
            inner.give_back(text)
        run.job.constraint = HealConstraint(index, text, inner)
        run.healed.hold(text)
        kept = without_given_back(tokens, index.pieces.__getitem__, text)
        if len(kept) == len(tokens) - 1 and text.strip():
            # Drafted after the prompt: where the model writes the given-back token again
            # (at a token's end, mostly), it is read with the prompt's last token
            # (`LlamaEngine.run`): to the first text at a token's end, Gemma 87 -> 36 ms, the
            # code model 175 -> 136 (`benchmarks/token_healing.py`). A word given back in
            # pieces is mostly written otherwise (` ch` + `il` as ` children`), and a
            # given-back blank as the start of a word (` s`): no draft.
            run.job.hint = tokens[-1:]
        return kept

    def _set_threads(self, engine: Any, on_refiner: bool, threads: tuple[int, int]) -> None:
        most = threads[1]
        settings = self._parts.settings
        batch = prompt_threads(most) if settings.local.batch_threads <= 0 else most
        # The rewrite and an escalation run while the user rests or waits: every idle
        # core writes (the coder: 5.4 -> 10.5 tokens/s on two idle cores); typing does
        # where this machine measured it faster (`typing_threads`).
        rates = self._parts.rates.of(settings.model_name)
        gen = batch if on_refiner else typing_threads(settings.local.threads, batch, rates)
        if (gen, batch) != (engine.threads, engine.batch_threads):
            engine.set_threads(gen, batch)

    def _run_refiner(self, run: _Run, tokens: list[int]) -> Any:
        """The refine model's stream (the typing model's cache and seam are not its own).
        An escalation reads its whole prompt: the user asked and waits. A rewrite after a
        rest reads what its warm-up left only as far as `rewrite_allowance` lets it be on
        screen soon after the rest; the warm-up reads the whole prompt afterwards."""
        job, engine, parts = run.job, run.plan.engine, self._parts
        job.tokens = tokens
        if run.request.refine:
            allowed = run.plan.reads_at_most
            enders = parts.refiner.line_enders
            job.tokens, cut = fit_prompt(tokens, engine.cached_tokens, allowed, enders)
            if cut is not None and run.plan.cut_prompt:
                # More left unread than the rest allows: the suffix shortened, the cut keeps
                # the lines above the cursor (`rewrite_prompt.rest_cut`).
                short = engine.tokenize(run.plan.cut_prompt, run.plan.markers)
                short = without_given_back(short, engine.vocab_pieces.__getitem__, run.healed.held)
                job.tokens, _ = fit_prompt(short, engine.cached_tokens, allowed, enders)
        parts.refiner.runs += int(run.request.refine)
        st = engine.run(job)
        self.last_stats = st
        if st.prompt_ms > 0:  # read to its first token: what the model reads at now
            seen = (parts.refiner.name, st.evaluated_tokens, st.prompt_ms / 1000, job.prompt_batch)
            run.loop.call_soon_threadsafe(parts.rates.observe_read, *seen)
        stats_log.debug(
            "local model: refine model: prompt %d tokens, evaluated %d in %.0f ms, "
            "%d tokens generated in %.0f ms (the line on screen drafted %d, kept %d), end %s, cut from %d, "
            "threads %d/%d",
            st.prompt_tokens,
            st.evaluated_tokens,
            st.prompt_ms,
            st.generated_tokens,
            st.generation_ms,
            len(job.hint),
            st.accepted_tokens,
            st.stop_reason,
            len(tokens),
            engine.threads,
            engine.batch_threads,
        )
        return st

    def _run_typing(self, run: _Run, tokens: list[int]) -> Any:
        request, job, engine, cuts = run.request, run.job, run.plan.engine, self._parts.cuts
        # Only a completion's first answer is cut to the jump budget: its refinement
        # reads the whole prompt and replaces it. Nothing refines an escalation, a
        # next edit or a warmup (the user asked for the fuller answer and waits for it;
        # a raw next-edit prompt cut in the middle is not the prompt), so they read it all.
        whole = request.refine or request.feature != "completion"
        allowed = None if whole else cuts.budget.allowed_new()
        job.tokens, cuts.seam = fit_prompt(tokens, engine.cached_tokens, allowed, cuts.line_enders, cuts.seam)
        if cuts.seam is not None:
            run.full.append(tokens)
            # Tell the pipeline, before the first token, that this answer saw only
            # part of the prompt: it asks for a refinement from the whole prompt.
            cut = StreamChunk("", meta={"prompt_cut": float(len(tokens) - len(job.tokens))})
            run.loop.call_soon_threadsafe(run.queue.put_nowait, cut)
        st = engine.run(job)
        cuts.budget.observe(st.evaluated_tokens, st.prompt_ms)
        self.last_stats = st
        _log_stats(st)  # here, so that cancelled generations are counted too
        return st


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
