"""`after_reply`: bookkeeping that no reply waits for runs once the reply is written.

A request handler's reply is written by its task's done callback (pygls queues it with
`call_soon` when the handler returns). A callback queued with `call_soon` while the
handler still runs would run before that write; one queued from such a callback (two hops)
runs after it. So the figures of a finished request (stats and their exporters, the status
item's latency) cost the reply nothing. Without an event loop (the CLI, in-process tools)
it runs at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def after_reply(fn: Callable[[], None]) -> None:
    """Run `fn` after the current handler's reply is written (at once without a loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        fn()
        return
    loop.call_soon(loop.call_soon, fn)
