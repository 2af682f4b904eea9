"""The model predictor: a next-edit model (or a chat model) rewrites the editable region.

The prompt comes from `formats/` (Zeta, Sweep or an instruction) over a redacted window;
the call goes through the tier's provider (Ollama / llama.cpp / OpenAI-compatible) under
governance, as feature `next_edit`: quota, rate limit and breaker on admission, one audit
line when it ends. The answer becomes the smallest edit inside the region; it is dropped
when it changes nothing, when it undoes the user's last edit, or when it touches text the
prompt showed redacted (the model never saw what is there).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from lsp_assist.config.schema import NextEditConfig
from lsp_assist.documents.store import Document, DocumentStore
from lsp_assist.domain import Cursor, ModelRequest, PromptContext, Usage
from lsp_assist.errors import PolicyError
from lsp_assist.governance.record import CallRecord
from lsp_assist.nextedit.formats import FORMATS, Format, Window
from lsp_assist.nextedit.formats.window import build_window
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.proposal import Proposal, proposal
from lsp_assist.providers.base import Provider

log = logging.getLogger(__name__)

#: Provider families whose request bodies send a raw next-edit prompt (`ModelRequest.raw`).
RAW_PROMPT_PROVIDERS = ("openai", "ollama", "llamacpp")


class NextEditGovernance(Protocol):
    """What the model predictor needs of governance (the `Governance` facade fits)."""

    def redact(self, text: str) -> tuple[str, int]: ...

    async def admit_async(self, feature: str, tier: str, provider_key: str) -> Any: ...


def smallest_edit(old: str, new: str) -> tuple[int, int, str] | None:
    """(start, end, text): `new` is `old` with old[start:end] replaced by `text`; None if equal."""
    if old == new:
        return None
    n = min(len(old), len(new))
    a = 0
    while a < n and old[a] == new[a]:
        a += 1
    b = 0
    while b < n - a and old[len(old) - 1 - b] == new[len(new) - 1 - b]:
        b += 1
    return a, len(old) - b, new[a : len(new) - b]


def region_edit(doc: Document, w: Window, rewritten: str) -> tuple[int, int, str] | None:
    """The model's rewrite as an edit of the document (offsets in the document), or None:
    no change, or a change touching text the prompt showed redacted."""
    found = smallest_edit(w.region, rewritten)
    if found is None:
        return None
    a, b, text = found
    shown, real = w.region, doc.text[w.region_start : w.region_end]
    if shown != real:
        # Only the parts the redaction left as they are can be mapped back: before the
        # first changed character, and after the last one (counted from the end).
        head = smallest_edit(real, shown)
        assert head is not None
        ra, rb, _ = head
        if b <= ra:
            pass
        elif a >= len(shown) - (len(real) - rb):
            shift = len(real) - len(shown)
            a, b = a + shift, b + shift
        else:
            return None  # it touches redacted text
    return w.region_start + a, w.region_start + b, text


def undoes_last(doc: Document, history: EditHistory, start: int, end: int, text: str) -> bool:
    """True when applying the edit would put back what the user's last edit replaced."""
    own = history.get(doc.uri)
    last = own.last if own is not None else None
    if last is None or not (start <= last.offset and last.end <= end):
        return False
    t = doc.text
    return t[start : last.offset] + last.old + t[last.end : end] == text


class ModelPredictor:
    """Calls one tier's provider with one format; `__call__` is the service's `ModelPredict`."""

    def __init__(
        self,
        config: NextEditConfig,
        store: DocumentStore,
        provider: Provider,
        tier: str,
        governance: NextEditGovernance,
        provider_key: str,
    ) -> None:
        self.config = config
        self.store = store
        self.provider = provider
        self.tier = tier
        self.governance = governance
        self.provider_key = provider_key
        self.format: Format = FORMATS[config.format]
        self.prompts_sent = 0

    def _redact(self, text: str) -> tuple[str, int]:
        return self.governance.redact(text)

    async def __call__(self, doc: Document, history: EditHistory, cursor: Cursor) -> list[Proposal]:
        w = build_window(doc, self.store, history, cursor, self.config, self._redact)
        if w is None:
            return []
        rendered = self.format.render(w)
        prompt, n = self._redact(rendered.prompt)  # the layout's own text too, to be sure
        request = ModelRequest(
            context=PromptContext(language=doc.language_id, path=w.path, prefix=prompt, suffix=""),
            max_tokens=self.config.max_tokens,
            temperature=0.0,
            stop=rendered.stop,
            feature="next_edit",
            raw=True,
            system=rendered.system,
        )
        answer = await self._call(request, w.redactions + n, doc.language_id)
        if answer is None:
            return []
        rewritten = self.format.parse(answer, w)
        if rewritten is None:
            return []
        found = region_edit(doc, w, rewritten)
        if found is None or undoes_last(doc, history, *found):
            return []
        return [proposal(doc, found[0], found[1], found[2], self.format.name)]

    async def _call(self, request: ModelRequest, redactions: int, language: str) -> str | None:
        try:
            permit = await self.governance.admit_async("next_edit", self.tier, self.provider_key)
        except PolicyError as exc:
            log.info("next edit: no model call (%s)", type(exc).__name__)
            return None
        started = time.perf_counter()
        chunks: list[str] = []
        usage: Usage | None = None
        outcome: str = "model"
        error: BaseException | None = None

        async def read() -> None:
            nonlocal usage
            async for chunk in self.provider.stream(request):
                chunks.append(chunk.text)
                usage = chunk.usage or usage

        try:
            await asyncio.wait_for(read(), self.config.timeout_ms / 1000.0)
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except (TimeoutError, asyncio.TimeoutError) as exc:
            outcome, error = "timeout", exc
        except Exception as exc:
            outcome, error = "error", exc
            log.info("next edit: model call failed (%s)", type(exc).__name__)
        finally:
            self.prompts_sent += 1
            permit.finish(
                CallRecord(
                    outcome,
                    model=self.provider.model,
                    endpoint_host=self.provider.endpoint_host,
                    provider=self.provider.name,
                    usage=usage or Usage(len(request.context.prefix) // 4, len("".join(chunks)) // 4, True),
                    stages={"total": round((time.perf_counter() - started) * 1000.0, 3)},
                    request_bytes=len(request.context.prefix.encode("utf-8", "surrogatepass")),
                    error=error,
                    redactions=redactions,
                    language=language,
                )
            )
        return "".join(chunks) if outcome == "model" else None
