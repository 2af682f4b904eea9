"""Helpers shared by the native-provider tests: build each family against the fake."""

from __future__ import annotations

from collections.abc import Callable

from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import ModelRequest, StreamChunk
from lsp_assist.providers.anthropic import AnthropicProvider
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.llamacpp import LlamaCppProvider
from lsp_assist.providers.mistral import MistralProvider
from lsp_assist.providers.native import NativeProvider
from lsp_assist.providers.ollama import OllamaProvider
from tests.fakes.fake_model_server import FakeModelServer

# Each provider class, typed as what the tests call: (tier, clients, api_key).
Ctor = Callable[[TierConfig, ClientPool, str | None], NativeProvider]

# family -> (provider class, base_url suffix used against the fake, model path on the fake)
FAMILIES: dict[str, tuple[Ctor, str, str]] = {
    "ollama": (OllamaProvider, "", "/api/generate"),
    "llamacpp": (LlamaCppProvider, "/v1", "/infill"),
    "anthropic": (AnthropicProvider, "/v1", "/v1/messages"),
    "mistral": (MistralProvider, "/v1", "/v1/fim/completions"),
}


def tier(srv: FakeModelServer, family: str, **kw: object) -> TierConfig:
    args: dict[str, object] = {
        "provider": family,
        "base_url": srv.origin + FAMILIES[family][1],
        "model": "fake-model",
    }
    args.update(kw)
    return TierConfig(**args)  # type: ignore[arg-type]


def build(
    family: str, srv: FakeModelServer, pool: ClientPool, key: str | None = None, **kw: object
) -> NativeProvider:
    cls = FAMILIES[family][0]
    return cls(tier(srv, family, **kw), pool, key)


async def collect(p: NativeProvider, request: ModelRequest) -> list[StreamChunk]:
    return [c async for c in p.stream(request)]


def text_of(chunks: list[StreamChunk]) -> str:
    return "".join(c.text for c in chunks)
