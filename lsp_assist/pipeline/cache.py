"""The suggestion cache: an in-memory LRU in front of a persistent diskcache store.

Keys are `PromptContext.key(tier, model)`: a hash of everything that changes what the
model would produce, so a hit is exact. The memory layer answers in microseconds; the
disk layer keeps warm suggestions across restarts (a diskcache `get` is ~7 µs, a `set`
~50 µs with a ~0.4 ms p99, so sets go to a worker thread off the request path). The memory
layer is bounded in entries (`cache.memory_entries`) and in bytes (`MEMORY_BYTES`).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from lsp_assist.memory import ByteLRU

log = logging.getLogger(__name__)

_DISK_DELAY_S = 0.05
MEMORY_BYTES = 2 << 20  # the memory layer: ~8,000 one-line suggestions, fewer long ones


def _entry_bytes(key: str, value: str) -> int:
    return sys.getsizeof(key) + sys.getsizeof(value)


class SuggestionCache:
    def __init__(
        self,
        directory: Path | None,
        *,
        memory_entries: int = 4096,
        disk_size_mb: int = 256,
        ttl_s: int = 7 * 24 * 3600,
    ) -> None:
        self._mem: ByteLRU[str, str] = ByteLRU(MEMORY_BYTES, _entry_bytes, max(16, memory_entries))
        self._ttl = ttl_s
        self._disk: Any = None
        self.hits = 0
        self.misses = 0
        self._pending: set[asyncio.Task[None]] = set()
        if directory is not None:
            try:
                import diskcache

                directory.mkdir(parents=True, exist_ok=True)
                # least-recently-stored: the LRU policy turns every get into a write (47 µs vs 7 µs).
                self._disk = diskcache.Cache(
                    str(directory),
                    size_limit=disk_size_mb * 1024 * 1024,
                    eviction_policy="least-recently-stored",
                    timeout=0.05,
                )
            except Exception as exc:  # a broken cache dir degrades to memory only
                log.warning("suggestion cache: disk store unavailable (%s); using memory only", exc)
                self._disk = None

    def get(self, key: str) -> str | None:
        value = self._mem.get(key)
        if value is not None:
            self.hits += 1
            return value
        if self._disk is not None:
            try:
                disk_value = self._disk.get(key)
            except Exception as exc:
                log.debug("suggestion cache: disk get failed: %s", exc)
                disk_value = None
            if isinstance(disk_value, str):
                self._remember(key, disk_value)
                self.hits += 1
                return disk_value
        self.misses += 1
        return None

    def put(self, key: str, value: str) -> None:
        if not value:
            return
        self._remember(key, value)
        if self._disk is not None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._disk_set(key, value)
                return
            # Write after the answer is on its way: the disk write (and the worker thread it
            # runs on) must not compete with sending the response.
            loop.call_later(_DISK_DELAY_S, self._spawn_disk_set, loop, key, value)

    def _spawn_disk_set(self, loop: asyncio.AbstractEventLoop, key: str, value: str) -> None:
        if self._disk is None or loop.is_closed():
            return
        task = loop.create_task(asyncio.to_thread(self._disk_set, key, value))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def delete(self, key: str) -> None:
        self._mem.pop(key)
        if self._disk is not None:
            try:
                self._disk.delete(key)
            except Exception as exc:
                log.debug("suggestion cache: disk delete failed: %s", exc)

    def _remember(self, key: str, value: str) -> None:
        self._mem.put(key, value)

    @property
    def memory_bytes(self) -> int:
        return self._mem.nbytes

    def _disk_set(self, key: str, value: str) -> None:
        try:
            self._disk.set(key, value, expire=self._ttl)
        except Exception as exc:
            log.debug("suggestion cache: disk set failed: %s", exc)

    def clear_memory(self) -> None:
        self._mem.clear()

    async def flush(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    def close(self) -> None:
        if self._disk is not None:
            try:
                self._disk.close()
            except Exception:
                pass
            self._disk = None

    def volume_bytes(self) -> int:
        if self._disk is None:
            return 0
        try:
            return int(self._disk.volume())
        except Exception:
            return 0
