"""The cores other processes keep busy while this one works: /proc/stat's busy time less
this process's own (`OtherLoad`). The embedded model's prompt threads follow it per read
(`local_threads.prompt_threads`), and a speed measurement taken while it rose is dropped
(`model_rates.measure`): kept, it would be this machine's speed for good."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

#: The shortest window `OtherLoad` averages over: at 100 ticks/s, 15 ticks per core.
MIN_WINDOW_S = 0.15


@dataclass(frozen=True)
class _Snapshot:
    at: float  # time.monotonic()
    busy: int  # clock ticks all cores spent busy (steal included: another tenant had the core)
    own: int  # clock ticks this process spent (all its threads)


def _read_snapshot() -> _Snapshot | None:
    """/proc/stat's busy ticks and this process's own, or None off Linux."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(v) for v in fh.readline().split()[1:]]
        with open("/proc/self/stat", encoding="ascii") as fh:
            mine = fh.read().rsplit(")", 1)[1].split()
    except (OSError, ValueError, IndexError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle, iowait
    busy = sum(fields[:8]) - idle  # user nice system idle iowait irq softirq steal
    return _Snapshot(time.monotonic(), busy, int(mine[11]) + int(mine[12]))  # utime, stime


class OtherLoad:
    """Cores that other processes keep busy, averaged since the last call at least
    MIN_WINDOW_S ago: /proc/stat's busy time less this process's own.

    An instant count of runnable tasks (/proc/loadavg) counted this server's own threads:
    the event loop answering the request that starts a read, llama.cpp's threads still
    spinning after the last batch. So on two cores a read almost always got one thread
    (the code model's reads at the rest: 20 tokens/s where two threads read 47)."""

    def __init__(self, read: Callable[[], _Snapshot | None] = _read_snapshot) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._since: _Snapshot | None = None
        self._cores = 0.0
        self._hz = _ticks_per_second()

    def cores(self) -> float | None:
        """Other work's cores over the last window; None where /proc/stat is not there."""
        now = self._read()
        if now is None:
            return None
        with self._lock:
            since = self._since
            if since is None:
                self._since = now
            elif now.at - since.at >= MIN_WINDOW_S:
                others = (now.busy - since.busy) - (now.own - since.own)
                self._cores = max(0.0, others / ((now.at - since.at) * self._hz))
                self._since = now
            return self._cores


def _ticks_per_second() -> int:
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return 100


__all__ = ["MIN_WINDOW_S", "OtherLoad"]
