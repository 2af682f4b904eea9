"""`lsp-assist serve`: the language server over stdio (default) or TCP on 127.0.0.1."""

from __future__ import annotations

import argparse
import os
from typing import Any

from lsp_assist.logs import setup_logging


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the language server (stdio by default)")
    p.add_argument("--stdio", action="store_true", help="use stdio (the default)")
    p.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT instead (debugging)")
    p.set_defaults(run=run)


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
        server.start_io()
    return 0
