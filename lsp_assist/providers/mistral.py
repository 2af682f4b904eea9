"""Mistral / Codestral `POST /v1/fim/completions` (SSE, text in ``delta.content``).

base_url: ``https://codestral.mistral.ai/v1`` by default (a Codestral key) or
``https://api.mistral.ai/v1`` (a La Plateforme key). The API version prefix ``/v1`` is
appended when the URL does not already end with it, so ``https://codestral.mistral.ai``
works too.

The request is native FIM: ``prompt`` (cross-file snippets as path-headed comments, then
the prefix) and ``suffix``, as the ``codestral`` template renders them; the key goes in
``Authorization: Bearer``. The stream is OpenAI-shaped (``choices[].delta.content``,
``finish_reason``, ``usage`` in the last chunk, then ``data: [DONE]``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import httpx

from lsp_assist.config.schema import TierConfig
from lsp_assist.context.templates import render_completion
from lsp_assist.domain import ModelRequest, StreamChunk, Usage
from lsp_assist.errors import BadResponse
from lsp_assist.providers.http import ClientPool, parse_json_object, sse_events
from lsp_assist.providers.native import NativeProvider, strip_suffix, usage_of
from lsp_assist.providers.streaming import Endpoint, bearer_headers

DEFAULT_BASE_URL = "https://codestral.mistral.ai/v1"


class MistralProvider(NativeProvider):
    """A `Provider` for Mistral's FIM completions (Codestral)."""

    family = "mistral"

    def __init__(
        self,
        tier: TierConfig,
        clients: ClientPool,
        api_key: str | None = None,
        *,
        name: str | None = None,
    ) -> None:
        headers = bearer_headers(api_key)
        base = strip_suffix(tier.base_url or DEFAULT_BASE_URL, "/v1") + "/v1"
        super().__init__(tier, clients, api_key, Endpoint(base, headers, name))

    def body(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        rendered = render_completion(request.context, "codestral", self._tier.model)
        body: dict[str, Any] = {
            "model": self._tier.model,
            "prompt": rendered.prompt,
            "suffix": rendered.suffix or "",
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        return f"{self._base}/fim/completions", body

    async def parse(
        self, response: httpx.Response, request: ModelRequest
    ) -> AsyncGenerator[StreamChunk, None]:
        done = finished = False
        async for event in sse_events(response):
            data = event.data.strip()
            if data == "[DONE]":
                done = True
                continue  # read on to EOF so the connection returns to the pool
            if done:
                continue
            chunk = parse_json_object(data)
            if "error" in chunk or chunk.get("object") == "error":
                raise BadResponse(f"{self.where()}: the model server reported an error mid-stream")
            text, finish = _choice(chunk)
            usage = _usage(chunk.get("usage"))
            if finish:
                finished = True
            if text or usage or finish:
                yield StreamChunk(text, usage=usage, finish_reason=finish)
        if not done and not finished:
            raise BadResponse(f"{self.where()}: the stream ended before completion")


def _usage(raw: object) -> Usage | None:
    return usage_of(raw.get("prompt_tokens"), raw.get("completion_tokens")) if isinstance(raw, dict) else None


def _choice(chunk: dict[str, Any]) -> tuple[str, str | None]:
    choices = chunk.get("choices") or []
    if not isinstance(choices, list) or not choices:
        return "", None
    first = choices[0]
    if not isinstance(first, dict):
        raise BadResponse("the model server sent a choice that is not an object")
    delta = first.get("delta") or {}
    text = delta.get("content") if isinstance(delta, dict) else None
    finish = first.get("finish_reason")
    return (text if isinstance(text, str) else ""), (finish if isinstance(finish, str) else None)


__all__ = ["DEFAULT_BASE_URL", "MistralProvider"]
