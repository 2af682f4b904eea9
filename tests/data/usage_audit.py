"""A synthetic audit log for the usage report: model calls over a week, three models and
languages, and the suggestion events an editor would report (seeded, so always the same)."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

MODELS = {"qwen2.5-coder-1.5b": "fast", "gpt-4o-mini": "quality", "gemma-3-270m": "fast"}
PRICES_TOML = (
    '[governance.prices."gpt-4o-mini"]\nprompt_per_1k = 0.15\ncompletion_per_1k = 0.6\n'
    '[governance.prices."qwen2.5-coder-1.5b"]\nprompt_per_1k = 0.02\ncompletion_per_1k = 0.02\n'
)


def write_audit(path: Path, calls: int = 400, seed: int = 1) -> None:
    rnd = random.Random(seed)
    now = dt.datetime(2026, 12, 1, 12, tzinfo=dt.timezone.utc)
    names = list(MODELS)
    rows: list[dict[str, object]] = []
    for i in range(calls):
        model = names[i % 3]
        tier = MODELS[model]
        lang = ["python", "typescript", "go"][i % 3 if i % 5 else 0]
        ts = (now - dt.timedelta(days=i % 7, minutes=i)).isoformat()
        rows.append(
            {
                "ts": ts,
                "feature": "completion" if i % 6 else "escalation",
                "tier": tier,
                "model": model,
                "language": lang,
                "prompt_tokens": rnd.randint(200, 1500),
                "completion_tokens": rnd.randint(5, 60),
                "stages_ms": {"ttft": rnd.lognormvariate(5, 0.5), "total": rnd.lognormvariate(6, 0.5)},
                "outcome": "model",
            }
        )
        if i % 2:
            continue
        base = {"ts": ts, "suggestion_id": f"s{i}", "feature": "completion", "tier": tier, "model": model}
        base["language"] = lang
        rows.append({**base, "event": "shown"})
        r = rnd.random()
        if r < 0.35:
            n = rnd.randint(10, 80)
            rows.append({**base, "event": "accepted", "accepted_chars": n, "first_accept": True})
            for cp, keep in ((30, 0.95), (120, 0.85), (600, 0.7)):
                kept = int(n * keep * rnd.random() ** 0.2)
                rows.append(
                    {
                        **base,
                        "event": "retained",
                        "checkpoint_s": cp,
                        "accepted_chars": n,
                        "retained_chars": kept,
                    }
                )
        elif r < 0.45:
            rows.append(
                {
                    **base,
                    "event": "accepted_partial",
                    "accepted_chars": 6,
                    "unit": "word",
                    "first_accept": True,
                }
            )
        elif r < 0.7:
            rows.append({**base, "event": "typed_over"})
        else:
            rows.append({**base, "event": "dismissed"})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
