"""`lsp-assist serve`: the language server over stdio (default) or TCP on 127.0.0.1."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, BinaryIO

from lsp_assist.logs import setup_logging


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the language server (stdio by default)")
    p.add_argument("--stdio", action="store_true", help="use stdio (the default)")
    p.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT instead (debugging)")
    p.set_defaults(run=run)


def private_stdout() -> BinaryIO:
    """The LSP channel on a private copy of fd 1, with fd 1 itself pointed at stderr.

    Native code in this process (llama.cpp) may print to fd 1, and llama-cpp-python
    redirects fds 1 and 2 to /dev/null while it loads a model on its worker thread: on
    the real stdout either would corrupt or swallow protocol frames (measured: a response
    written during the load never reached the client).
    """
    sys.stdout.flush()
    channel = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(channel, "wb")


def run(args: argparse.Namespace) -> int:
    setup_logging(
        args.log_level or os.environ.get("LSP_ASSIST_LOG_LEVEL", "info"),
        args.log_file or os.environ.get("LSP_ASSIST_LOG_FILE"),
    )
    from lsp_assist.protocol import logsink
    from lsp_assist.protocol.handlers import create_server

    if args.tcp is None:
        logsink.hold_until_client()  # stdio: the editor reads stderr as errors
    server = create_server()
    if args.tcp is not None:
        server.start_tcp("127.0.0.1", args.tcp)  # loopback only: the protocol carries code
    else:
        server.start_io(stdout=private_stdout())
        return server.exit_status  # 1 after `exit` without `shutdown`, or input cut inside a frame
    return 0
