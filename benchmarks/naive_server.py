"""The naive baseline the latency benchmark compares against, run in the same harness.

What many first implementations do: no debounce, no cache, no typing-through, a new
`httpx.AsyncClient` per request, the whole prefix/suffix window sent each time, and the
stream read until the first line ends. It is a real pygls server over stdio, so the
difference to lsp-assist is the pipeline alone.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import httpx
from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("naive-baseline", "0")
_base_url: dict[str, str] = {}


@server.feature(types.INITIALIZE)
def initialize(ls: LanguageServer, params: types.InitializeParams) -> None:
    opts: Any = params.initialization_options or {}
    _base_url["url"] = opts["tiers"]["fast"]["base_url"]


@server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
async def inline(ls: LanguageServer, params: types.InlineCompletionParams) -> types.InlineCompletionList:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    offset = doc.offset_at_position(params.position)
    prefix, suffix = doc.source[max(0, offset - 3000) : offset], doc.source[offset : offset + 1000]
    text = ""
    async with httpx.AsyncClient() as client:  # a new client (and connection) per request
        body = {"model": "m", "prompt": prefix, "suffix": suffix, "max_tokens": 48, "stream": True}
        async with client.stream("POST", _base_url["url"] + "/completions", json=body) as r:
            async for line in r.aiter_lines():
                if not line.startswith("data:") or line.endswith("[DONE]"):
                    continue
                for ch in json.loads(line[5:])["choices"]:
                    text += ch.get("text", "")
                if "\n" in text:
                    break
    text = text.split("\n", 1)[0]
    items = [
        types.InlineCompletionItem(
            insert_text=text, range=types.Range(start=params.position, end=params.position)
        )
    ]
    return types.InlineCompletionList(items=items if text else [])


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    server.start_io()
