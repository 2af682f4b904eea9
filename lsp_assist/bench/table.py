"""The bench's table: per scenario, each figure's p50 (p90) per server, side by side, and the
floor: what the model itself took to write the first line and the whole stream (an answer can
come no sooner than the first; the second is what a server waiting for the whole stream pays).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from lsp_assist.bench.figures import Figures, Floor, p50, p90
from lsp_assist.bench.scenarios import FOLLOWS, MISSES, SCENARIOS

LABEL_W = 44
CELL_W = 18


@dataclass
class ServerResult:
    name: str
    request: str  # "inline" | "completion"
    figures: dict[str, Figures] = field(default_factory=dict)
    why_not: str = ""  # set when the server was not run (or failed)
    api: str = "openai"  # the model API it was expected to call
    called: tuple[str, ...] = ()  # the model APIs it called ("completions", "chat", "tabby")


def ms(values: list[float]) -> str:
    a, b = p50(values), p90(values)
    return "-" if a is None or b is None else f"{a:.1f} ({b:.1f})"


def calls(values: list[int]) -> str:
    return f"{statistics.mean(values):.2f} ({max(values)})" if values else "-"


Cell = Callable[[Figures], str]
# (row label, the cell from a scenario's figures, the floor: "", "0" or "answer")
_MISS_ROWS: tuple[tuple[str, Cell, str], ...] = (
    ("before the model call", lambda f: ms(f.before), "0"),
    ("after the needed token", lambda f: ms(f.after), "0"),
    ("server overhead", lambda f: ms(f.overhead), "0"),
    ("answer", lambda f: ms(f.answer), "answer"),
)
_FOLLOW_ROWS: tuple[tuple[str, Cell, str], ...] = (
    ("answer", lambda f: ms(f.answer), ""),
    ("server overhead", lambda f: ms(f.overhead), "0"),
    ("model calls, mean (max)", lambda f: calls(f.calls), ""),
    ("  of them prefetch", lambda f: calls(f.background), ""),
)
_BURST_ROWS: tuple[tuple[str, Cell, str], ...] = (
    ("model calls per burst, mean (max)", lambda f: calls(f.calls), ""),
    ("  of them prefetch", lambda f: calls(f.background), ""),
    ("the last key's answer", lambda f: ms(f.answer), "answer"),
)


def _rows(scenario: str) -> tuple[tuple[str, Cell, str], ...]:
    if scenario in MISSES:
        return _MISS_ROWS
    return _FOLLOW_ROWS if scenario in FOLLOWS else _BURST_ROWS


def _line(label: str, cells: list[str]) -> str:
    return f"{label:<{LABEL_W}}" + "".join(f"{c:>{CELL_W}}" for c in cells)


def format_table(results: list[ServerResult], floor: Floor, header: str) -> str:
    ran = [r for r in results if not r.why_not]
    answer_floor = _floor(floor)
    out = [header, "p50 (p90) in ms; floor: the model's own first line / full stream"]
    out.append(_line("", [r.name for r in ran] + ["floor"]))
    for scenario in SCENARIOS:
        out.append(scenario)
        for label, cell, floor_kind in _rows(scenario):
            value = answer_floor if floor_kind == "answer" else floor_kind
            out.append(_line("  " + label, [cell(r.figures[scenario]) for r in ran] + [value]))
    out.append(_line("model: first line / full stream", [] if not ran else [""] * len(ran) + [answer_floor]))
    out.extend(_notes(results, floor))
    return "\n".join(out)


def _floor(floor: Floor) -> str:
    first, full = p50(floor.first_line), p50(floor.full)
    if first is None:
        return "-"
    if full is None:
        return f"{first:.1f}" + ("" if floor.expected_full is None else f" / {floor.expected_full:.1f}*")
    return f"{first:.1f} / {full:.1f}"


def _notes(results: list[ServerResult], floor: Floor) -> list[str]:
    notes: list[str] = []
    if not floor.full and floor.expected_full is not None:
        notes.append("* the full stream from the model's settings: no stream was read to its end")
    for r in results:
        if r.why_not:
            notes.append(f"{r.name}: not run ({r.why_not})")
            continue
        expected = ("tabby",) if r.api == "tabby" else ("completions", "chat")
        if any(api not in expected for api in r.called):
            notes.append(f"{r.name}: expected to call the {r.api} API, called {', '.join(r.called)}")
        if r.request == "completion":
            notes.append(f"{r.name}: textDocument/completion, one kind of request (Automatic = Invoked)")
        for scenario in SCENARIOS:
            f = r.figures[scenario]
            if f.empty or f.unanswered:
                notes.append(
                    f"{r.name}, {scenario}: {f.empty} of {len(f.answer)} answers empty,"
                    f" {f.unanswered} unanswered"
                )
    return notes
