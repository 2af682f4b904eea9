"""Inter-key intervals for typing bursts: a seeded draw from log-normal models, not a constant.

Inter-key intervals of real typing are right-skewed and close to log-normal. Two profiles:
- "average": median 170 ms, sigma 0.55 (the model `lsp_assist.capacity.typist` simulates
  developers with, about 60 words a minute with a long right tail);
- "fast": median 95 ms, sigma 0.45 (a fast typist inside a familiar word).
No recorded keystroke log ships with the project (none can be fetched here), so these are
draws from the models with a fixed seed: every run types exactly the same bursts.
"""

from __future__ import annotations

import math
import random

PROFILES = {"average": (170.0, 0.55), "fast": (95.0, 0.45)}


def burst_gaps(profile: str, seed: int, keys: int = 12) -> list[float]:
    """Seconds between the `keys` keystrokes of one burst (keys - 1 gaps), capped at 0.6 s
    (a longer gap ends a burst)."""
    median_ms, sigma = PROFILES[profile]
    rng = random.Random(f"{profile}:{seed}")
    return [min(0.6, rng.lognormvariate(math.log(median_ms), sigma) / 1000.0) for _ in range(keys - 1)]
