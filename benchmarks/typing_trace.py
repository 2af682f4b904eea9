"""Inter-key intervals for typing bursts: recorded human typing when it is here, and seeded
draws from log-normal models.

Inter-key intervals of real typing are right-skewed and close to log-normal. Two model
profiles:
- "average": median 170 ms, sigma 0.55 (the model `lsp_assist.capacity.typist` simulates
  developers with, about 60 words a minute with a long right tail);
- "fast": median 95 ms, sigma 0.45 (a fast typist inside a familiar word).
Draws use a fixed seed: every run types exactly the same bursts.

"recorded": bursts cut from real keystroke logs of the Aalto "136 million keystrokes"
study (Dhakal, Feit, Kristensson, Oulasvirta, CHI 2018: participants transcribing
sentences; PRESS_TIME per key, in ms). No package ships them and CI cannot fetch them, so
they are read only when present in the gitignored `benchmarks/.corpora/aalto136m/` (one
`<participant>_keystrokes.txt` file per participant, the study's own tab-separated format);
without them the recorded profile is skipped and the benchmark says so. A burst is 12
consecutive key presses of one sentence (Shift left out: it is not a text change) with
no gap of 600 ms or more, the same definition the model profiles are capped to.
"""

from __future__ import annotations

import csv
import itertools
import math
import random
from pathlib import Path

PROFILES = {"average": (170.0, 0.55), "fast": (95.0, 0.45)}
RECORDED_DIR = Path(__file__).resolve().parent / ".corpora" / "aalto136m"
BURST_GAP_S = 0.6  # a longer gap ends a burst
_MODIFIERS = {"SHIFT", "CAPS_LOCK", "CTRL", "ALT"}


def burst_gaps(profile: str, seed: int, keys: int = 12) -> list[float]:
    """Seconds between the `keys` keystrokes of one burst (keys - 1 gaps), capped at 0.6 s
    (a longer gap ends a burst)."""
    median_ms, sigma = PROFILES[profile]
    rng = random.Random(f"{profile}:{seed}")
    return [
        min(BURST_GAP_S, rng.lognormvariate(math.log(median_ms), sigma) / 1000.0) for _ in range(keys - 1)
    ]


def recorded_bursts(count: int, keys: int = 12, directory: Path = RECORDED_DIR) -> list[list[float]]:
    """Up to `count` bursts (lists of keys - 1 gaps in seconds) from the recorded logs, spread
    evenly over the participants and their sentences; [] when no log is here."""
    per_person: list[list[list[float]]] = []
    for path in sorted(directory.glob("*_keystrokes.txt")):
        sections: dict[str, list[int]] = {}
        with path.open(encoding="utf-8", errors="replace", newline="") as f:
            for rec in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                if (rec.get("LETTER") or "").upper() in _MODIFIERS:
                    continue
                try:
                    sections.setdefault(rec["TEST_SECTION_ID"], []).append(int(rec["PRESS_TIME"]))
                except (KeyError, TypeError, ValueError):
                    continue
        bursts: list[list[float]] = []
        for _, presses in sorted(sections.items()):
            presses.sort()
            gaps = [(b - a) / 1000.0 for a, b in itertools.pairwise(presses)]
            start = 0
            while start + keys - 1 <= len(gaps):
                window = gaps[start : start + keys - 1]
                bad = next((i for i, g in enumerate(window) if g >= BURST_GAP_S or g <= 0), None)
                if bad is None:
                    bursts.append(window)
                    start += keys - 1
                else:
                    start += bad + 1
        if bursts:
            per_person.append(bursts)
    out: list[list[float]] = []
    i = 0
    while len(out) < count and any(per_person):
        person = per_person[i % len(per_person)]
        if person:
            # every k-th burst of the person: spread over the session, not its first sentences
            step = max(1, len(person) // max(1, count // len(per_person) + 1))
            out.append(person.pop(min(len(person) - 1, step - 1)))
        i += 1
    return out
