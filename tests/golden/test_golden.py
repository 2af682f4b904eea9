"""Golden post-processing cases: input with a cursor marker, raw model output, expected text.

Each file under fixtures/golden/<language>/ is one test. The context is built by the real
engine (so the mode, the stop sequences and the line around the cursor are the ones the
server would use), then the raw output is cleaned both in one piece and streamed one
character at a time; both must give the expected suggestion.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lsp_assist.context.builder import ContextEngine
from lsp_assist.domain import Cursor
from lsp_assist.pipeline.postprocess import StreamAssembler, clean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "golden"
MARKERS = ("█", "<|cursor|>")
LANGUAGE_IDS = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "go": "go",
    "rust": "rust",
}
EXTENSIONS = {"python": "py", "javascript": "js", "typescript": "ts", "go": "go", "rust": "rs"}

CASES = sorted(ROOT.glob("*/*.toml")) + sorted(ROOT.glob("*/*.json"))


def _load(path: Path) -> dict[str, str]:
    if path.suffix == ".json":
        import json

        data: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
        return data
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _split(text: str) -> tuple[str, Cursor]:
    for marker in MARKERS:
        i = text.find(marker)
        if i >= 0:
            clean_text = text.replace(marker, "", 1)
            row = text.count("\n", 0, i)
            col = i - (text.rfind("\n", 0, i) + 1)
            return clean_text, Cursor(row, col)
    raise AssertionError("no cursor marker in input")


def test_cases_exist_for_every_language() -> None:
    for lang in LANGUAGE_IDS:
        assert len(list((ROOT / lang).glob("*.toml"))) >= 8, lang


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_golden(path: Path) -> None:
    case = _load(path)
    lang = path.parent.name
    text, cursor = _split(case["input"])
    engine = ContextEngine()
    ctx = engine.build_from_text(
        text, LANGUAGE_IDS.get(lang, lang), f"/golden/case.{EXTENSIONS.get(lang, 'txt')}", cursor, 4000
    )
    if "mode" in case:
        from dataclasses import replace

        ctx = replace(ctx, mode=case["mode"])  # type: ignore[arg-type]
    assert clean(ctx, case["raw"]) == case["expected"]
    asm = StreamAssembler(ctx, ctx.mode)
    for ch in case["raw"]:
        if asm.feed(ch):
            break
    assert asm.text() == case["expected"]
