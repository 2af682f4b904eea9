"""The docs stay a reference a newcomer can follow: every relative link and anchor in the
README, `docs/`, `benchmarks/results/` and the CHANGELOG resolves, every `docs/*.md` a code
comment names exists, `docs/design.md` names every package, `docs/benchmarks.md` stays short
(today's figures; the dated runs live in `benchmarks/results/`), and a CHANGELOG bullet is
one line (its figures are linked, not told)."""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "lsp_assist"

#: `[text](target)`; an image's `![alt](target)` matches too. Titles (`"..."`) are not used here.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
#: A path to a doc as code comments write it (`docs/benchmarks.md`, `docs/design.md`).
DOC_MENTION = re.compile(r"\bdocs/[\w.-]+\.md\b")


def _documents() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    found += sorted((ROOT / "benchmarks" / "results").glob("*.md"))
    return [p for p in found if p.exists()]


def _prose_lines(path: Path) -> list[str]:
    """The file's lines outside fenced code blocks (a link or heading in code is not one)."""
    lines: list[str] = []
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


@cache
def _anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    anchors: set[str] = set()
    for line in _prose_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        slug = _slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return frozenset(anchors)


def _broken_links(path: Path) -> list[str]:
    broken: list[str] = []
    for line in _prose_lines(path):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)} -> {target}"
            if not linked.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{where} (no such heading)")
    return broken


def test_every_relative_link_and_anchor_resolves() -> None:
    broken = [b for p in _documents() for b in _broken_links(p)]
    assert broken == []


def test_every_doc_a_source_file_names_exists() -> None:
    missing: list[str] = []
    for folder in ("lsp_assist", "benchmarks", "tests"):
        for source in sorted((ROOT / folder).rglob("*.py")):
            for mention in set(DOC_MENTION.findall(source.read_text(encoding="utf-8"))):
                if not (ROOT / mention).exists():
                    missing.append(f"{source.relative_to(ROOT)}: {mention}")
    assert missing == []


def test_design_names_every_package() -> None:
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    inits = [init.parent for init in PACKAGE.rglob("__init__.py") if init.parent != PACKAGE]
    packages = sorted(f"{folder.relative_to(PACKAGE)}/" for folder in inits)
    assert [p for p in packages if f"`{p}`" not in design] == []


def test_benchmarks_page_holds_only_todays_figures() -> None:
    lines = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250


def test_every_changelog_bullet_is_one_line() -> None:
    lines = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
    continued = [
        f"{n + 2}: {line[:60]}"
        for n, (before, line) in enumerate(itertools.pairwise(lines))
        if before.startswith(("* ", "- ")) and line.startswith(" ") and line.strip()
    ]
    assert continued == []
