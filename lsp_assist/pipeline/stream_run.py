"""`StreamRun`: one started stream's task, from its first chunk to its stored answer.

It reads the provider's stream (`inflight.read_stream`), releases the governance permit
with one `CallRecord`, hands a full answer to the `AnswerStore` and asks for a refinement
when one is wanted (`refinement.py`). A task cancelled before it ran is settled here too,
so that neither the permit nor the one slot leaks.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol, cast

from lsp_assist.domain import ModelRequest, PromptContext, Usage
from lsp_assist.errors import StreamAborted
from lsp_assist.governance.record import CallRecord
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.inflight import Assembler, InflightStream, ReadPolicy, StreamResult, read_stream
from lsp_assist.pipeline.ports import Permit
from lsp_assist.pipeline.refinement import Refinements, may_follow, refine_rest
from lsp_assist.pipeline.stream_registry import StreamRegistry
from lsp_assist.pipeline.stream_spec import StreamSpec
from lsp_assist.providers.base import Provider
from lsp_assist.telemetry.stats import StatsCollector


class RunOwner(Protocol):
    """What a stream's task needs of the launcher that started it."""

    registry: StreamRegistry
    stats: StatsCollector
    answers: AnswerStore
    refinements: Refinements

    def assembler(self, ctx: PromptContext, /) -> Assembler: ...


class StreamRun:
    """One stream's task (see module docstring); `owner` is the launcher that started it."""

    def __init__(
        self,
        owner: RunOwner,
        spec: StreamSpec,
        flight: InflightStream,
        permit: Permit,
        request: ModelRequest,
        policy: ReadPolicy,
    ) -> None:
        self.owner = owner
        self.spec = spec
        self.flight = flight
        self.permit = permit
        self.request = request
        self.policy = policy
        self.provider = cast(Provider, flight.provider)

    def finish(
        self, outcome: str, usage: Usage | None, stages: dict[str, float], err: BaseException | None
    ) -> None:
        """Release the governance permit: breaker verdict, quota tokens, the audit line."""
        provider, spec, ctx = self.provider, self.spec, self.spec.prompt.context
        self.permit.finish(
            CallRecord(
                outcome,
                model=provider.model,
                endpoint_host=provider.endpoint_host,
                provider=provider.name,
                usage=usage,
                stages=stages,
                request_bytes=ctx.size,
                error=err,
                fallback_from=spec.fallback_from,
                hedged=spec.hedged,
                retries=spec.retries,
                redactions=spec.prompt.redactions,
                http_status=self.flight.http_status,
                language=ctx.language,
            )
        )

    async def run(self) -> None:
        try:
            await self._read_and_store()
        finally:
            # Only now, with the answer stored (or none to store), may a request for this
            # prompt stop finding the stream: no moment where neither has it.
            self.owner.registry.drop_speculative(self.spec.prompt.key, self.flight)

    async def _read_and_store(self) -> None:
        flight, spec, owner = self.flight, self.spec, self.owner
        result: StreamResult | None = None
        rest = refine_rest(flight.provider)
        timer = None
        if rest is not None and may_follow(spec):
            # The rewrite's rest counts from the request (`Refinements.refine`'s `since`).
            due = max(0.0, flight.started + rest - time.perf_counter())
            timer = asyncio.get_running_loop().call_later(due, owner.refinements.rest_came, spec, flight)
        try:
            chunks = self.provider.stream(self.request)
            assembler = owner.assembler(spec.prompt.context)
            result = await read_stream(
                flight, chunks, assembler, self.policy, on_first_token=flight.mark_first_token
            )
        except asyncio.CancelledError:
            self.finish("cancelled", None, {}, None)
            raise
        finally:
            if timer is not None:
                timer.cancel()
            owner.registry.ended(flight, spec.target.uri)
            if flight.wasted_tokens:
                owner.stats.record_waste(flight.wasted_tokens)
        err = result.error
        stages = dict(result.stages)
        stages["total"] = (time.perf_counter() - flight.started) * 1000.0
        self.finish("error" if err is not None else "model", result.usage, stages, err)
        if err is not None or spec.sample:
            return
        quick = flight.quick.result() if flight.quick.done() and not flight.quick.exception() else ""
        if result.text:
            self._store(result.text, quick)
        if owner.refinements.wanted(spec, flight):
            rest = refine_rest(flight.provider)
            await owner.refinements.refine(spec, result.text or quick, rest=rest, since=flight.started)

    def _store(self, text: str, quick: str) -> None:
        spec, answers = self.spec, self.owner.answers
        if spec.remember:
            answers.stream_ended(
                spec.prompt.key,
                spec.target,
                text,
                spec.tier,
                shown=quick if spec.shown is None else spec.shown,
                replaces=spec.shown is not None,
            )
        else:
            answers.cache.put(spec.prompt.key, text)

    def settle(self, task: asyncio.Task[None]) -> None:
        """A task cancelled before it ran never reaches `run`'s own cleanup: release the
        permit (idempotent) and end the flight here, or the slot would leak."""
        flight = self.flight
        if not task.cancelled() or flight.done:
            return
        self.finish("cancelled", None, {}, None)
        registry, uri = self.owner.registry, self.spec.target.uri
        registry.active.discard(flight)
        registry.drop_speculative(self.spec.prompt.key, flight)
        if registry.live.get(uri) is flight:
            registry.live.pop(uri, None)
        flight.aborted = True
        if not flight.quick.done():
            flight.quick.set_exception(StreamAborted("the stream was closed before it started"))
            flight.quick.exception()  # retrieved: nobody need wait on a closed stream
        flight.final.set_result(StreamResult("", Usage(), {}, aborted=True))
