"""OpenAI-compatible provider: `/completions` (FIM) and `/chat/completions` (instruction).

Works with any server that speaks the OpenAI streaming API: OpenAI itself, vLLM,
llama.cpp's server, Ollama's `/v1`, LM Studio, and the managed local model (`local.py`).

Streaming rules (see reference.md §5-6):
- the SSE body is read to its end after ``data: [DONE]`` so the keep-alive connection
  goes back to the pool;
- when the consumer stops iterating (``aclose()``) or the task is cancelled, leaving the
  ``async with client.stream(...)`` block closes the response, so the model server sees
  the disconnect and stops generating;
- a stream that ends with neither ``[DONE]`` nor a ``finish_reason`` is `BadResponse`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from lsp_assist.config.schema import TierConfig
from lsp_assist.context.templates import render_chat, render_completion, resolve_template
from lsp_assist.domain import ModelRequest, StreamChunk, Usage
from lsp_assist.errors import BadResponse, ConfigError
from lsp_assist.providers.http import (
    ClientPool,
    parse_json_object,
    sse_events,
)
from lsp_assist.providers.streaming import Endpoint, StreamingProvider, bearer_headers

# api.openai.com accepts at most 4 stop sequences; other servers take more.
_OPENAI_MAX_STOPS = 4


class FenceStripper:
    """Removes a markdown code fence a chat model wraps its answer in, while streaming.

    The opening fence line (```lang) is dropped; after it, a line starting with ``` ends
    the answer (anything after it is prose). Text is held back only while it could still
    be the start of a fence, so streaming stays token by token.
    """

    def __init__(self) -> None:
        self._head = ""  # text before we know whether an opening fence is there
        self._decided = False
        self._fenced = False
        self._line = ""  # the current incomplete line, after the opening fence
        self.closed = False  # the closing fence was seen: ignore the rest

    def feed(self, text: str) -> str:
        if self.closed:
            return ""
        if not self._decided:
            self._head += text
            stripped = self._head.lstrip()
            if len(stripped) < 3 and "\n" not in stripped:
                return ""  # could still become ```
            self._decided = True
            if stripped.startswith("```"):
                self._fenced = True
                _, nl, rest = stripped.partition("\n")
                if not nl:  # the fence line itself is not finished yet
                    self._decided = False
                    return ""
                text = rest
            else:
                text = self._head
            self._head = ""
        if not self._fenced:
            return text
        return self._body(text)

    def _body(self, text: str) -> str:
        out: list[str] = []
        buf = self._line + text
        while True:
            line, nl, rest = buf.partition("\n")
            if not nl:
                break
            if line.lstrip().startswith("```"):
                self.closed = True
                self._line = ""
                return "".join(out)
            out.append(line + "\n")
            buf = rest
        stripped = buf.lstrip()
        if stripped and not "```".startswith(stripped[:3]) and not stripped.startswith("```"):
            out.append(buf)  # cannot be a fence: emit it now
            buf = ""
        elif stripped.startswith("```"):
            self.closed = True
            buf = ""
        self._line = buf
        return "".join(out)

    def finish(self) -> str:
        """What is still held back when the stream ends."""
        if self.closed:
            return ""
        if not self._decided:
            rest = self._head
            self._head = ""
            return "" if rest.lstrip().startswith("```") else rest
        rest, self._line = self._line, ""
        return "" if rest.lstrip().startswith("```") else rest


def strip_fences(text: str) -> str:
    """`FenceStripper` on a whole answer."""
    s = FenceStripper()
    return s.feed(text) + s.finish()


@dataclass(frozen=True)
class ServerFlavor:
    """How an OpenAI-compatible server differs from the OpenAI API itself.

    `name` is the provider's name in logs and errors. `default_template` is the FIM template
    "auto" falls back to for unknown model names: "plain" (the server does FIM from prompt +
    suffix) or "none" (prefix only). `extra_body` is merged into every request body (e.g.
    ``{"cache_prompt": True}``). `template_model` is the name "auto" template resolution
    looks at when the API model name says nothing (the local server's alias); it defaults
    to `tier.model`. `warm_path` is the route `warm` opens a connection on.
    """

    name: str = "openai"
    default_template: str = "plain"
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    template_model: str | None = None
    warm_path: str = "/models"


class OpenAIProvider(StreamingProvider):
    """A `Provider` for OpenAI-compatible servers.

    `api_key` is the key itself (the caller reads it from the environment variable named
    by `tier.api_key_env`); it is sent as ``Authorization: Bearer`` and never logged.
    `flavor`: what sets the server apart (`ServerFlavor`; the OpenAI API's by default).
    """

    family = "openai"

    def __init__(
        self,
        tier: TierConfig,
        clients: ClientPool,
        api_key: str | None = None,
        *,
        flavor: ServerFlavor | None = None,
    ) -> None:
        if tier.api not in ("completions", "chat"):
            raise ConfigError(f"unknown api {tier.api!r}: expected 'completions' or 'chat'")
        if not tier.base_url:
            raise ConfigError("a base_url is required for an OpenAI-compatible tier")
        flavor = flavor or ServerFlavor()
        endpoint = Endpoint(tier.base_url, bearer_headers(api_key), flavor.name, flavor.warm_path)
        super().__init__(tier, clients, api_key, endpoint)
        self._default_template = flavor.default_template
        self._extra = dict(flavor.extra_body)
        self._template_model = flavor.template_model or tier.model

    def body(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        """The URL and JSON body for `request` (public for tests and `lsp-assist context`)."""
        ctx = request.context
        body: dict[str, Any] = {
            "model": self._tier.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        stops = list(request.stop)
        if request.raw:
            url = self._raw_body(request, body)
        elif self._tier.api == "chat":
            url = f"{self._base}/chat/completions"
            body["messages"] = render_chat(ctx)
        else:
            url = f"{self._base}/completions"
            template = request.fim_template if request.fim_template != "auto" else self._tier.fim_template
            if template == "auto":
                template = resolve_template("auto", self._template_model, self._default_template)
            rendered = render_completion(ctx, template, self._template_model)
            body["prompt"] = rendered.prompt
            if rendered.suffix is not None:
                body["suffix"] = rendered.suffix
            stops += [s for s in rendered.stop if s not in stops]
        if self._host == "api.openai.com" or self._host.endswith(".openai.com"):
            stops = stops[:_OPENAI_MAX_STOPS]
        if stops:
            body["stop"] = stops
        body.update(self._extra)
        return url, body

    def _raw_body(self, request: ModelRequest, body: dict[str, Any]) -> str:
        """A next-edit prompt as it is: the completions prompt, or the chat user message."""
        if self._tier.api == "chat":
            system = [{"role": "system", "content": request.system}] if request.system else []
            body["messages"] = [*system, {"role": "user", "content": request.context.prefix}]
            return f"{self._base}/chat/completions"
        body["prompt"] = request.context.prefix
        return f"{self._base}/completions"

    async def parse(
        self, response: httpx.Response, request: ModelRequest
    ) -> AsyncGenerator[StreamChunk, None]:
        chat = self._tier.api == "chat"
        fences = FenceStripper() if chat else None
        done = finished = False
        async for event in sse_events(response):
            data = event.data.strip()
            if data == "[DONE]":
                done = True
                continue  # read on to EOF so the connection returns to the pool
            if done or (fences is not None and fences.closed):
                continue
            chunk = parse_json_object(data)
            if "error" in chunk:
                raise BadResponse(f"{self.where()}: the model server reported an error mid-stream")
            usage = _usage(chunk.get("usage"))
            text, finish = _choice(chunk, chat)
            if finish:
                finished = True
            if fences is not None and text:
                text = fences.feed(text)
            if text or usage or finish:
                yield StreamChunk(text, usage=usage, finish_reason=finish)
            if fences is not None and fences.closed:
                # The model started prose after its code: stop it generating.
                yield StreamChunk("", finish_reason="stop")
                return
        if fences is not None:
            rest = fences.finish()
            if rest:
                yield StreamChunk(rest)
        if not done and not finished:
            raise BadResponse(f"{self.where()}: the stream ended before completion")


def _usage(raw: object) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    try:
        return Usage(
            prompt_tokens=int(raw.get("prompt_tokens") or 0),
            completion_tokens=int(raw.get("completion_tokens") or 0),
            estimated=False,
        )
    except (TypeError, ValueError):
        return None


def _choice(chunk: dict[str, Any], chat: bool) -> tuple[str, str | None]:
    """Text and finish_reason of the first choice (empty in the usage chunk)."""
    choices = chunk.get("choices") or []
    if not isinstance(choices, list) or not choices:
        return "", None
    first = choices[0]
    if not isinstance(first, dict):
        raise BadResponse("the model server sent a choice that is not an object")
    if chat:
        delta = first.get("delta") or first.get("message") or {}
        text = delta.get("content") if isinstance(delta, dict) else None
    else:
        text = first.get("text")
    finish = first.get("finish_reason")
    return (text if isinstance(text, str) else ""), (finish if isinstance(finish, str) else None)


__all__ = ["FenceStripper", "OpenAIProvider", "ServerFlavor", "strip_fences"]
