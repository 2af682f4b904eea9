"""The LSP surface: thin pygls handlers that convert, call the layer below and convert back.

This package is the only one that imports pygls and lsprotocol. Handlers are async (so
`$/cancelRequest` cancels them at their next await), never block the loop, and always
answer: a failure below becomes an empty result and a log line, never an internal-error
response (editors show those to the user as failures).

One module per concern, each with a `register(server)`:

- `server.py`: the pygls classes (`AssistProtocol`, `AssistServer`);
- `lifecycle.py`: initialize, initialized, configuration changes, shutdown;
- `documents.py`: open, change, save, close, file events, workspace folders;
- `completion.py`: inline completion, escalate and recompute, `suggestionReady`;
- `nextedit.py`: next-edit suggestions (`textDocument/copilotInlineEdit`);
- `commands.py`: the other custom commands and notifications.

What a handler would otherwise compute itself (an answer's range over typed text, its
suggestion ids, command arguments) lives below, in `pipeline/inline_items.py` and
`pipeline/client_args.py`, without pygls.
"""

from __future__ import annotations

from lsp_assist.protocol import commands, completion, documents, lifecycle, nextedit
from lsp_assist.protocol.server import AssistProtocol, AssistServer

__all__ = ["AssistProtocol", "AssistServer", "create_server"]


def create_server() -> AssistServer:
    """The language server with every handler registered."""
    server = AssistServer()
    nextedit.register(server)
    lifecycle.register(server)
    documents.register(server)
    completion.register(server)
    commands.register(server)
    return server
