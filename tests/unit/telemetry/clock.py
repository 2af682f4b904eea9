"""A fake clock and scheduler for the retention checkpoints (30 s, 2 min, 10 min)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Timer:
    due: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[_Timer] = []

    def __call__(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        """Move time on, firing due timers in order (a timer may arm the next one)."""
        end = self.now + seconds
        for _ in range(10_000):  # bounded
            due = [t for t in self.timers if not t.cancelled and t.due <= end]
            if not due:
                break
            timer = min(due, key=lambda t: t.due)
            self.timers.remove(timer)
            self.now = timer.due
            timer.callback()
        self.now = end

    @property
    def pending(self) -> int:
        return sum(1 for t in self.timers if not t.cancelled)
