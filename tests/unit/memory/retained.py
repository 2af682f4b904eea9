"""What a cache keeps: the bytes still allocated after filling it (tracemalloc).

The cache object exists before the measure starts; everything the filling creates and the
cache does not keep is freed again, so what is left is what the cache holds (its entries,
their strings and sets, its own table). Independent of the cache's own byte estimate.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

# What the measure may exceed a bound by: allocator rounding and the tables' spare slots.
SLACK = 1.3


def retained_bytes(fill: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        fill()
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return after - before
