"""Ollama's native `POST /api/generate` (NDJSON streaming).

base_url: the Ollama origin, ``http://127.0.0.1:11434`` by default. A trailing ``/v1``
(Ollama's OpenAI-compatible prefix) or ``/api`` is dropped, so a URL copied from an
OpenAI-style config still reaches ``/api/generate``.

Prompt choice (per request, from `fim_template`, "auto" resolving by model name):
- a FIM family (qwen, starcoder, codellama, deepseek): ``raw: true`` with our rendered FIM
  prompt. Raw bypasses the Modelfile template, so cross-file snippets go in the
  family's repo-level form and the prompt is byte-identical to what the other providers
  send (same prompt cache behaviour, same stop strings);
- ``plain`` / ``codestral`` (and unknown models): ``prompt`` + ``suffix``, letting the
  model's own template do FIM (Ollama answers 400 "does not support insert" when the
  template has no ``.Suffix``, which maps to BadRequest);
- ``none``: ``raw: true`` with the prefix only, so no chat template wraps it.

`keep_alive` keeps the model loaded between completions (Ollama's own default is 5 min);
`warm()` sends a prompt-less generate, which loads the model without generating.
Usage comes from the last line's ``prompt_eval_count`` / ``eval_count``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import httpx

from lsp_assist.config.schema import TierConfig
from lsp_assist.context.templates import FIM_TEMPLATES, render_completion, resolve_template
from lsp_assist.domain import ModelRequest, StreamChunk
from lsp_assist.errors import BadResponse
from lsp_assist.providers.http import WARM_TIMEOUT, ClientPool, ndjson_objects
from lsp_assist.providers.native import NativeProvider, strip_suffix, usage_of
from lsp_assist.providers.streaming import Endpoint, bearer_headers

DEFAULT_BASE_URL = "http://127.0.0.1:11434"
DEFAULT_KEEP_ALIVE = "30m"


class OllamaProvider(NativeProvider):
    """A `Provider` for Ollama's `/api/generate`. `api_key` (for a proxy in front of
    Ollama) is sent as ``Authorization: Bearer`` when given."""

    family = "ollama"

    def __init__(
        self,
        tier: TierConfig,
        clients: ClientPool,
        api_key: str | None = None,
        *,
        keep_alive: str | int = DEFAULT_KEEP_ALIVE,
        name: str | None = None,
    ) -> None:
        headers = bearer_headers(api_key, "application/x-ndjson")
        root = strip_suffix(tier.base_url or DEFAULT_BASE_URL, "/v1", "/api")
        super().__init__(tier, clients, api_key, Endpoint(root, headers, name))
        self._keep_alive = keep_alive

    async def warm(self) -> None:
        """Open a connection and load the model (a generate without a prompt). Never raises."""
        try:
            client = self._clients.get(self._base)
            body = {"model": self._tier.model, "keep_alive": self._keep_alive, "stream": False}
            resp = await client.post(
                f"{self._base}/api/generate", json=body, headers=self._auth_headers(), timeout=WARM_TIMEOUT
            )
            await resp.aclose()
        except Exception:  # warming is best-effort by design
            return

    def template_for(self, request: ModelRequest) -> str:
        template = request.fim_template if request.fim_template != "auto" else self._tier.fim_template
        return resolve_template(template, self._tier.model, "plain")

    def body(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        if request.raw:
            return self._raw_body(request)
        template = self.template_for(request)
        rendered = render_completion(request.context, template, self._tier.model)
        stops = list(request.stop) + [s for s in rendered.stop if s not in request.stop]
        options: dict[str, Any] = {"num_predict": request.max_tokens, "temperature": request.temperature}
        if stops:
            options["stop"] = stops
        body: dict[str, Any] = {
            "model": self._tier.model,
            "prompt": rendered.prompt,
            "stream": True,
            "keep_alive": self._keep_alive,
            "options": options,
        }
        if template in FIM_TEMPLATES or template == "none":
            body["raw"] = True
        elif rendered.suffix is not None:
            body["suffix"] = rendered.suffix
        return f"{self._base}/api/generate", body

    def _raw_body(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        """A next-edit prompt: sent raw for a completions tier (the prompt format is the
        model's own), through the model's chat template for a chat tier."""
        options: dict[str, Any] = {"num_predict": request.max_tokens, "temperature": request.temperature}
        if request.stop:
            options["stop"] = list(request.stop)
        body: dict[str, Any] = {
            "model": self._tier.model,
            "prompt": request.context.prefix,
            "stream": True,
            "keep_alive": self._keep_alive,
            "options": options,
            "raw": self._tier.api != "chat",
        }
        if self._tier.api == "chat" and request.system:
            body["system"] = request.system
        return f"{self._base}/api/generate", body

    async def parse(
        self, response: httpx.Response, request: ModelRequest
    ) -> AsyncGenerator[StreamChunk, None]:
        done = False
        async for obj in ndjson_objects(response):
            if done:
                continue  # read on to EOF so the connection returns to the pool
            if "error" in obj:
                raise BadResponse(f"{self.where()}: the model server reported an error mid-stream")
            text = obj.get("response")
            text = text if isinstance(text, str) else ""
            if obj.get("done") is True:
                done = True
                reason = obj.get("done_reason")
                usage = usage_of(obj.get("prompt_eval_count"), obj.get("eval_count"))
                yield StreamChunk(
                    text, usage=usage, finish_reason=reason if isinstance(reason, str) else "stop"
                )
            elif text:
                yield StreamChunk(text)
        if not done:
            raise BadResponse(f"{self.where()}: the stream ended before completion")


__all__ = ["DEFAULT_BASE_URL", "DEFAULT_KEEP_ALIVE", "OllamaProvider"]
