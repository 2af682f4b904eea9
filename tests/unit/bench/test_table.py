"""The bench's figures and table: the split at the model, p50/p90, the floor, the notes."""

from __future__ import annotations

from lsp_assist.bench.figures import Answer, Calls, Figures, Floor, p50, p90, stream_of
from lsp_assist.bench.model import StreamRecord
from lsp_assist.bench.scenarios import SCENARIOS
from lsp_assist.bench.table import ServerResult, format_table


def test_percentiles() -> None:
    values = [float(v) for v in range(1, 11)]
    assert p50(values) == 5.5 and p90(values) == 9.0
    assert p50([]) is None and p90([]) is None
    assert p90([3.0]) == 3.0


def test_an_answer_is_split_at_the_stream_it_came_from() -> None:
    answer = Answer(sent=10.0, received=10.3, text="return x")
    before = StreamRecord("completions", t_read=9.0, t_first_line=9.1)  # an earlier request's
    ours = StreamRecord("completions", t_read=10.002, t_first_line=10.298, t_last=10.4)
    fig = Figures()
    fig.add(answer, [before, ours], Calls(1, 0))
    assert stream_of([before, ours], answer) is ours
    assert round(fig.before[0], 3) == 2.0 and round(fig.after[0], 3) == 2.0
    assert round(fig.overhead[0], 3) == 4.0 and round(fig.answer[0], 3) == 300.0
    assert fig.calls == [1] and fig.empty == 0


def test_an_answer_from_no_stream_is_all_overhead() -> None:
    fig = Figures()
    fig.add(Answer(sent=1.0, received=1.002, text=""), [], Calls(0, 0))
    assert fig.before == [] and round(fig.overhead[0], 3) == 2.0 and fig.empty == 1


def result(name: str, answer_ms: float) -> ServerResult:
    figures = {s: Figures() for s in SCENARIOS}
    for s in SCENARIOS:
        sent = 100.0
        stream = StreamRecord("completions", t_read=sent + 0.001, t_first_line=sent + 0.2, t_last=sent + 0.3)
        figures[s].add(Answer(sent, sent + answer_ms / 1000.0, "x"), [stream], Calls(2, 1))
    return ServerResult(name, "inline", figures)


def test_the_table_has_every_scenario_each_server_and_the_floor() -> None:
    floor = Floor.of([StreamRecord("completions", t_read=0.0, t_first_line=0.2, t_last=0.3)])
    skipped = ServerResult("tabby-agent", "completion", why_not="not found")
    out = format_table([result("one", 205.0), result("two", 230.0), skipped], floor, "HEADER")
    lines = out.splitlines()
    assert lines[0] == "HEADER"
    head = lines[2].split()
    assert head == ["one", "two", "floor"]
    for s in SCENARIOS:
        assert s in lines
    answers = [line for line in lines if line.strip().startswith("answer")]
    assert answers and all(line.rstrip().endswith("200.0 / 300.0") for line in answers[:5])
    assert "205.0 (205.0)" in answers[0] and "230.0 (230.0)" in answers[0]
    assert any("of them prefetch" in line and "1.00 (1)" in line for line in lines)
    assert "tabby-agent: not run (not found)" in lines


def test_the_full_stream_floor_falls_back_to_the_settings() -> None:
    floor = Floor(expected_full=312.0)
    floor.extend(Floor.of([StreamRecord("tabby", t_read=0.0, t_first_line=0.2)]))
    out = format_table([result("one", 205.0)], floor, "H")
    assert "200.0 / 312.0*" in out and "* the full stream from the model's settings" in out


def test_a_server_calling_another_api_than_expected_is_noted() -> None:
    r = result("mine", 205.0)
    r.api, r.called = "tabby", ("completions",)
    out = format_table([r], Floor(), "H")
    assert "mine: expected to call the tabby API, called completions" in out
