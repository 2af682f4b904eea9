"""A live model stream that requests can wait on, attach to, and abort.

One `InflightStream` reads one provider stream in its own task and publishes:
- `quick`: the first good suggestion (the first complete line, or the whole suggestion in
  single-line mode) as soon as it exists, so the request that started it answers fast;
- `final`: the fuller suggestion once the stream ends (block end, budget, stop), which
  becomes the enrichment.
A later request whose text extends the stream's anchor by characters the model is
producing attaches to it instead of starting another call. Aborting cancels the reader
task, which closes the HTTP response so the provider stops generating.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from lsp_assist.domain import PromptContext, StreamChunk, Usage, estimate_tokens
from lsp_assist.errors import ProviderTimeout, StreamAborted

log = logging.getLogger(__name__)


@dataclass
class StreamResult:
    text: str
    usage: Usage
    stages: dict[str, float]
    error: BaseException | None = None
    aborted: bool = False
    tokens: int = 0


@dataclass
class Anchor:
    """The document text around the cursor the stream was started for."""

    uri: str
    version: int
    before_len: int
    before_tail: str
    after_head: str

    def typed_since(self, text: str, offset: int) -> str | None:
        """What the user typed after the anchor, or None if the text no longer matches it."""
        if offset < self.before_len:
            return None
        start = self.before_len - len(self.before_tail)
        if text[start : self.before_len] != self.before_tail:
            return None
        if text[offset : offset + len(self.after_head)] != self.after_head:
            return None
        return text[self.before_len : offset]


class Assembler(Protocol):
    """What the reader needs from post-processing (see pipeline.postprocess)."""

    def feed(self, delta: str) -> bool: ...
    def first_line(self) -> str | None: ...
    def text(self) -> str: ...


@dataclass(eq=False)  # identity semantics: streams live in sets
class InflightStream:
    anchor: Anchor
    tier: str
    context: PromptContext
    started: float = field(default_factory=time.perf_counter)
    quick: asyncio.Future[str] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    final: asyncio.Future[StreamResult] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    raw: str = ""
    task: asyncio.Task[None] | None = None
    answered: bool = False  # some request got an answer from it
    aborted: bool = False
    first_token_at: float = 0.0
    waiters: int = 0  # requests awaiting this stream right now
    post_ms: float = 0.0  # time spent in post-processing the streamed text
    connect_ms: float = 0.0  # time the provider spent opening a connection
    orphaned: bool = False  # the request that started it was cancelled
    wasted_tokens: int = 0  # tokens read while nobody was waiting for them
    provider: object = None  # the provider streaming it (identity only)
    early: bool = False  # `quick` was answered at the answer budget, before its line ended
    http_status: int | None = None  # the response's status, when the provider sent one
    speculative: bool = False  # started for nobody yet (prefetch, precompute)
    refinement: bool = False  # a rewrite of an answer the user rests on (`StreamLauncher.refine`)
    # Prompt tokens the provider left out to answer within its budget (the embedded model
    # after a jump, providers/prompt_budget.py): > 0 asks for a refinement (launcher.py).
    prompt_cut: int = 0
    # Called with the text so far as it grows after `quick` (on a new line, or every 100 ms),
    # so the ghost text can grow while the model streams (see AnswerStore.grew).
    on_grow: Callable[[str], None] | None = None
    # The user rested on the first line and a stronger model's rewrite is due: the stream
    # ends at its next line end, its lines so far the answer (`StreamRun`), and frees the
    # one slot for the rewrite instead of writing lines the rewrite replaces.
    wind_down: bool = False
    _progress: asyncio.Future[None] | None = None  # resolved at the next piece of text

    def progressed(self) -> asyncio.Future[None]:
        """A future resolved when the stream produces its next piece of text (or ends)."""
        if self._progress is None or self._progress.done():
            self._progress = asyncio.get_running_loop().create_future()
        return self._progress

    def note_progress(self) -> None:
        fut = self._progress
        if fut is not None and not fut.done():
            fut.set_result(None)

    def mark_first_token(self) -> None:
        self.first_token_at = time.perf_counter()

    def abort(self) -> None:
        self.aborted = True
        if self.task is not None and not self.task.done():
            self.task.cancel()

    @property
    def done(self) -> bool:
        return self.final.done()

    def attachable(self, typed: str) -> bool:
        """True when what the user typed agrees with what the model produced so far."""
        if self.aborted or (self.final.done() and self.final.result().error is not None):
            return False
        produced = self.raw
        return produced.startswith(typed) or typed.startswith(produced)


class _Watchdog:
    """Cancels the current task at a deadline; `fired` tells a timeout from a real cancel."""

    def __init__(self, when: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.fired = False
        self.handle = self.loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self.fired = True
        if self.task is not None:
            self.task.cancel()

    def move(self, when: float) -> None:
        self.handle.cancel()
        self.handle = self.loop.call_at(when, self._fire)

    def uncancel(self) -> None:
        if self.task is not None and hasattr(self.task, "uncancel"):
            self.task.uncancel()

    def close(self) -> None:
        self.handle.cancel()


_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_ENDS_AS_CODE = frozenset(" )]}([{,.:;=+-*/%<>!&|^~@")


def early_answer(partial: str, next_delta: str) -> str:
    """`partial` when it may be shown before its line is complete: one line, ending with a
    closed (or opened) bracket, an operator or a space, or with a word the next token does not
    continue. "" otherwise (a word still growing, an empty or multi-line text)."""
    if not partial.strip() or "\n" in partial.strip("\n"):
        return ""
    last = partial[-1]
    if last in _ENDS_AS_CODE:
        return partial
    if last in _WORD and next_delta and next_delta[0] not in _WORD:
        return partial
    return ""


def deadline_answer(text: str) -> str:
    """What may be shown when the answer budget runs out between two tokens: `text` when it
    ends at a code boundary (a bracket, an operator, a space), as `early_answer` would show
    it; "" when it ends inside a word that the next token may still continue (then the next
    token decides, as before: a word is never shown cut)."""
    return early_answer(text, "")


@dataclass(frozen=True)
class ReadPolicy:
    """When a stream's reader answers and when it gives up.

    `first_token_timeout_s` and `total_timeout_s` end the stream (`ProviderTimeout`).
    `quick_on_first_line`: `quick` gets the first complete line as soon as it exists.
    `answer_budget_s` > 0: when the first line is not complete that long after the start,
    `quick` gets the text so far as soon as it ends at a boundary that reads as code (see
    `early_answer`); the stream goes on and its full text becomes the longer suggestion. When
    the text at the budget itself ends at such a boundary, it is shown then (`deadline_answer`),
    not after the next token (~20 ms on the embedded model). The budget counts from
    `answer_from` (the request's arrival, on the loop's clock) when given, else from the
    stream's start: it is what the user waits, debounce and context included."""

    first_token_timeout_s: float
    total_timeout_s: float
    quick_on_first_line: bool = True
    answer_budget_s: float = 0.0
    answer_from: float | None = None


async def read_stream(
    flight: InflightStream,
    chunks: AsyncIterator[StreamChunk],
    assembler: Assembler,
    policy: ReadPolicy,
    on_first_token: Callable[[], None] | None = None,
) -> StreamResult:
    """Consume `chunks` into `flight`, honouring `policy`'s timeouts and answer budget."""
    return await _StreamReader(flight, assembler, policy, on_first_token).read(chunks)


class _StreamReader:
    """One stream's reading: the loop over its chunks, and the figures it keeps."""

    def __init__(
        self,
        flight: InflightStream,
        assembler: Assembler,
        policy: ReadPolicy,
        on_first_token: Callable[[], None] | None,
    ) -> None:
        self.flight = flight
        self.assembler = assembler
        self.policy = policy
        self.on_first_token = on_first_token
        self.t0 = time.perf_counter()
        self.stages: dict[str, float] = {}
        self.usage = Usage()
        self.tokens = 0
        self.first = True  # no text yet
        self.start = asyncio.get_running_loop().time()
        answer_from = policy.answer_from
        self.budget_start = self.start if answer_from is None else min(answer_from, self.start)

    async def read(self, chunks: AsyncIterator[StreamChunk]) -> StreamResult:
        policy, flight = self.policy, self.flight
        # One timer for the whole stream instead of a wait_for per chunk (which costs a task
        # per token): it cancels this task at the first-token deadline, then at the total one.
        watchdog = _Watchdog(self.start + min(policy.first_token_timeout_s, policy.total_timeout_s))
        iterator = chunks.__aiter__()
        deadline = None
        if policy.answer_budget_s > 0:
            deadline = asyncio.get_running_loop().call_at(
                self.budget_start + policy.answer_budget_s, self._at_deadline
            )
        error: BaseException | None = None
        try:
            try:
                await self._consume(iterator, watchdog)
            except asyncio.CancelledError:
                if not watchdog.fired:
                    raise
                watchdog.uncancel()
                raise ProviderTimeout(
                    "no first token within the first-token timeout" if self.first else "model total timeout",
                    first_token=self.first,
                ) from None
            finally:
                watchdog.close()
                if deadline is not None:
                    deadline.cancel()
        except asyncio.CancelledError:
            flight.aborted = True
            raise
        except Exception as exc:  # provider errors and timeouts go to the caller's fallback
            error = exc
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(iterator.aclose(), timeout=1.0)  # type: ignore[attr-defined]
            result = self._settle(error)
        return result

    def _at_deadline(self) -> None:
        flight = self.flight
        if flight.quick.done():
            return
        shown = deadline_answer(self.assembler.text())
        if shown:
            flight.early = True
            flight.quick.set_result(shown)

    async def _consume(self, iterator: AsyncIterator[StreamChunk], watchdog: _Watchdog) -> None:
        """The per-token loop: its state lives in locals, as the hot path it is."""
        flight, assembler = self.flight, self.assembler
        quick_on_first_line = self.policy.quick_on_first_line
        answer_budget_s, budget_start = self.policy.answer_budget_s, self.budget_start
        loop = asyncio.get_running_loop()
        first = True
        tokens = 0
        partial = ""
        grew_at = self.start
        try:
            async for chunk in iterator:
                if chunk.usage is not None:
                    self.usage = chunk.usage
                if chunk.meta:
                    self._note_meta(chunk.meta)
                if not chunk.text:
                    continue
                if first:
                    first = False
                    self._first_token(watchdog)
                tokens += 1
                if flight.orphaned and not flight.answered:
                    flight.wasted_tokens += 1  # read after its request was cancelled
                flight.raw += chunk.text
                flight.note_progress()
                t_post = time.perf_counter()
                stop = assembler.feed(chunk.text)
                line = assembler.first_line() if quick_on_first_line and not flight.quick.done() else None
                flight.post_ms += (time.perf_counter() - t_post) * 1000.0
                answered = line is not None
                if line is not None:
                    flight.quick.set_result(line)
                elif answer_budget_s > 0 and not flight.quick.done():
                    if loop.time() - budget_start >= answer_budget_s:
                        early = early_answer(partial, chunk.text)
                        if early:
                            flight.early = True
                            flight.quick.set_result(early)
                            answered = True
                    if not flight.quick.done() and loop.time() - budget_start >= answer_budget_s * 0.5:
                        partial = assembler.text()  # what an early answer would show
                if (
                    flight.on_grow is not None
                    and line is None
                    and flight.quick.done()
                    and ("\n" in chunk.text or loop.time() - grew_at >= 0.1)
                ):
                    grew_at = loop.time()
                    flight.on_grow(assembler.text())
                if stop or (flight.wind_down and "\n" in chunk.text and flight.quick.done()):
                    if answered:
                        await _let_the_request_answer()
                    break
                if answered:
                    await _let_the_request_answer()
        finally:
            self.tokens = tokens

    def _note_meta(self, chunk_meta: Mapping[str, float]) -> None:
        flight = self.flight
        meta = dict(chunk_meta)
        status = meta.pop("status", None)  # for the audit line, not a stage
        if status is not None:
            flight.http_status = int(status)
        cut = meta.pop("prompt_cut", None)  # a fact about the prompt, not a stage
        if cut is not None:
            flight.prompt_cut = int(cut)
        self.stages.update(meta)
        if "connect" in meta:
            flight.connect_ms = meta["connect"]

    def _first_token(self, watchdog: _Watchdog) -> None:
        self.first = False
        watchdog.move(self.start + self.policy.total_timeout_s)
        self.stages["ttft"] = (time.perf_counter() - self.t0) * 1000.0
        if self.on_first_token is not None:
            self.on_first_token()

    def _settle(self, error: BaseException | None) -> StreamResult:
        """The result, published on `flight` (`quick` too when no line came)."""
        flight, stages = self.flight, self.stages
        # A failed or aborted stream's output may be cut mid-token: never serve it, not as
        # the quick answer of a request still waiting, nor as a cached full answer.
        cut = error is not None or flight.aborted
        t_post = time.perf_counter()
        text = "" if cut else self.assembler.text()
        flight.post_ms += (time.perf_counter() - t_post) * 1000.0
        stages["postprocess"] = flight.post_ms
        gen_start = stages.get("ttft", 0.0)
        stages["generation"] = max(0.0, (time.perf_counter() - self.t0) * 1000.0 - gen_start)
        usage = self.usage
        if usage.completion_tokens == 0:
            usage = Usage(
                prompt_tokens=estimate_tokens(flight.context.prefix + flight.context.suffix),
                completion_tokens=estimate_tokens(flight.raw),
                estimated=True,
            )
        result = StreamResult(text=text, usage=usage, stages=stages, error=error, aborted=flight.aborted)
        result.tokens = self.tokens
        _publish(flight, result)
        return result


#: Loop hops from the first answer to the reply's write: asyncio.wait's completion callback
#: and the request task's wake-up (`resilience.first_success`), then the handler task's done
#: callback that writes the reply (pygls).
_HOPS_TO_THE_REPLY = 3


async def _let_the_request_answer() -> None:
    """Yield until the reply of the request waiting on the first answer is written: reading
    on (down the HTTP stack to the socket) or closing the stream and its bookkeeping would
    otherwise run first. Were there more hops, they would only run before it again."""
    for _ in range(_HOPS_TO_THE_REPLY):
        await asyncio.sleep(0)


def _publish(flight: InflightStream, result: StreamResult) -> None:
    """Resolve `flight`'s futures with `result` (those still open)."""
    error = result.error
    if not flight.quick.done():
        if error is not None:
            flight.quick.set_exception(error)
        elif flight.aborted:
            flight.quick.set_exception(StreamAborted("the stream was closed before its first line"))
        else:
            flight.quick.set_result(result.text)
    if not flight.final.done():
        flight.final.set_result(result)
    flight.note_progress()
    # Futures nobody awaited must not log "exception was never retrieved".
    if flight.quick.done() and not flight.quick.cancelled():
        flight.quick.exception()
