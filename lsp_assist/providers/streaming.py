"""The streaming skeleton every HTTP provider shares (OpenAI-compatible and native APIs).

`StreamingProvider.stream` does, the same way for every API family: one keep-alive
client per origin from the `ClientPool`; a first ``StreamChunk("", meta={"connect": ms, "status": 200})``
timed by an httpx trace hook; HTTP status and transport errors mapped onto
`lsp_assist.errors` with secrets scrubbed; the response closed when the consumer stops
iterating or is cancelled (leaving ``client.stream(...)`` drops an HTTP/1.1 connection, so
the model server stops generating), and a replacement connection opened in the
background when that happened.

A subclass supplies `body()` (URL + JSON) and `parse()` (response -> chunks). `parse`
must read the body to EOF after its end marker, so the connection returns to the pool,
and raise `BadResponse` when the stream ends without one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import ModelRequest, StreamChunk
from lsp_assist.errors import ConfigError
from lsp_assist.providers.attribution import Attribution
from lsp_assist.providers.http import ClientPool, error_for_status, error_for_transport, host_of


class ConnectTimer:
    """httpx trace hook: time spent opening a connection (TCP + TLS); 0 on a reused one."""

    def __init__(self) -> None:
        self.ms = 0.0
        self._started: float | None = None

    async def trace(self, event: str, info: dict[str, Any]) -> None:
        if event in ("connection.connect_tcp.started", "connection.start_tls.started"):
            self._started = time.perf_counter()
        elif event in ("connection.connect_tcp.complete", "connection.start_tls.complete") and self._started:
            self.ms += (time.perf_counter() - self._started) * 1000.0
            self._started = None


def bearer_headers(api_key: str | None, accept: str = "text/event-stream") -> dict[str, str]:
    """Request headers for the APIs that take ``Authorization: Bearer <key>``."""
    headers = {"Accept": accept}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


@dataclass(frozen=True)
class Endpoint:
    """Where a family's requests go and how they are sent: `base` is the root its paths are
    appended to, `headers` go with every request, `name` is the provider's name in logs and
    errors (the family's by default), `warm_path` is the route `warm` opens a connection on."""

    base: str
    headers: Mapping[str, str]
    name: str | None = None
    warm_path: str = "/models"


class StreamingProvider:
    """Base class: subclasses set `family` and implement `body` and `parse`."""

    family = "http"

    def __init__(
        self, tier: TierConfig, clients: ClientPool, api_key: str | None, endpoint: Endpoint
    ) -> None:
        if not endpoint.base:
            raise ConfigError(f"a base_url is required for provider {self.family!r}")
        self._tier = tier
        self._clients = clients
        self._api_key = api_key or None
        self._name = endpoint.name or self.family
        self._base = endpoint.base.rstrip("/")  # where the family's paths are appended
        self._host = host_of(self._base)
        self._headers = dict(endpoint.headers)
        self._warm_path = endpoint.warm_path
        # Set by the server when [team] is configured: labels every call for gateways.
        self.attribution: Attribution | None = None
        # `read` is the longest gap between chunks; the pipeline enforces the first-token
        # and total deadlines, this is only the safety net (as in OpenAIProvider).
        read_s = max(tier.total_timeout_ms, tier.first_token_timeout_ms) / 1000 + 1.0
        self._timeout = httpx.Timeout(connect=min(2.0, read_s), read=read_s, write=5.0, pool=1.0)
        self._urls: dict[str, httpx.URL] = {}

    # -- Provider protocol ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._tier.model

    @property
    def endpoint_host(self) -> str | None:
        return self._host

    @property
    def single_slot(self) -> bool:
        return False  # a remote server runs concurrent streams

    @property
    def base_url(self) -> str:
        return self._base

    async def warm(self) -> None:
        await self._clients.warm(self._base, self._auth_headers(), path=self._warm_path)

    async def aclose(self) -> None:
        # The clients are shared per origin and closed by ClientPool.aclose_all().
        return None

    # -- for subclasses -------------------------------------------------------------------------
    def _auth_headers(self) -> dict[str, str]:
        """Headers a warm-up request needs: the bearer token when there is one."""
        auth = self._headers.get("Authorization")
        return {"Authorization": auth} if auth else {}

    def body(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        """The URL and JSON body for `request` (public for tests and `lsp-assist context`)."""
        raise NotImplementedError

    def parse(self, response: httpx.Response, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        """The chunks of a 2xx streaming response."""
        raise NotImplementedError

    def where(self) -> str:
        """The start of every error message: "<provider> at <host>"."""
        return f"{self._name} at {self._host}"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        url, body = self.body(request)
        headers = self._headers
        if self.attribution is not None:
            body = {**body, **self.attribution.body_fields(self.family, request.feature)}
            headers = {**headers, **self.attribution.headers(request.feature)}
        ctx = request.context
        secrets = (self._api_key, ctx.prefix, ctx.suffix)
        client = self._clients.get(self._base)
        target = self._urls.get(url)
        if target is None:  # parsed once per endpoint, not on every request (30-40 us each)
            target = self._urls[url] = httpx.URL(url)
        streaming = False
        ended = False  # the body was read to its end (the connection goes back to the pool)
        connect = ConnectTimer()
        try:
            async with client.stream(
                "POST",
                target,
                json=body,
                headers=headers,
                timeout=self._timeout,
                extensions={"trace": connect.trace},
            ) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    raise error_for_status(resp, provider=self._name, secrets=secrets)
                streaming = True
                yield StreamChunk("", meta={"connect": connect.ms, "status": float(resp.status_code)})
                # aclosing: the parser is finalised here, not later by the garbage collector.
                async with contextlib.aclosing(self.parse(resp, request)) as chunks:
                    async for chunk in chunks:
                        yield chunk
                ended = resp.is_stream_consumed
        except httpx.HTTPError as exc:
            raise error_for_transport(
                exc, provider=self._name, host=self._host, streaming=streaming
            ) from None
        finally:
            if streaming and not ended:
                # Stopped mid-body (early stop or cancel): the HTTP/1.1 connection is gone.
                self._clients.replenish(self._base, self.warm)


__all__ = ["ConnectTimer", "Endpoint", "StreamingProvider", "bearer_headers"]
