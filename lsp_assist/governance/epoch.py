"""The policy epoch: one number that moves whenever the data boundary may admit less.

Everything the server remembers that was worked out from file content (a suggestion kept for
typing-through, the Invoked choices, a reused prompt, a stream still running, a prefetch or
a rewrite waiting to start) was admitted by the boundary of its moment. The runtime advances
the epoch when the effective policy changes (a configuration change that touches the
boundary, an ignore or settings file edited on disk, a workspace folder added or removed),
and every such memory answers to it at read time: it serves only what was stored under the
current epoch, and an answer whose input was read under an older one is never returned. A
read costs one integer comparison, so no memory needs to be found and purged at change time.

Memories keyed on the exact prompt (the suggestion cache in memory and on disk, the
speculative streams) need no epoch: a prompt built now holds nothing the boundary refuses,
so an entry stored under a prompt that held excluded text is never asked for again.
"""

from __future__ import annotations


class PolicyEpoch:
    """A counter shared by every memory of one server; `advance` on a policy change."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def advance(self) -> int:
        self.value += 1
        return self.value

    def admits(self, stamp: int) -> bool:
        """Whether something read under epoch `stamp` may still answer."""
        return stamp == self.value
