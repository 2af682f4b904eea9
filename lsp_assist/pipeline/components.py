"""The set of collaborators the pipeline works with, built once by `lsp_assist.server`.

Keeping them in one plain object (instead of globals) lets tests build a pipeline with
a fake provider or an in-memory cache, and lets a configuration change rebuild only the
parts it touches. `CompletionEngine` turns them into the stage parts (prompt builder,
stream launcher, tier runner, answer store).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lsp_assist.context.builder import ContextEngine
from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import ModelRequest, PromptContext
from lsp_assist.governance.epoch import PolicyEpoch
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.inflight import Assembler
from lsp_assist.pipeline.ports import GovernancePort
from lsp_assist.pipeline.postprocess import StreamAssembler
from lsp_assist.pipeline.scheduler import Scheduler
from lsp_assist.pipeline.typing_index import TypingIndex
from lsp_assist.providers.base import Provider
from lsp_assist.telemetry.stats import StatsCollector


def _always() -> bool:
    return True


@dataclass
class Components:
    store: DocumentStore
    context: ContextEngine
    governance: GovernancePort
    providers: dict[str, Provider]  # tier name -> provider
    offline: Provider
    cache: SuggestionCache
    stats: StatsCollector
    scheduler: Scheduler = field(default_factory=Scheduler)
    typing: TypingIndex = field(default_factory=TypingIndex)
    # The data boundary's generation, shared with the runtime that advances it.
    epoch: PolicyEpoch = field(default_factory=PolicyEpoch)
    assembler_factory: Callable[[PromptContext], Assembler] | None = None
    chain: dict[str, Sequence[str]] = field(
        default_factory=lambda: {"fast": ("fast", "backup"), "quality": ("quality", "fast", "backup")}
    )

    def assembler(self, ctx: PromptContext) -> Assembler:
        if self.assembler_factory is not None:
            return self.assembler_factory(ctx)
        return StreamAssembler(ctx, ctx.mode)

    def tier_chain(self, tier: str) -> Sequence[str]:
        # The offline engine is the floor the pipeline falls to after the chain, not a tier.
        chain: list[str] = []
        for t in self.chain.get(tier, (tier,)):
            provider = self.providers.get(t)
            if provider is None or provider is self.offline:
                continue
            if chain and not getattr(provider, "loaded", True):
                # A fallback behind an answering tier never starts its model's load:
                # `complete --tier quality` loaded the 270M typing model beside the code
                # model, 0.5 GB more and ~1.6 s of the two cores while the prompt read.
                continue
            # The embedded model while it loads: skip it (its load starts), so the request
            # is answered from the next tier or the offline engine at once, not after the load.
            if getattr(provider, "available_now", _always)():
                chain.append(t)
        return chain

    def provider_key(self, tier: str) -> str:
        """Breakers and rate limits are per provider endpoint, shared by tiers that use it."""
        p = self.providers.get(tier)
        if p is None:
            return tier
        return f"{p.name}:{p.endpoint_host or 'local'}:{p.model}"

    async def offline_suggest(self, ctx: PromptContext) -> str:
        """Run the offline rule engine (instant, no network) and clean its answer."""
        req = ModelRequest(context=ctx, max_tokens=64, temperature=0.0)
        raw = ""
        async for chunk in self.offline.stream(req):
            raw += chunk.text
        if not raw:
            return ""
        asm = self.assembler(ctx)
        asm.feed(raw)
        return asm.text()
