"""Instant answers: no model call when an answer already exists.

- `typing_through` (before the debounce): the user typed what a shown suggestion said, or
  backspaced to a state that had one; the rest of it answers at once. `typed_meanwhile`
  looks again after the debounce (a suggestion may have arrived during the wait).
- `cached` (after the prompt): the exact prompt was answered before, or a prefetch is
  computing its answer right now (the user accepted a suggestion before the prefetch for
  the state after it had ended): wait for that stream rather than start a second call.
- An answer given at once here, or from a stream attached to, is rewritten by the
  provider's refine model once the user rests on it, as a stream's answer is
  (`Refinements.after_instant`).
- `attach` (after the prompt): the document's live stream is producing what the user is
  typing; wait on it instead of starting another call. A live stream the user moved away
  from is aborted here: nobody will see its answer.
"""

from __future__ import annotations

import asyncio
import contextlib

from lsp_assist.after_reply import after_reply
from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import Outcome, Suggestion
from lsp_assist.errors import PolicyError, ProviderError
from lsp_assist.pipeline.inflight import InflightStream
from lsp_assist.pipeline.launcher import StreamLauncher
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.refinement import refine_rest
from lsp_assist.pipeline.scheduler import Superseded
from lsp_assist.pipeline.stages.debounce import typed_before
from lsp_assist.pipeline.stages.services import Services
from lsp_assist.pipeline.state import RequestState


async def typing_through(s: RequestState, sv: Services) -> Suggestion | None:
    hit = sv.answers.typing_through(s.target)
    if hit is None:
        return None
    s.clock.lap("queue")
    t = s.target
    typed = t.snap.text[t.offset - hit.typed : t.offset]
    _rewrite_at_rest(s, sv, hit.text, hit.tier)
    return Suggestion(hit.text, Outcome.TYPING_THROUGH, hit.tier, typed=typed)


async def typed_meanwhile(s: RequestState, sv: Services) -> Suggestion | None:
    """Typing-through again after the debounce: the previous keystroke's stream may have
    ended during the wait, and what the user typed since is the start of its answer. Without
    this look the request built a prompt and started a call for an answer already here."""
    return await typing_through(s, sv)


async def cached(s: RequestState, sv: Services) -> Suggestion | None:
    text = sv.answers.cached(s.prompt.key)
    if text is None:
        text = await _prefetched(sv, s.prompt.key, sv.config.tier(s.req.tier))
    if text is None:
        return None
    s.clock.lap("queue")
    sv.answers.remember(s.target, text, s.req.tier)
    _rewrite_at_rest(s, sv, text, s.req.tier)
    return Suggestion(text, Outcome.CACHE, s.req.tier)


def _rewrite_at_rest(s: RequestState, sv: Services, text: str, tier: str) -> None:
    """After the reply: the provider's refine model rewrites `text` if the user rests on it
    (`Refinements.after_instant`). Only a provider with a refine model pays anything."""
    req, launcher = s.req, sv.launcher
    rest = refine_rest(launcher.provider(tier)) if req.feature == "completion" else None
    if rest is None:
        return
    # The rest counts from the request's arrival: an attached answer came after waiting
    # for the stream's first line (~0.2 s).
    target, since = s.target, s.clock.started
    known = s.prompt if s.has_prompt and s.prompt.tier == tier else None

    def build() -> Prompt | None:
        return known if known is not None else sv.prompts.for_open(req.uri, req.cursor, tier)

    def start() -> None:
        task = asyncio.get_running_loop().create_task(
            launcher.refinements.after_instant(target, text, rest, since, build)
        )
        launcher.track(task)

    after_reply(start)


async def _prefetched(sv: Services, key: str, tier: TierConfig) -> str | None:
    """The answer of a speculative stream still computing this prompt, waited for up to the
    tier's first-token timeout (then the request calls the model itself)."""
    flight = sv.launcher.speculative_for(key)
    if flight is None:
        return None
    try:
        result = await asyncio.wait_for(
            asyncio.shield(flight.final), timeout=tier.first_token_timeout_ms / 1000.0
        )
    except asyncio.TimeoutError:
        return None
    if result.aborted or result.error is not None or not result.text:
        return sv.answers.cached(key)
    return result.text


async def attach(s: RequestState, sv: Services) -> Suggestion | None:
    flight = sv.launcher.live_stream(s.req.uri)
    if flight is None:
        return None
    target = s.target
    typed = flight.anchor.typed_since(target.snap.text, target.offset)
    waited = False
    if typed is not None and flight.attachable(typed):
        waited = True
        text = await _await_attached(sv.launcher, flight, typed, sv.config.tier(s.req.tier))
        s.clock.lap("queue")
        if text is not None and sv.answers.current(target):
            # The stream's own end rewrites only an answer at its own request's version,
            # and the user typed since it started: 3 of 30 rests got no rewrite at all.
            _rewrite_at_rest(s, sv, text, flight.tier)
            return Suggestion(text, Outcome.ATTACHED, flight.tier, typed=typed)
    # Superseded: nobody will see this stream's answer.
    if not flight.done:
        sv.launcher.abort(flight)
    if waited and not s.req.invoked:
        # Time passed while waiting on the stream: if the user is still typing fast, the next
        # key is due; wait for it as the debounce would instead of starting a call it ends.
        try:
            await sv.scheduler.debounce(s.req.uri, s.ticket, invoked=False, typed=typed_before(s))
        except Superseded:
            s.clock.lap("debounce")
            return Suggestion("", Outcome.CANCELLED, s.req.tier)
        s.clock.lap("debounce")
        if not sv.answers.current(target):
            return Suggestion("", Outcome.STALE, s.req.tier)
    return None


async def _await_attached(
    launcher: StreamLauncher, flight: InflightStream, typed: str, tier: TierConfig
) -> str | None:
    flight.waiters += 1
    try:
        return await _attached_text(flight, typed, tier)
    except asyncio.CancelledError:
        launcher.abort_later(flight)
        raise
    finally:
        flight.waiters -= 1


async def _first_line_unless_it_disagrees(flight: InflightStream, typed: str, timeout_s: float) -> str | None:
    """The stream's first line, or None as soon as what it produced so far disagrees with
    what the user typed (its first token usually tells, long before its first line ends:
    waiting for the line only delays the call that can answer)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    quick = flight.quick
    while not quick.done():
        if not flight.attachable(typed):
            return None
        left = deadline - loop.time()
        if left <= 0:
            return None
        await asyncio.wait((quick, flight.progressed()), timeout=left, return_when=asyncio.FIRST_COMPLETED)
    return quick.result()


async def _attached_text(flight: InflightStream, typed: str, tier: TierConfig) -> str | None:
    try:
        first = await _first_line_unless_it_disagrees(flight, typed, tier.first_token_timeout_ms / 1000.0)
    except (ProviderError, PolicyError):
        return None
    if first is None:
        return None
    if first.startswith(typed) and len(first) > len(typed):
        flight.answered = True
        return first[len(typed) :]
    if not typed.startswith(first):
        # The model's first line disagrees with what the user typed: the rest of the stream
        # cannot agree either, and waiting for it would only delay the call that can.
        return None
    if not flight.done:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(flight.final), timeout=tier.total_timeout_ms / 1000.0)
    if flight.final.done():
        full = flight.final.result().text
        if full.startswith(typed) and len(full) > len(typed):
            flight.answered = True
            return full[len(typed) :]
    return None
