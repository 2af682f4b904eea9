"""The floor of a pygls server in `lsp-assist bench`: every inline completion answered at
once with one fixed item, no model call, no context. Its cache-hit figure is what pygls
and the harness cost before any server's own work:

    lsp-assist bench --server "pygls-echo=python -m benchmarks.bench_floor_pygls"
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("pygls-echo", "0")
ITEM = types.InlineCompletionItem(insert_text="return compute_total(items, tax_rate)")


@server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
def inline(ls: LanguageServer, params: types.InlineCompletionParams) -> types.InlineCompletionList:
    return types.InlineCompletionList(items=[ITEM])


if __name__ == "__main__":
    server.start_io()
