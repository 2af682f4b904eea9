"""`Refinements`: a second, better answer for the one the user was given.

A stream whose provider cut the prompt to answer in time (the embedded model after a jump)
is followed by a refinement: the same request on the whole prompt, in the background, whose
answer replaces the one given (issue 26: the longer suggestion came from the cut prompt;
HumanEval exact match 15.0% vs 25.0%, docs/embedded-latency.md). A provider with a stronger
refine model (`refine_after_s`) rewrites its answers once the user has rested on them,
whether the answer came from a stream or at once from the typing-through memory or the
cache (`after_instant`: where the typing model's line agrees with what the user types on,
the last keys before a rest start no stream, and the rest would get no rewrite).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace

from lsp_assist.errors import PolicyError
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.inflight import InflightStream
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import Target
from lsp_assist.pipeline.stream_registry import ModelBusy, StreamRegistry, is_guess, slot_of
from lsp_assist.pipeline.stream_spec import StreamSpec
from lsp_assist.providers.base import Provider

log = logging.getLogger("lsp_assist.pipeline.launcher")

# A rewrite that finds the model busy waits for the stream holding it, this many times at
# most (each ends with that stream or with the user acting): a bound, not a timer.
_REFINE_TRIES = 8

Launch = Callable[[StreamSpec], Awaitable[InflightStream]]
BuildPrompt = Callable[[], "Prompt | None"]


class Refinements:
    """Starts refinements (`launch`), and the waits for the user's rest before them."""

    def __init__(
        self,
        registry: StreamRegistry,
        answers: AnswerStore,
        providers: Mapping[str, Provider],
        launch: Launch,
    ) -> None:
        self._registry = registry
        self._answers = answers
        self._providers = providers
        self._launch = launch
        # Refinements waiting for the user's rest, by document: a new stream ends the wait.
        self._rests: dict[str, asyncio.Future[None]] = {}
        # Where each document's last rewrite started ((version, offset)): an answer given
        # there at once afterwards (the rewrite itself, asked again on `suggestionReady`)
        # is not rewritten a second time.
        self._started_at: dict[str, tuple[int, int]] = {}
        # Per document, the place ((version, offset)) of the last answer waiting for a rest
        # and when the first request there came: the rest counts from it (`_rest_since`).
        self._arrived: dict[str, tuple[tuple[int, int], float]] = {}

    def wanted(self, spec: StreamSpec, flight: InflightStream) -> bool:
        """The provider answered `spec` from a cut prompt, or has a stronger model to rewrite
        its answers with (`refine_after_s`), for the user still there."""
        return (
            (flight.prompt_cut > 0 or refine_rest(flight.provider) is not None)
            and not flight.aborted
            and may_follow(spec)
            and self._answers.current(spec.target)
        )

    def rest_came(self, spec: StreamSpec, flight: InflightStream) -> None:
        """The rewrite's rest after `flight`'s request has passed (`StreamRun`): a stream
        still writing the lines after the first, at the same document version, winds down
        (`InflightStream.wind_down`) so the rewrite the user rests for gets the model."""
        if flight.done or flight.aborted or not flight.quick.done() or not self._answers.current(spec.target):
            return
        flight.wind_down = True
        log.debug("the rest came while the typing model wrote on: it stops at its next line end")

    async def refine(
        self, spec: StreamSpec, shown: str, rest: float | None = None, since: float | None = None
    ) -> InflightStream | None:
        """Ask `spec` again on the whole prompt, after its answer `shown` came from a prompt
        cut to the provider's budget (the first answer's latency at a fresh position): the
        longer suggestion (`suggestionReady`), the cache and the typing-through memory then
        hold what the whole context gives. It runs as background work: it never takes the
        one slot from a request (any request closes it; the provider reads its prompt in
        small batches) and a request for the same prompt waits for it. It is not the
        document's live stream: a key typed meanwhile gets its own (cut) stream at once
        instead of attaching to one still reading ~1 s of prompt. `refining(uri)` finds it
        from the moment the stream it follows has ended.

        `rest` (a provider with a stronger refine model, seconds): the refinement starts only
        after the user has rested that long with the document unchanged, so a typing burst
        never starts one; the rest counts from `since` (`time.perf_counter()`: the request
        the answer was for arrived), so a stream that ended after it starts the rewrite at
        once. It then takes the slot from a prefetch, and waits for a stream
        someone waits for (and tries again) as long as the user still rests there."""
        uri = spec.target.uri
        if rest is not None:
            since = self._rest_since(spec.target, since)
            if not await self._rested(spec.target, _left(rest, since)):
                return None
        again = replace(spec, shown=shown, speculative=True, live=False)
        while True:
            try:
                flight = await self._launch(again)
                break
            except ModelBusy:
                # A stream someone waits for holds the one slot: the rewrite waits for it
                # and tries again while the user still rests there.
                if rest is None or not await self._slot_freed(spec.target, again):
                    log.debug("no refinement: the model stayed busy until the rest ended")
                    return None
            except PolicyError as exc:
                log.debug("no refinement: %s", exc)
                return None
        log.debug("refinement started (rest %s)", "none" if rest is None else f"{rest:.2f} s")
        self._started_at[uri] = _place(spec.target)
        if not flight.done:
            self._registry.refining[uri] = flight
            if rest is not None:
                self._show_first_line(again, flight)
        return flight

    async def after_instant(
        self, target: Target, shown: str, rest: float, since: float, build: BuildPrompt
    ) -> InflightStream | None:
        """An answer `shown` at `target` without a stream (typing-through or the cache, at
        `since`): the provider's refine model rewrites it once the user has rested `rest`
        seconds on it (`refine_rest`), as it does a stream's answer. The prompt is built
        (`build`) only when the rest came: a burst's keys cost nothing here but a timer each."""
        if not shown.strip() or self._started_at.get(target.uri) == _place(target):
            return None
        if not await self._rested(target, _left(rest, self._rest_since(target, since))):
            return None
        prompt = build()
        if prompt is None or not self._answers.current(target):
            return None
        return await self.refine(StreamSpec(target, prompt), shown, rest=0.0)

    def forget(self, uri: str) -> None:
        """The document closed."""
        self.end_rest(uri)
        self._started_at.pop(uri, None)
        self._arrived.pop(uri, None)

    def _rest_since(self, target: Target, since: float | None) -> float | None:
        """When the user's rest at `target` began: the first of the requests made there in
        a row. The editor asks again at the same place on `suggestionReady` (the typing
        model's line grew), and counting the rest from that ask started the rewrite
        0.2-0.3 s after the rest had passed."""
        if since is None:
            return None
        place = _place(target)
        first = self._arrived.get(target.uri)
        if first is not None and first[0] == place and first[1] <= since:
            return first[1]
        self._arrived[target.uri] = (place, since)
        return since

    def _show_first_line(self, spec: StreamSpec, flight: InflightStream) -> None:
        """A rewrite's first complete line replaces the answer on screen as soon as it is
        written: the stronger model writes ~8 tokens/s on two cores, and the lines after
        the first (the answer's end, stored when the stream ends) would keep a line the
        user rests for off the screen for seconds."""

        def written(quick: asyncio.Future[str]) -> None:
            if quick.cancelled() or quick.exception() is not None or flight.done or flight.aborted:
                return  # the stream's end stores and announces it (`StreamRun`)
            line, key, shown = quick.result(), spec.prompt.key, spec.shown or ""
            if line.strip():
                self._answers.stream_ended(key, spec.target, line, spec.tier, shown=shown, replaces=True)

        flight.quick.add_done_callback(written)

    def end_rest(self, uri: str) -> None:
        """A refinement waiting for the user to rest in `uri` gives up (`refine`)."""
        waiting = self._rests.pop(uri, None)
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    def waiting(self, uri: str) -> bool:
        """A refinement of the document's last answer waits for the user's rest (`refine`)."""
        return uri in self._rests

    def note_change(self, uri: str) -> None:
        """The document changed: a refinement waiting for the user's rest gives up, and one
        running on a provider's refine model (seconds of both cores for an answer at a
        version now gone) is closed. A refinement by the main model itself runs on: it also
        fills that model's cache with the whole prompt for the next key."""
        self.end_rest(uri)
        flight = self._registry.refining.get(uri)
        if flight is not None and not flight.done and refine_rest(flight.provider) is not None:
            self._registry.abort(flight)

    async def _rested(self, target: Target, rest: float) -> bool:
        """Wait `rest` seconds of the user resting at `target`: False when a request for the
        document or an edit came first (`end_rest`), or the answer is gone."""
        uri = target.uri
        self.end_rest(uri)
        waiting = asyncio.get_running_loop().create_future()
        self._rests[uri] = waiting
        try:
            await asyncio.wait_for(asyncio.shield(waiting), rest)
            return False  # a newer request for the document came first
        except asyncio.TimeoutError:
            pass
        finally:
            if self._rests.get(uri) is waiting:
                del self._rests[uri]
        live = self._registry.live.get(uri)
        if live is not None and not live.done:
            if live.quick.done():
                # The stream whose answer the user typed on into (an earlier key's) still
                # writes the lines after its first: it stops at its next line end, as
                # `rest_came` stops one at the resting version.
                live.wind_down = True
            return await self._slot_freed(target, None)
        return self._answers.current(target)

    async def _slot_freed(self, target: Target, spec: StreamSpec | None) -> bool:
        """Wait until no stream someone waits for holds the model a rewrite at `target` needs
        (the document's own live stream, or the provider's one slot); False when the user
        acted meanwhile (a request or an edit for the document) or the answer is gone."""
        uri = target.uri
        waiting = asyncio.get_running_loop().create_future()
        self._rests[uri] = waiting
        try:
            for _ in range(_REFINE_TRIES):
                blockers = self._blockers(uri, spec)
                if not blockers:
                    return not waiting.done() and self._answers.current(target)
                if any(f.anchor.uri != uri for f in blockers):
                    return False  # the user works in another document: not resting here
                finals = [asyncio.ensure_future(asyncio.shield(f.final)) for f in blockers]
                await asyncio.wait([waiting, *finals], return_when=asyncio.FIRST_COMPLETED)
                for fut in finals:
                    fut.cancel()
                if waiting.done() or not self._answers.current(target):
                    return False
            return False
        finally:
            if self._rests.get(uri) is waiting:
                del self._rests[uri]

    def _blockers(self, uri: str, spec: StreamSpec | None) -> list[InflightStream]:
        """The streams someone waits for that hold what a rewrite at `uri` needs."""
        provider = self._providers.get(spec.tier) if spec is not None else None
        live = self._registry.live.get(uri)
        return [
            f
            for f in self._registry.active
            if not f.done
            and not is_guess(f)
            and ((provider is not None and slot_of(f.provider) is slot_of(provider)) or f is live)
        ]


def _place(target: Target) -> tuple[int, int]:
    return int(target.snap.version), target.offset


def _left(rest: float, since: float | None) -> float:
    """What remains of a `rest` that began at `since` (perf_counter seconds)."""
    return rest if since is None else max(0.0, rest - (time.perf_counter() - since))


def may_follow(spec: StreamSpec) -> bool:
    """A refinement may follow `spec`'s stream: a completion the user was given, remembered."""
    return spec.shown is None and spec.remember and not spec.speculative and spec.feature == "completion"


def refine_rest(provider: object) -> float | None:
    """The rest after which `provider`'s stronger model rewrites an answer, or None when it
    has none (`LocalProvider.refine_after_s`; other providers have no such attribute)."""
    rest = getattr(provider, "refine_after_s", None)
    return float(rest) if isinstance(rest, (int, float)) else None
