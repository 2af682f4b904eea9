"""A network trap for server processes under test: put this folder on PYTHONPATH.

Every name resolution of a host other than loopback is recorded (one line in the file
named by $LSP_ASSIST_NET_TRAP) and refused, so a test can prove that no outbound call
was even attempted, and never depends on the network.
"""

from __future__ import annotations

import os
import socket
from typing import Any

_LOOPBACK = {"127.0.0.1", "::1", "localhost", "", None}
_real_getaddrinfo = socket.getaddrinfo


def _trapped_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name not in _LOOPBACK:
        trap = os.environ.get("LSP_ASSIST_NET_TRAP")
        if trap:
            with open(trap, "a", encoding="utf-8") as f:
                f.write(f"{name}\n")
        raise socket.gaierror(socket.EAI_NONAME, f"network trap: {name} refused")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.getaddrinfo = _trapped_getaddrinfo
