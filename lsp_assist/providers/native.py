"""Shared streaming skeleton for the native-API providers (Ollama, llama.cpp, Anthropic, Mistral).

`NativeProvider.stream` does what every family does the same way as `OpenAIProvider`:
one keep-alive client per origin from the `ClientPool`, a first
``StreamChunk("", meta={"connect": ms})`` timed by an httpx trace hook, HTTP status and
transport errors mapped onto `lsp_assist.errors` with secrets scrubbed, and the response
closed when the consumer stops iterating or is cancelled (leaving ``client.stream(...)``
drops the HTTP/1.1 connection, so the model server stops generating).

A subclass supplies `body()` (URL + JSON) and `parse()` (response -> chunks). `parse`
must read the body to EOF after its end marker, so the connection returns to the pool,
and raise `BadResponse` when the stream ends without one.
"""

from __future__ import annotations

from lsp_assist.domain import Usage
from lsp_assist.providers.streaming import StreamingProvider


def strip_suffix(url: str, *suffixes: str) -> str:
    """`url` without a trailing slash and without any of `suffixes` at its end."""
    url = url.rstrip("/")
    for s in suffixes:
        if url.endswith(s):
            return url[: -len(s)].rstrip("/")
    return url


def count_of(value: object) -> int | None:
    """A token count from a JSON field, None when absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return max(0, int(value))


def usage_of(prompt: object, completion: object) -> Usage | None:
    """A provider-reported `Usage`; None when neither count is a number."""
    p, c = count_of(prompt), count_of(completion)
    if p is None and c is None:
        return None
    return Usage(p or 0, c or 0, estimated=False)


class NativeProvider(StreamingProvider):
    """Base class of the native-API families: they set `family` and implement `body`/`parse`."""

    family = "native"


__all__ = ["NativeProvider", "count_of", "strip_suffix", "usage_of"]
