"""The member-name benchmark's pieces that need no model: positions and the oracle."""

from __future__ import annotations

from pathlib import Path

from benchmarks.member_names import Position, Tally, positions_in, score

CODE = """import json


class Base:
    def __init__(self):
        self.size = 1


class Box(Base):
    def grow(self):
        self.size += json.loads("1")
        return self.describe()  # a name no class here defines

    # self.in_comment
"""


def test_positions_sit_after_the_dot_and_the_oracle_knows_the_names(tmp_path: Path) -> None:
    path = tmp_path / "box.py"
    path.write_text(CODE)
    found = {(p.receiver, p.member): p for p in positions_in(path)}
    assert set(found) == {("self", "size"), ("json", "loads"), ("self", "describe")}  # not the comment
    size = found[("self", "size")]
    cut_line = size.text.splitlines()[size.line]
    assert cut_line == "        self." and size.col == len(cut_line)
    assert size.rest == 'size += json.loads("1")'
    assert size.defined is not None and {"size", "grow"} <= size.defined  # with Base's
    assert "describe" not in size.defined
    assert "loads" in (found[("json", "loads")].defined or ())


def test_scoring_counts_undefined_names_only_where_the_oracle_judges() -> None:
    t = Tally()
    judged = Position(Path("x.py"), "", 0, 0, "self", "size", "size + 1", frozenset({"size"}))
    unjudged = Position(Path("x.py"), "", 0, 0, "obj", "size", "size", None)
    score(t, judged, "size + 1")
    score(t, judged, "sizes(")
    score(t, unjudged, "whatever")
    assert (t.judged, t.undefined, t.member_exact, t.line_exact) == (2, 1, 1, 1)
