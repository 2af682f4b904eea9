"""Per-request latency stages.

E2E = debounce + queue + context + connect + time to first token + generation +
post-processing (+ render, which only the client sees). Each request carries a
`StageClock`; stages are recorded in milliseconds with `time.perf_counter`.
"""

from __future__ import annotations

import time

# The order stages are reported in; "total" is always last.
STAGES = (
    "debounce",
    "queue",
    "context",
    "connect",
    "ttft",
    "generation",
    "postprocess",
    "total",
)


class StageClock:
    """Measures consecutive stages of one request.

    `lap(name)` closes the stage that started at the previous lap (or at creation), so
    the stages add up to the total with no gaps. Re-entering a stage adds to it.
    """

    __slots__ = ("_last", "_start", "stages")

    def __init__(self, start: float | None = None) -> None:
        self._start = time.perf_counter() if start is None else start
        self._last = self._start
        self.stages: dict[str, float] = {}

    def lap(self, name: str) -> float:
        now = time.perf_counter()
        ms = (now - self._last) * 1000.0
        self.stages[name] = self.stages.get(name, 0.0) + ms
        self._last = now
        return ms

    def add(self, name: str, ms: float) -> None:
        self.stages[name] = self.stages.get(name, 0.0) + ms

    def skip(self) -> None:
        """Restart the current stage without recording the time spent (e.g. idle waits)."""
        self._last = time.perf_counter()

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self._start) * 1000.0

    @property
    def started(self) -> float:
        """When the request arrived (`time.perf_counter()`)."""
        return self._start

    def finish(self) -> dict[str, float]:
        self.stages["total"] = self.elapsed_ms()
        return dict(self.stages)
