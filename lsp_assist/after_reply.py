"""`after_reply`: bookkeeping that no reply waits for runs once the reply is written.

A request handler's reply is written by its task's done callback (pygls queues it with
`call_soon` when the handler returns). A callback queued with `call_soon` while the
handler still runs would run before that write; one queued from such a callback (two hops)
runs after it. So the figures of a finished request (stats and their exporters, the status
item's latency, a finished call's audit line) cost the reply nothing. Without an event loop
(the CLI, in-process tools) it runs at once. `settled` lets a closing runtime run what is
still queued, so a process that answers once and exits (`lsp-assist complete`) loses none
of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

_pending = 0  # queued and not yet run (one event loop per process)
SETTLE_HOPS = 8  # what `settled` waits at most: queued work runs within two hops


def after_reply(fn: Callable[[], None]) -> None:
    """Run `fn` after the current handler's reply is written (at once without a loop)."""
    global _pending
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        fn()
        return
    _pending += 1
    loop.call_soon(loop.call_soon, _run, fn)


def _run(fn: Callable[[], None]) -> None:
    global _pending
    _pending -= 1
    fn()


def pending() -> int:
    """How many are queued and not yet run."""
    return _pending


async def settled() -> None:
    """Return once what was queued has run (a few loop hops at most)."""
    for _ in range(SETTLE_HOPS):
        if _pending <= 0:
            return
        await asyncio.sleep(0)
