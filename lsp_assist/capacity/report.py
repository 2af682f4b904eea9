"""The capacity report: one row per load level, the knee, and what the fleet must serve."""

from __future__ import annotations

import math

from lsp_assist.capacity.sim import LevelReport, find_knee


def _f(v: float, digits: int = 1) -> str:
    return "-" if v != v or math.isinf(v) else f"{v:.{digits}f}"


HEADER = (
    f"{'devs':>5} {'req/s pk':>8} {'req/s':>6} {'tok/s in':>9} {'tok/s out':>9} {'streams pk':>10} "
    f"{'mean':>5} {'ttft p50':>8} {'p95':>6} {'lat p50':>7} {'p95':>6} {'saved':>6} {'err%':>5} "
    f"{'lag p95':>7}"
)


def row(lv: LevelReport) -> str:
    saved = sum(lv.saved.values())
    return (
        f"{lv.developers:>5} {_f(lv.peak_rps, 0):>8} {_f(lv.mean_rps):>6} {_f(lv.tokens_in_per_s, 0):>9} "
        f"{_f(lv.tokens_out_per_s, 0):>9} {lv.peak_streams:>10} {_f(lv.mean_streams):>5} "
        f"{_f(lv.ttft_p50_ms, 0):>8} {_f(lv.ttft_p95_ms, 0):>6} {_f(lv.latency_p50_ms, 0):>7} "
        f"{_f(lv.latency_p95_ms, 0):>6} {saved:>6} {_f(100 * lv.error_rate):>5} "
        f"{_f(lv.loop_lag_p95_ms, 0):>7}"
    )


def format_report(levels: list[LevelReport], concurrency_limit: int | None = None) -> str:
    lines = [HEADER, *(row(lv) for lv in levels), ""]
    for lv in levels:
        s = lv.saved
        made = lv.model_calls
        lines.append(
            f"{lv.developers} developers: {lv.keystrokes} keystrokes, {lv.requests} requests, "
            f"{made} model calls ({made / max(1, lv.keystrokes):.2f} per keystroke); "
            f"answered without a call: cache {s['cache']}, "
            f"typing-through {s['typing_through']}, attached to a live stream {s['attached']}; "
            f"{lv.debounced} debounced or superseded; {lv.accepted} of {lv.shown} shown suggestions accepted"
        )
        if lv.loop_lag_p95_ms > 50:
            lines.append(
                f"  note: the simulator's event loop lagged {lv.loop_lag_p95_ms:.0f} ms (p95): at this level "
                "the simulating machine, not only the endpoint, limits the figures"
            )
    knee = find_knee(levels, concurrency_limit)
    lines.append("")
    if knee is None:
        lines.append("knee: not reached at these levels (the endpoint kept up)")
    else:
        base = levels[0]
        why = []
        if knee.ttft_p95_ms > 2 * base.ttft_p95_ms + 20:
            why.append(f"p95 time to first token {knee.ttft_p95_ms:.0f} ms vs {base.ttft_p95_ms:.0f} ms "
                       f"at {base.developers}")  # fmt: skip
        if knee.error_rate > 0.05:
            why.append(f"{100 * knee.error_rate:.0f}% of calls failed")
        if concurrency_limit is not None and knee.mean_streams >= concurrency_limit:
            why.append(f"{knee.mean_streams:.1f} streams in flight on average, limit {concurrency_limit}")
        lines.append(f"knee: at {knee.developers} developers ({'; '.join(why)})")
    light = levels[0] if levels else None
    if light is not None and light.mean_streams > 0 and light.developers:
        per_dev = light.mean_streams / light.developers
        line = (
            f"per active developer: {light.mean_rps / light.developers:.2f} calls/s, "
            f"{light.tokens_out_per_s / light.developers:.1f} output tokens/s, "
            f"{per_dev:.3f} streams in flight"
        )
        if concurrency_limit:
            line += (
                f"; a limit of {concurrency_limit} streams serves about {concurrency_limit / per_dev:.0f} "
            )
            line += "developers typing at once"
        lines.append(line)
    return "\n".join(lines)


__all__ = ["format_report"]
