"""Anthropic `POST /v1/messages` (SSE events, ends at ``message_stop``).

base_url: ``https://api.anthropic.com`` by default; a trailing ``/v1`` is accepted and
dropped (``/v1/messages`` is always appended to the root).

Claude has no FIM endpoint, so the request is the chat rendering (`render_chat`): its
system message (reply with ONLY the code for <CURSOR>) becomes the top-level ``system``
field and the file with the cursor marker is the user message. A markdown fence around
the answer is stripped while streaming (`FenceStripper`); prose after a closing fence
ends the stream early. Whitespace-only stop strings are not sent (the API rejects them);
the pipeline still cuts the answer where it wants.

Headers: ``x-api-key`` (the key passed in, never logged) and ``anthropic-version``.
Usage: ``input_tokens`` (plus cache reads/writes) from ``message_start`` and the
cumulative ``output_tokens`` of ``message_delta``, sent once at ``message_stop``.
An ``error`` event maps by its type: overloaded/api errors to Unavailable, rate limits to
RateLimited, auth to Unauthorized, invalid requests to BadRequest, others BadResponse.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import httpx

from lsp_assist.config.schema import TierConfig
from lsp_assist.context.templates import render_chat
from lsp_assist.domain import ModelRequest, StreamChunk
from lsp_assist.errors import (
    BadRequest,
    BadResponse,
    ProviderError,
    RateLimited,
    Unauthorized,
    Unavailable,
)
from lsp_assist.providers.http import ClientPool, parse_json_object, sse_events
from lsp_assist.providers.native import NativeProvider, count_of, strip_suffix, usage_of
from lsp_assist.providers.openai import FenceStripper
from lsp_assist.providers.streaming import Endpoint

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
MAX_STOP_SEQUENCES = 8  # keep the request small; the API's own limit is higher

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
_ERRORS: dict[str, type[ProviderError]] = {
    "overloaded_error": Unavailable,
    "api_error": Unavailable,
    "rate_limit_error": RateLimited,
    "authentication_error": Unauthorized,
    "permission_error": Unauthorized,
    "invalid_request_error": BadRequest,
    "request_too_large": BadRequest,
}


class AnthropicProvider(NativeProvider):
    """A `Provider` for the Anthropic Messages API."""

    family = "anthropic"

    def __init__(
        self,
        tier: TierConfig,
        clients: ClientPool,
        api_key: str | None = None,
        *,
        api_version: str = API_VERSION,
        name: str | None = None,
    ) -> None:
        headers = {"Accept": "text/event-stream", "anthropic-version": api_version}
        if api_key:
            headers["x-api-key"] = api_key
        root = strip_suffix(tier.base_url or DEFAULT_BASE_URL, "/v1")
        super().__init__(tier, clients, api_key, Endpoint(root, headers, name))

    def _auth_headers(self) -> dict[str, str]:
        return {k: v for k, v in self._headers.items() if k in ("x-api-key", "anthropic-version")}

    async def warm(self) -> None:
        # GET /v1/models exists and takes the same headers: it opens the TLS connection.
        await self._clients.warm(f"{self._base}/v1", self._auth_headers())

    def body(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        messages = render_chat(request.context)
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        body: dict[str, Any] = {
            "model": self._tier.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            "system": system,
            "messages": [
                {"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"
            ],
        }
        stops = [s for s in request.stop if s.strip()][:MAX_STOP_SEQUENCES]
        if stops:
            body["stop_sequences"] = stops
        return f"{self._base}/v1/messages", body

    def _error_event(self, data: dict[str, Any]) -> ProviderError:
        err = data.get("error")
        kind = err.get("type") if isinstance(err, dict) else None
        kind = kind if isinstance(kind, str) else "unknown"
        cls = _ERRORS.get(kind, BadResponse)
        # The type names the failure; the message text is not echoed (it may quote the prompt).
        return cls(f"{self.where()}: the stream reported {kind}")

    async def parse(
        self, response: httpx.Response, request: ModelRequest
    ) -> AsyncGenerator[StreamChunk, None]:
        fences = FenceStripper()
        done = False
        prompt_tokens: int | None = None
        output_tokens: int | None = None
        finish: str | None = None
        async for event in sse_events(response):
            if done:
                continue  # read on to EOF so the connection returns to the pool
            data = parse_json_object(event.data)
            kind = data.get("type") if isinstance(data.get("type"), str) else event.event
            if kind == "error" or event.event == "error":
                raise self._error_event(data)
            if kind == "message_start":
                message = data.get("message")
                usage = message.get("usage") if isinstance(message, dict) else None
                if isinstance(usage, dict):
                    counts = [
                        count_of(usage.get(k))
                        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
                    ]
                    if any(c is not None for c in counts):
                        prompt_tokens = sum(c or 0 for c in counts)
                    output_tokens = count_of(usage.get("output_tokens"))
            elif kind == "content_block_delta":
                delta = data.get("delta") or {}
                text = delta.get("text") if isinstance(delta, dict) else None
                if isinstance(text, str) and text:
                    out = fences.feed(text)
                    if out:
                        yield StreamChunk(out)
                    if fences.closed:
                        # Prose after the code: stop the model generating (closes the response).
                        yield StreamChunk("", usage_of(prompt_tokens, output_tokens), finish_reason="stop")
                        return
            elif kind == "message_delta":
                delta = data.get("delta") or {}
                reason = delta.get("stop_reason") if isinstance(delta, dict) else None
                if isinstance(reason, str):
                    finish = _FINISH.get(reason, reason)
                usage = data.get("usage")
                if isinstance(usage, dict) and count_of(usage.get("output_tokens")) is not None:
                    output_tokens = count_of(usage.get("output_tokens"))
            elif kind == "message_stop":
                done = True
                rest = fences.finish()
                yield StreamChunk(
                    rest, usage_of(prompt_tokens, output_tokens), finish_reason=finish or "stop"
                )
            # ping, content_block_start/stop and unknown future events carry no text.
        if not done:
            raise BadResponse(f"{self.where()}: the stream ended before completion")


__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "AnthropicProvider"]
