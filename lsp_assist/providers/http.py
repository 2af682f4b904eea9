"""Shared HTTP plumbing for the API-family providers.

- `ClientPool`: ONE keep-alive `httpx.AsyncClient` per origin (scheme, host, port), built
  with a prebuilt SSL context: building an AsyncClient with default verification costs
  ~25 ms (an SSLContext from certifi), with a prebuilt context ~0.1 ms.
- `sse_events` / `ndjson_objects`: stream readers that tolerate frames split anywhere
  (httpx's line iterator reassembles lines and UTF-8 sequences).
- `error_for_status` / `error_for_transport`: map HTTP failures onto `lsp_assist.errors`.
  Messages name the provider, host and status, and never carry the API key or prompt text
  (server messages are scrubbed, see `scrub`).
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import importlib.util
import json
import ssl
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from lsp_assist.errors import (
    BadRequest,
    BadResponse,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    Unauthorized,
    Unavailable,
)
from lsp_assist.providers.asyncio_net import plain_transport

DEFAULT_TIMEOUT = httpx.Timeout(connect=2.0, read=10.0, write=5.0, pool=1.0)
DEFAULT_LIMITS = httpx.Limits(max_connections=20, max_keepalive_connections=10, keepalive_expiry=60.0)
WARM_TIMEOUT = httpx.Timeout(connect=2.0, read=2.0, write=2.0, pool=1.0)


@functools.lru_cache(maxsize=1)
def ssl_context() -> ssl.SSLContext:
    """The process-wide verifying SSL context, built once (it is the slow part of a client)."""
    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:  # pragma: no cover - certifi comes with httpx
        return ssl.create_default_context()


def origin_of(base_url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL, with the default port filled in."""
    parts = urlsplit(base_url)
    scheme = (parts.scheme or "http").lower()
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, host, port


def host_of(base_url: str) -> str:
    return origin_of(base_url)[1]


# h2 ships with the `httpx[http2]` extra this package depends on; without it, HTTP/1.1 only.
_HTTP2 = importlib.util.find_spec("h2") is not None


class ClientPool:
    """Keep-alive AsyncClients keyed by origin. Create one per server process and share it."""

    def __init__(
        self,
        *,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        limits: httpx.Limits = DEFAULT_LIMITS,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._timeout = timeout
        self._limits = limits
        self._transport = transport  # tests inject httpx.MockTransport here
        self._clients: dict[tuple[str, str, int], httpx.AsyncClient] = {}
        self._replenishing: dict[tuple[str, str, int], asyncio.Task[None]] = {}

    def get(self, base_url: str) -> httpx.AsyncClient:
        """The client for `base_url`'s origin, created on first use (no I/O)."""
        key = origin_of(base_url)
        client = self._clients.get(key)
        if client is None or client.is_closed:
            # Plain http needs no verification: skip even the cached context.
            verify: ssl.SSLContext | bool = ssl_context() if key[0] == "https" else False
            transport = self._transport
            if transport is None and key[0] == "http":
                transport = plain_transport(self._limits)  # no anyio yield per read and write
            client = httpx.AsyncClient(
                timeout=self._timeout,
                limits=self._limits,
                verify=verify,
                # HTTP/2 over TLS (negotiated by ALPN): a stream we stop early is reset on its own
                # and the connection stays warm; over HTTP/1.1 closing a stream closes the socket.
                http2=key[0] == "https" and _HTTP2,
                transport=transport,
                follow_redirects=False,  # a redirect could carry the key to another host
                trust_env=False,  # no proxy surprises from the environment for loopback models
            )
            self._clients[key] = client
        return client

    async def warm(
        self, base_url: str, headers: Mapping[str, str] | None = None, *, path: str = "/models"
    ) -> None:
        """Open a connection ahead of the first request (GET {base_url}{path}). Never raises."""
        try:
            client = self.get(base_url)
            resp = await client.get(
                base_url.rstrip("/") + path, headers=dict(headers or {}), timeout=WARM_TIMEOUT
            )
            await resp.aclose()
        except Exception:  # warming is best-effort by design
            return

    async def unreachable(self, base_url: str) -> str | None:
        """Why `base_url` cannot be reached, or None when it answers at all (any HTTP status:
        the warm-up report says whether the endpoint is there, not whether a key works)."""
        try:
            resp = await self.get(base_url).get(base_url, timeout=WARM_TIMEOUT)
            await resp.aclose()
        except (httpx.ConnectError, httpx.ConnectTimeout):
            return f"cannot connect to {base_url}"
        except httpx.TimeoutException:
            return f"{base_url} did not answer within {WARM_TIMEOUT.read:.0f} s"
        except httpx.HTTPError as exc:
            return f"{base_url}: {type(exc).__name__}"
        return None

    def replenish(self, base_url: str, warm: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Re-open a connection in the background after a stream was closed mid-body.

        Over HTTP/1.1 stopping a stream early (how the provider is told to stop generating)
        costs its connection; the next completion would pay a new TCP (and TLS) handshake.
        One warm-up per origin at a time; never raises.
        """
        key = origin_of(base_url)
        task = self._replenishing.get(key)
        if task is not None and not task.done():
            return
        try:
            self._replenishing[key] = asyncio.get_running_loop().create_task(warm())
        except RuntimeError:  # no running loop (shutting down)
            return

    async def aclose_all(self) -> None:
        for task in self._replenishing.values():
            task.cancel()
        self._replenishing.clear()
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            try:
                await client.aclose()
            except Exception:  # closing must not fail shutdown
                continue

    def __len__(self) -> int:
        return len(self._clients)


# -- stream readers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SSEEvent:
    event: str  # "message" when the server named none
    data: str  # multi-line data joined with "\n"


async def sse_events_from_lines(lines: AsyncIterator[str]) -> AsyncIterator[SSEEvent]:
    """Parse Server-Sent Events from text lines (line endings already removed)."""
    event = ""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield SSEEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue  # a comment / keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:  # a final event without its blank line
        yield SSEEvent(event or "message", "\n".join(data))


def sse_events(response: httpx.Response) -> AsyncIterator[SSEEvent]:
    return sse_events_from_lines(response.aiter_lines())


async def ndjson_objects(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """One JSON object per non-blank line (Ollama's /api/generate)."""
    async for line in response.aiter_lines():
        if line.strip():
            yield parse_json_object(line)


def parse_json_object(data: str) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except ValueError:
        raise BadResponse("the model server sent a chunk that is not valid JSON") from None
    if not isinstance(obj, dict):
        raise BadResponse("the model server sent a chunk that is not a JSON object")
    return obj


# -- errors -------------------------------------------------------------------------------------

_MAX_MESSAGE = 160
_SHINGLE = 12


def scrub(message: str, secrets: Iterable[str | None]) -> str:
    """A server message made safe to log: short, without the key, and dropped entirely
    when it quotes any 12-character run of a secret (the prompt, the suffix)."""
    message = " ".join(message.split())[:_MAX_MESSAGE]
    for secret in secrets:
        if not secret:
            continue
        if 6 <= len(secret) <= 64 and secret in message:
            return "(server message withheld: it quoted request data)"
        if len(message) >= _SHINGLE and len(secret) >= _SHINGLE:
            for i in range(0, len(message) - _SHINGLE + 1):
                if message[i : i + _SHINGLE] in secret:
                    return "(server message withheld: it quoted request data)"
    return message


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _server_message(body: bytes) -> str:
    try:
        obj = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("type") or "")
        return str(err)
    return ""


def error_for_status(
    response: httpx.Response, *, provider: str, secrets: Iterable[str | None] = ()
) -> ProviderError:
    """The error for an HTTP status >= 400. Read the body (`await response.aread()`) first."""
    err = _error_for_status(response, provider=provider, secrets=secrets)
    err.http_status = response.status_code
    return err


def _error_for_status(
    response: httpx.Response, *, provider: str, secrets: Iterable[str | None]
) -> ProviderError:
    status = response.status_code
    host = response.request.url.host
    try:
        detail = scrub(_server_message(response.content), secrets)
    except httpx.ResponseNotRead:
        detail = ""
    where = f"{provider} at {host}: HTTP {status}"
    suffix = f": {detail}" if detail else ""
    if status in (401, 403):
        return Unauthorized(f"{where} (the API key is missing, wrong or lacks access){suffix}")
    if status == 429:
        retry = parse_retry_after(response.headers.get("retry-after"))
        after = f", retry after {retry:.0f} s" if retry is not None else ""
        return RateLimited(f"{where} rate limited{after}{suffix}", retry_after=retry)
    if 400 <= status < 500:
        return BadRequest(f"{where} rejected the request{suffix}")
    return Unavailable(f"{where} server error{suffix}")


def error_for_transport(exc: httpx.HTTPError, *, provider: str, host: str, streaming: bool) -> ProviderError:
    """Map an httpx exception. `streaming`: the response headers had already arrived."""
    where = f"{provider} at {host}"
    kind = type(exc).__name__
    if isinstance(exc, httpx.ReadTimeout):
        return ProviderTimeout(f"{where}: no data within the read timeout", first_token=not streaming)
    if isinstance(exc, httpx.PoolTimeout):
        return Unavailable(f"{where}: every connection is busy (pool timeout)")
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return Unavailable(f"{where}: cannot connect ({kind})")
    if streaming and isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return BadResponse(f"{where}: the stream was cut before it completed ({kind})")
    return Unavailable(f"{where}: request failed ({kind})")


__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_TIMEOUT",
    "ClientPool",
    "SSEEvent",
    "error_for_status",
    "error_for_transport",
    "host_of",
    "ndjson_objects",
    "origin_of",
    "parse_json_object",
    "parse_retry_after",
    "scrub",
    "sse_events",
    "sse_events_from_lines",
    "ssl_context",
]
