"""llama.cpp server's native `POST /infill` (SSE, ends with ``"stop": true``).

base_url: the server origin, ``http://127.0.0.1:8080`` by default. A trailing ``/v1``
(its OpenAI-compatible prefix) is dropped: `/infill` lives at the root.

The server applies the model's own FIM tokens, so we send the parts, not a template:
``input_prefix`` / ``input_suffix``, the cross-file snippets as ``input_extra``
(``[{filename, text}]``, which the server lays out repo-level when the model has
``<FIM_REP>``/``<FIM_SEP>`` tokens), ``cache_prompt: true`` (reuse the KV cache of the
previous request's common prefix), ``n_indent`` (the cursor line's indentation: the
server stops a line that dedents below it) and ``t_max_predict_ms`` (a soft time limit
counted from the first token that stops at a newline, made for FIM).
Usage comes from the last event's ``tokens_evaluated`` / ``tokens_predicted``.
No ``[DONE]`` here: the stream ends at the event with ``stop: true``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import httpx

from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import ModelRequest, StreamChunk
from lsp_assist.errors import BadResponse
from lsp_assist.providers.http import ClientPool, parse_json_object, sse_events
from lsp_assist.providers.native import NativeProvider, strip_suffix, usage_of
from lsp_assist.providers.streaming import Endpoint, bearer_headers

DEFAULT_BASE_URL = "http://127.0.0.1:8080"

# llama.cpp's stop_type -> the OpenAI-style finish_reason the pipeline sees.
_FINISH = {"eos": "stop", "word": "stop", "limit": "length"}


class LlamaCppProvider(NativeProvider):
    """A `Provider` for llama.cpp's `/infill`. `api_key` (the server's ``--api-key``) is
    sent as ``Authorization: Bearer`` when given. `max_predict_ms` overrides the soft
    generation limit (default: the tier's total minus first-token timeout, at least 200 ms)."""

    family = "llamacpp"

    def __init__(
        self,
        tier: TierConfig,
        clients: ClientPool,
        api_key: str | None = None,
        *,
        max_predict_ms: int | None = None,
        name: str | None = None,
    ) -> None:
        headers = bearer_headers(api_key)
        root = strip_suffix(tier.base_url or DEFAULT_BASE_URL, "/v1")
        super().__init__(tier, clients, api_key, Endpoint(root, headers, name))
        self._max_predict_ms = (
            max_predict_ms
            if max_predict_ms is not None
            else max(200, tier.total_timeout_ms - tier.first_token_timeout_ms)
        )

    def body(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        ctx = request.context
        if request.raw:
            # A next-edit prompt is not an infill: llama-server's plain /completion takes it.
            raw: dict[str, Any] = {
                "prompt": ctx.prefix,
                "n_predict": request.max_tokens,
                "temperature": request.temperature,
                "stream": True,
                "cache_prompt": True,
            }
            if request.stop:
                raw["stop"] = list(request.stop)
            return f"{self._base}/completion", raw
        body: dict[str, Any] = {
            "input_prefix": ctx.prefix,
            "input_suffix": ctx.suffix,
            "input_extra": [{"filename": s.path, "text": s.text} for s in ctx.snippets],
            "prompt": "",
            "n_predict": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            "cache_prompt": True,
            "t_max_predict_ms": self._max_predict_ms,
            "n_indent": len(ctx.indent.expandtabs(4)),
        }
        if self._tier.model:
            body["model"] = self._tier.model  # ignored by one-model servers, used by routers
        if request.stop:
            body["stop"] = list(request.stop)
        return f"{self._base}/infill", body

    async def parse(
        self, response: httpx.Response, request: ModelRequest
    ) -> AsyncGenerator[StreamChunk, None]:
        done = False
        async for event in sse_events(response):
            data = event.data.strip()
            if done or data == "[DONE]":
                continue  # read on to EOF so the connection returns to the pool
            chunk = parse_json_object(data)
            if "error" in chunk or event.event == "error":
                raise BadResponse(f"{self.where()}: the model server reported an error mid-stream")
            text = chunk.get("content")
            text = text if isinstance(text, str) else ""
            if chunk.get("stop") is True:
                done = True
                stop_type = chunk.get("stop_type")
                finish = _FINISH.get(stop_type, stop_type) if isinstance(stop_type, str) else "stop"
                usage = usage_of(chunk.get("tokens_evaluated"), chunk.get("tokens_predicted"))
                yield StreamChunk(text, usage=usage, finish_reason=finish or "stop")
            elif text:
                yield StreamChunk(text)
        if not done:
            raise BadResponse(f"{self.where()}: the stream ended before completion")


__all__ = ["DEFAULT_BASE_URL", "LlamaCppProvider"]
