"""`PromptBuilder`: what may reach a model, and exactly what it is sent, for every feature.

Completion, escalation, prefetch and warmup all shape their prompt here, in one order:
1. exclusion: a file behind the data boundary never gets a prompt, and no part of one
   reaches another file's prompt (`pipeline.boundary`: checked at the index and again here);
2. context: the tree-sitter trimmed prefix/suffix plus cross-file snippets of the other
   open documents (excluded ones left out), within the tier's budget and a deadline;
3. redaction: key-like strings removed from every part that leaves the machine;
4. the cache key: a hash of what the model sees, the tier and its model.
So a warmed or prefetched suggestion is stored under exactly the key a request computes.
The policy epoch (`governance/epoch.py`) is part of every reused prompt's key, and every
`Target` made here carries it: nothing built under an older boundary is reused or answered.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace

from lsp_assist.config.schema import Config
from lsp_assist.context.builder import ContextEngine
from lsp_assist.documents.store import Document, DocumentStore
from lsp_assist.domain import Cursor, DocumentSnapshot, Mode, PromptContext
from lsp_assist.governance.epoch import PolicyEpoch
from lsp_assist.governance.redaction import learn_clean_text
from lsp_assist.pipeline.boundary import gate_context, verdict
from lsp_assist.pipeline.ports import GovernancePort
from lsp_assist.pipeline.prompt_memo import PromptMemo, others_key
from lsp_assist.pipeline.request import Target
from lsp_assist.providers.base import Provider

# Optional context gathering (cross-file, definitions) stops here; the same on every path,
# so keys computed by warmup and by the request path agree.
CONTEXT_DEADLINE_MS = 15.0
_PIECE_BYTES = 250  # a snippet's or a part's object and its reason string


@dataclass(frozen=True)
class Prompt:
    """A redacted context, the tier it is for, and its cache key."""

    context: PromptContext
    tier: str
    key: str
    redactions: int = 0  # key-like strings removed from it (for the audit line)


def prompt_bytes(prompt: Prompt) -> int:
    """What a kept prompt holds: its texts, and the labelled parts (a reason string each)."""
    ctx = prompt.context
    texts = (ctx.prefix, ctx.suffix, ctx.line_prefix, ctx.line_suffix, prompt.key)
    return (
        sum(map(sys.getsizeof, texts))
        + sum(sys.getsizeof(s.text) + _PIECE_BYTES for s in ctx.snippets)
        + _PIECE_BYTES * len(ctx.parts)
        + 2 * _PIECE_BYTES
    )


class PromptBuilder:
    def __init__(
        self,
        config: Config,
        store: DocumentStore,
        context: ContextEngine,
        governance: GovernancePort,
        providers: Mapping[str, Provider],
        epoch: PolicyEpoch | None = None,
    ) -> None:
        self.config = config
        self.epoch = epoch if epoch is not None else PolicyEpoch()
        self.store = store
        self.context = context
        self.governance = governance
        self.providers = providers
        self.redactions = 0  # total over the process, for stats
        # Recent prompts per document, reused while nothing they depend on changed (a request
        # repeated at the same text and cursor: Invoked after Automatic, a revisit, an undo,
        # the buffer reopened, the quality tier after the fast one on the same budget).
        self._memo: PromptMemo[Prompt] = PromptMemo(sizer=prompt_bytes)
        self.reused = 0

    @property
    def memo_bytes(self) -> int:
        return self._memo.nbytes

    def excluded(self, snap: DocumentSnapshot) -> str | None:
        """Why this document must not reach a model, or None.

        The one rule of `pipeline.boundary.verdict`: a file path goes through the data
        boundary; an `untitled:` buffer is allowed; any other URI without a path fails closed.
        """
        return verdict(self.governance, snap.path if snap.path is not None else snap.uri)

    def target(self, snap: DocumentSnapshot, cursor: Cursor) -> Target:
        """Where an answer for `snap` at `cursor` goes, read under the current policy epoch."""
        return Target(snap, self.offset(snap.uri, cursor), cursor, self.epoch.value)

    def offset(self, uri: str, cursor: Cursor) -> int:
        doc = self.store.get(uri)
        return 0 if doc is None else int(doc.offset(cursor))

    def model_for(self, tier: str) -> str:
        provider = self.providers.get(tier)
        return provider.model if provider is not None else "offline"

    def key(self, ctx: PromptContext, tier: str) -> str:
        return ctx.key(tier, self.model_for(tier))

    def prepare(self, uri: str, cursor: Cursor, tier: str) -> None:
        """Between a keystroke and its request's build (the debounce wait): the re-parse,
        the symbol scan and the cross-file step the build at `cursor` will need
        (`ContextEngine.prepare`), with the same budget and other documents."""
        doc = self.store.get(uri)
        if doc is None:
            return
        tier_cfg = self.config.tier(tier)
        self.context.prepare(
            doc,
            cursor,
            tier_cfg.context_chars,
            others=self._others(doc),
            deadline_ms=CONTEXT_DEADLINE_MS,
            layout=tier_cfg.prompt_layout,
        )

    def warm(self, doc: Document) -> None:
        """What a build at any position of this version reads first (`ContextEngine.warm`),
        and its lines' redaction (`learn_clean_text`: a clean file's lines need no scan in
        its prompts), done now (the prompt prebuilder, after didOpen)."""
        self.context.warm(doc)
        learn_clean_text(doc.text)

    def warm_rows(self, uri: str, start: int, tier: str, until: float) -> int | None:
        """The cross-file memos at each row of an open document from `start` on, for `tier`'s
        budget and the other documents a request would see (`ContextEngine.warm_rows`),
        until `until`; the next row to do, None when done."""
        doc = self.store.get(uri)
        if doc is None:
            return None
        tier_cfg = self.config.tier(tier)
        return self.context.warm_rows(
            doc,
            start,
            tier_cfg.context_chars,
            until,
            others=self._others(doc),
            deadline_ms=CONTEXT_DEADLINE_MS,
            layout=tier_cfg.prompt_layout,
        )

    def _others(self, doc: Document) -> list[Document]:
        """The other open documents a model may see (cross-file context)."""
        governance = self.governance
        return [d for d in self.store.documents() if d.uri != doc.uri and not governance.excluded(d.path)]

    def for_open(self, uri: str, cursor: Cursor, tier: str, *, mode: Mode | None = None) -> Prompt | None:
        """The prompt at `cursor` in an open document (None when it is not open)."""
        doc = self.store.get(uri)
        if doc is None:
            return None
        return self.for_document(doc, cursor, tier, mode=mode)

    def for_document(self, doc: Document, cursor: Cursor, tier: str, *, mode: Mode | None = None) -> Prompt:
        """The prompt at `cursor` in `doc` (open or read from disk), with the other open
        documents as cross-file context."""
        others = self._others(doc)
        tier_cfg = self.config.tier(tier)
        # Everything the built context depends on besides the text and the symbol index
        # (`PromptMemo` checks those): the same text at the same cursor with the same other
        # documents, editor definitions and index gets the same prompt.
        symbols = self.context.symbols
        inputs = (
            cursor, tier_cfg.context_chars, tier_cfg.prompt_layout, mode, others_key(others), id(symbols),
            self.context.editor_definitions.generation(doc.uri),  # lspAssist/definitions
            self.epoch.value,  # the data boundary it was built under
        )  # fmt: skip
        memo = self._memo.get(doc, inputs, symbols)
        if memo is not None:
            self.reused += 1
            return replace(memo, tier=tier, key=self.key(memo.context, tier))
        ctx = self.context.build(
            doc,
            cursor,
            tier_cfg.context_chars,
            others=others,
            deadline_ms=CONTEXT_DEADLINE_MS,
            layout=tier_cfg.prompt_layout,
        )
        prompt = self._finish(ctx, tier, mode)
        if self.store.get(doc.uri) is doc:  # an open document (not a file read for warmup)
            self._memo.put(doc, inputs, symbols, prompt)
        return prompt

    def for_text(self, text: str, language_id: str, path: str, cursor: Cursor, tier: str) -> Prompt:
        """The prompt for a text that is no open document (prefetch: the text as if the
        suggestion on screen were accepted); no cross-file context."""
        ctx = self.context.build_from_text(
            text,
            language_id,
            path,
            cursor,
            self.config.tier(tier).context_chars,
            layout=self.config.tier(tier).prompt_layout,
        )
        return self._finish(ctx, tier, None)

    def _finish(self, ctx: PromptContext, tier: str, mode: Mode | None) -> Prompt:
        ctx, _dropped = gate_context(self.governance, ctx)  # the boundary's last word, every feature
        ctx, n = self.governance.redact_context(ctx)
        self.redactions += n
        if mode is not None and ctx.mode != mode:
            ctx = replace(ctx, mode=mode)
        return Prompt(ctx, tier, self.key(ctx, tier), n)

    def retier(self, prompt: Prompt, tier: str) -> Prompt:
        """The same context asked of another tier (a hedge): its own cache key."""
        return replace(prompt, tier=tier, key=self.key(prompt.context, tier))
