"""Client column units <-> code points: surrogate pairs, multi-byte chars, past the end."""

from __future__ import annotations

import pytest

from lsp_assist.documents.positions import from_code_points, normalize_encoding, to_code_points

LINE = "a😀é b"  # a, U+1F600 (2 UTF-16 units, 4 bytes), é (2 bytes), space, b


@pytest.mark.parametrize(
    ("encoding", "column", "expected"),
    [
        ("utf-16", 0, 0),
        ("utf-16", 1, 1),
        ("utf-16", 2, 1),  # inside the surrogate pair: round down to the emoji's start
        ("utf-16", 3, 2),
        ("utf-16", 4, 3),
        ("utf-16", 99, 5),  # past the end clamps
        ("utf-8", 1, 1),
        ("utf-8", 3, 1),  # inside the 4-byte emoji
        ("utf-8", 5, 2),
        ("utf-8", 6, 2),  # inside é
        ("utf-8", 7, 3),
        ("utf-32", 4, 4),
        ("utf-32", 50, 5),
        ("utf-16", -3, 0),
    ],
)
def test_to_code_points(encoding: str, column: int, expected: int) -> None:
    assert to_code_points(LINE, column, encoding) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("encoding", "expected"), [("utf-16", [0, 1, 3, 4, 5, 6]), ("utf-8", [0, 1, 5, 7, 8, 9])]
)
def test_round_trip(encoding: str, expected: list[int]) -> None:
    got = [from_code_points(LINE, c, encoding) for c in range(len(LINE) + 1)]  # type: ignore[arg-type]
    assert got == expected
    for cp, units in enumerate(got):
        assert to_code_points(LINE, units, encoding) == cp  # type: ignore[arg-type]


def test_lone_surrogate_counts_one_utf16_unit_and_three_bytes() -> None:
    line = "x\ud800y"
    assert to_code_points(line, 2, "utf-16") == 2
    assert from_code_points(line, 2, "utf-8") == 4


def test_ascii_fast_path_and_clamp() -> None:
    assert to_code_points("abc", 10, "utf-8") == 3
    assert from_code_points("abc", 10, "utf-16") == 3


def test_normalize_encoding() -> None:
    assert normalize_encoding("UTF-8") == "utf-8"
    assert normalize_encoding(None) == "utf-16"
    assert normalize_encoding("utf-32") == "utf-32"
