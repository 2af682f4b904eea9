"""Caches bounded in bytes: `ByteLRU` and the size estimates its users give it.

A cache bounded only in entries is bounded in memory only as long as its entries stay
small; one entry can be a whole document text, or a line of a minified file megabytes
long. Every memo that lives as long as the server (the context engine's per-line and
per-window names, the prompt memo, the typing-through index, the suggestion cache...)
keeps its entries in a `ByteLRU`: least recently used out first, until the estimated
bytes of what is kept fit its named budget. An entry larger than the whole budget is not
kept at all (it would only evict everything else).

The estimates use `sys.getsizeof` of the objects an entry owns (O(1) for a string,
O(members) for a set): close to what CPython allocates, a little over for the strings
several entries share, which only makes the bound tighter.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# What an OrderedDict keeps per entry besides the key and the value: the hash table slot
# and the linked-list node of the order (measured with tracemalloc: ~100 bytes).
ENTRY_OVERHEAD = 100

_getsizeof = sys.getsizeof


def strings_bytes(strings: Iterable[str]) -> int:
    """Bytes of the strings themselves (not of the container holding them)."""
    return sum(map(_getsizeof, strings))


def set_bytes(names: frozenset[str] | set[str]) -> int:
    """Bytes of a set of strings, the strings included (counted even when shared)."""
    return _getsizeof(names) + sum(map(_getsizeof, names))


def text_names_bytes(text: str, names: frozenset[str]) -> int:
    """An entry from a line's text to the names on it (`sizer` of the per-line memos)."""
    return _getsizeof(text) + set_bytes(names)


class ByteLRU(Generic[K, V]):
    """A least-recently-used mapping whose entries' estimated bytes stay under `max_bytes`
    (and, when given, whose entries stay under `max_entries`).

    `sizer(key, value)` is the estimate of what an entry holds; it must give the same figure
    for the same entry every time (it is asked again when the entry leaves), so the running
    total never drifts. Values are never None (`get` answers None for a missing key).
    """

    __slots__ = ("_data", "_sizer", "evictions", "max_bytes", "max_entries", "nbytes")

    def __init__(self, max_bytes: int, sizer: Callable[[K, V], int], max_entries: int | None = None) -> None:
        self._data: OrderedDict[K, V] = OrderedDict()
        self._sizer = sizer
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.nbytes = 0
        self.evictions = 0

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        old = self._data.pop(key, None)
        if old is not None:
            self.nbytes -= self._cost(key, old)
        cost = self._cost(key, value)
        if cost > self.max_bytes:
            return  # larger than the whole budget: kept nowhere
        self._data[key] = value
        self.nbytes += cost
        data = self._data
        limit = self.max_entries
        while self.nbytes > self.max_bytes or (limit is not None and len(data) > limit):
            k, v = data.popitem(last=False)
            self.nbytes -= self._cost(k, v)
            self.evictions += 1

    def pop(self, key: K) -> V | None:
        value = self._data.pop(key, None)
        if value is not None:
            self.nbytes -= self._cost(key, value)
        return value

    def discard_where(self, drop: Callable[[K], bool]) -> None:
        """Remove every entry whose key `drop` says to."""
        for key in [k for k in self._data if drop(k)]:
            self.pop(key)

    def clear(self) -> None:
        self._data.clear()
        self.nbytes = 0

    def _cost(self, key: K, value: V) -> int:
        return self._sizer(key, value) + ENTRY_OVERHEAD

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def keys(self) -> Iterator[K]:
        return iter(list(self._data))

    def items(self) -> Iterator[tuple[K, V]]:
        return iter(list(self._data.items()))
