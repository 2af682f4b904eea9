"""The next-edit corpus miner, and the committed corpus it wrote (provenance, places)."""

from __future__ import annotations

import gzip
import hashlib
import json

from benchmarks.next_edit import load
from benchmarks.next_edit_corpus import FRESH_OUT, OUT, TUNE2_OUT, file_changes, span_change
from benchmarks.next_edit_score import (
    FRESH,
    TUNING,
    TUNING_NEW,
    TUNING_OLD,
    VALIDATION,
    Place,
    figures,
    judge,
    scopes,
)
from benchmarks.next_edit_session import _shifted, keys_for


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


def test_file_changes_reports_every_removed_line_as_touched() -> None:
    diff = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -9,2 +9 @@\n-c = 3\n-d = 4\n+c = 5\n"
    touched: dict[str, set[int]] = {}
    assert file_changes(diff, touched) == {}
    assert touched == {"m.py": {8, 9}}


def test_every_committed_case_names_its_source_and_matches_its_file() -> None:
    cases = load(0)
    assert len(cases) >= 700
    assert {c["repo"] for c in cases} == set(TUNING) | set(VALIDATION) | set(FRESH)
    for c in cases:
        assert len(c["commit"]) == 40 and c["path"].endswith(".py")
        lines = c["before"].split("\n")
        assert len(c["places"]) == 1 if c.get("control") else len(c["places"]) >= 2
        for p in c["places"]:
            assert lines[p["line"]][p["col"] : p["col"] + len(p["old"])] == p["old"]


def test_every_repository_has_controls_whose_old_text_stays_elsewhere() -> None:
    cases = load(0)
    for repo in set(TUNING) | set(VALIDATION) | set(FRESH):
        controls = [c for c in cases if c["repo"] == repo and c.get("control")]
        assert len(controls) >= 10, repo
        for c in controls:
            p = c["places"][0]
            rest = c["before"].split("\n")
            del rest[p["line"]]
            assert any(p["old"] in line for line in rest)


def test_the_later_halves_are_files_of_their_own_and_the_first_is_unchanged() -> None:
    # The figures of the first six repositories stay comparable with earlier runs.
    assert hashlib.sha256(OUT.read_bytes()).hexdigest().startswith("7558ff182faa9cf6")
    first = json.loads(gzip.decompress(OUT.read_bytes()))["cases"]
    fresh = json.loads(gzip.decompress(FRESH_OUT.read_bytes()))["cases"]
    tune2 = json.loads(gzip.decompress(TUNE2_OUT.read_bytes()))["cases"]
    assert {c["repo"] for c in first} == set(TUNING_OLD) | set(VALIDATION)
    assert {c["repo"] for c in fresh} == set(FRESH)
    assert {c["repo"] for c in tune2} == set(TUNING_NEW)
    # Appended last: the earlier files' cases keep their index in the benchmark.
    assert load(0)[: len(first) + len(fresh)] == first + fresh


def test_judge_scores_by_the_row_left_and_counts_false_alarms_on_controls() -> None:
    case = {
        "before": "a = cookielib\nb = cookielib\n",
        "places": [
            {"line": 0, "col": 4, "old": "cookielib", "new": "cookiejar"},
            {"line": 1, "col": 4, "old": "cookielib", "new": "cookiejar"},
        ],
    }
    short = {
        "range": {"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 13}},
        "text": "jar",
    }
    wrong = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "z"}
    control = {**case, "places": case["places"][:1], "control": True, "rows": [[0, "a = cookiejar"]]}
    outcomes = [
        judge(0, case, short),
        judge(1, case, wrong),
        judge(2, case, None),
        judge(3, control, short),
        judge(4, control, None),
    ]
    f = figures(outcomes)
    assert (f.cases, f.proposed, f.correct, f.next) == (3, 2, 1, 1)
    assert (f.controls, f.false_alarms, f.false_alarm_rate) == (2, 1, 0.5)


def test_scopes_list_each_repository_then_each_half() -> None:
    cases = [
        {"repo": "pallets/jinja"},
        {"repo": "encode/httpx"},
        {"repo": "psf/requests"},
        {"repo": "pallets/click"},
        {"repo": "hynek/structlog"},
    ]
    labels = [label for label, _ in scopes(cases)]
    assert labels == [
        "tune: hynek/structlog",
        "tune: pallets/click",
        "tune: psf/requests",
        "valid: encode/httpx",
        "fresh: pallets/jinja",
        "TUNING half",
        "VALIDATION half",
        "FRESH half",
        "tuning: old 3",
        "tuning: new 4",
        "all",
    ]


def test_a_session_types_a_place_key_by_key_and_shifts_the_places_after_it() -> None:
    p = Place(0, 4, "rate", "tax_rate")
    keys, pos = keys_for("x = rate + rate", p)
    assert keys[0] == (0, 4, 8, "t") and [k[3] for k in keys[1:]] == list("ax_rate")
    assert pos == 12
    later = Place(0, 11, "rate", "tax_rate")
    other = Place(1, 11, "rate", "tax_rate")
    assert _shifted([later, other], 0, 4, 4) == [Place(0, 15, "rate", "tax_rate"), other]
