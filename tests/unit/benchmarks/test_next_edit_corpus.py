"""The next-edit corpus miner, and the committed corpus it wrote (provenance, places)."""

from __future__ import annotations

from benchmarks.next_edit import Tally, load, places_after_first, score
from benchmarks.next_edit_corpus import file_changes, span_change


def test_span_change_widens_to_whole_identifiers() -> None:
    assert span_change("x = cookielib.Jar()", "x = cookiejar.Jar()") == (4, "cookielib", "cookiejar")
    assert span_change("f(a, 8)", "f(a, 9)") == (5, "8", "9")
    assert span_change("    x = 1", "  x = 1") is None  # whitespace only


def test_file_changes_pairs_removed_and_added_lines() -> None:
    diff = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
        "@@ -3,2 +3,2 @@\n-a = old(1)\n-b = old(2)\n+a = new(1)\n+b = new(2)\n"
        "@@ -9 +9,2 @@\n-c = 3\n+c = 4\n+d = 5\n"
    )
    assert file_changes(diff) == {"m.py": [(2, "a = old(1)", "a = new(1)"), (3, "b = old(2)", "b = new(2)")]}


def test_every_committed_case_names_its_source_and_matches_its_file() -> None:
    cases = load(0)
    assert len(cases) >= 100
    assert {c["repo"] for c in cases} == {"psf/requests", "pallets/click", "encode/httpx"}
    for c in cases:
        assert len(c["commit"]) == 40 and c["path"].endswith(".py")
        lines = c["before"].split("\n")
        assert len(c["places"]) >= 2
        for p in c["places"]:
            assert lines[p["line"]][p["col"] : p["col"] + len(p["old"])] == p["old"]


def test_score_judges_an_edit_by_the_row_it_leaves() -> None:
    case = {
        "before": "a = cookielib\nb = cookielib\n",
        "places": [
            {"line": 0, "col": 4, "old": "cookielib", "new": "cookiejar"},
            {"line": 1, "col": 4, "old": "cookielib", "new": "cookiejar"},
        ],
    }
    first, others, lines = places_after_first(case)
    tally = Tally("t")
    short = {
        "range": {"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 13}},
        "text": "jar",
    }
    score(tally, short, lines, first, others)
    wrong = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "z"}
    score(tally, wrong, lines, first, others)
    score(tally, None, lines, first, others)
    assert (tally.cases, tally.proposed, tally.correct, tally.next) == (3, 2, 1, 1)
