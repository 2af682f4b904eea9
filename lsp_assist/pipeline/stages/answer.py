"""Answer: the winning stream's first answer, version-checked, kept for the next request.

The wait for it is split into connect, time to first token, generation and post-processing
(the stage report). The quick answer is cached now (the enrichment replaces it if the
stream goes on) and remembered for typing-through, and the next suggestion is prefetched.
"""

from __future__ import annotations

from lsp_assist.domain import Outcome, Suggestion
from lsp_assist.pipeline.stages.services import Services
from lsp_assist.pipeline.state import RequestState, StageOrderError
from lsp_assist.pipeline.word_rest import word_rest


async def answer(s: RequestState, sv: Services) -> Suggestion:
    flight, clock, target = s.flight, s.clock, s.target
    if flight is None:
        raise StageOrderError("the generate stage has not produced a stream")
    tier_name = flight.tier
    waited = clock.lap("generation")
    if flight.first_token_at:
        # Split the wait into time to first token and generation of the first line.
        ttft = min(waited, (flight.first_token_at - flight.started) * 1000.0)
        clock.stages["generation"] -= ttft
        connect = min(ttft, flight.connect_ms)
        clock.add("connect", connect)
        clock.add("ttft", ttft - connect)
    # Post-processing runs on each streamed piece; report it apart from generation.
    post = min(clock.stages.get("generation", 0.0), flight.post_ms)
    clock.stages["generation"] = clock.stages.get("generation", 0.0) - post
    clock.add("postprocess", post)
    if not sv.answers.current(target):
        return Suggestion("", Outcome.STALE, tier_name)
    flight.answered = True
    text = s.text.rstrip() if "\n" not in s.text else s.text
    if not text:
        # The model ended the line at once; inside a name the document has, show its rest.
        rest = word_rest(target.snap.text, target.offset)
        if rest:
            sv.answers.remember(target, rest, tier_name)
            return Suggestion(rest, Outcome.FALLBACK, tier_name, provider="words", complete=True)
    if text:
        # Cache the quick answer now; the enrichment replaces it if the stream goes on.
        if not flight.done:
            sv.answers.cache.put(s.prompt.key, text)
        sv.answers.remember(target, text, tier_name)
        sv.prefetcher.schedule(s.req, target, text)
    provider = sv.launcher.provider(tier_name)
    return Suggestion(
        text,
        Outcome.MODEL,
        tier_name,
        provider=provider.name if provider is not None else "",
        model=provider.model if provider is not None else "",
        complete=flight.done,
    )
