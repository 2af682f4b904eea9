"""Cursor positions of four kinds in real standard-library files, each reached by the
keystroke an editor would send last (for `benchmarks/latency.py`).

Kinds:
- "empty body": a `def` line whose body is gone, Enter typed at its end (the new line is
  indented one level deeper);
- "fresh line": Enter at the end of a non-blank line mid-file, the new line indented like
  the next (real code after the cursor);
- "after ':'": Enter at the end of a block opener (`if ...:`, `for ...:`, ...);
- "call args": `(` typed after a callee whose arguments are gone, the editor closing it
  (one change inserting `()`, the cursor between).
Each position is the document before that last keystroke, the change, and the cursor
after it. Positions are spread evenly over each file; the same files and counts give the
same positions on every run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

KINDS = ("empty body", "fresh line", "after ':'", "call args")
FILES = ("json/decoder.py", "textwrap.py")

_OPENERS = ("if ", "elif ", "else:", "for ", "while ", "with ", "try:", "except", "finally:")
_CONTINUED = (",", "(", "[", "{", "\\", ":", "=")
_CALL = re.compile(r"\b([A-Za-z_][\w.]*)\(([^()'\"]+)\)")


@dataclass(frozen=True)
class Position:
    kind: str
    file: str
    row: int  # the row of the original file the position is at (for the report)
    text: str  # the document before the last keystroke
    change: tuple[int, int, str]  # (line, character, inserted text): the last keystroke
    cursor: tuple[int, int]  # (line, character) after it


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _code(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith(("#", '"', "'", "@", ")", "]", "}")) and '"""' not in s


def _spread(found: list[Position], n: int) -> list[Position]:
    if len(found) <= n:
        return found
    step = len(found) / n
    return [found[int(i * step + step / 2)] for i in range(n)]


def _in_docstring_rows(lines: list[str]) -> set[int]:
    rows: set[int] = set()
    inside = False
    for i, line in enumerate(lines):
        quotes = line.count('"""') + line.count("'''")
        if inside or quotes:
            rows.add(i)
        if quotes % 2:
            inside = not inside
    return rows


def positions(path: Path, name: str, per_kind: int) -> list[Position]:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    prose = _in_docstring_rows(lines)
    found: dict[str, list[Position]] = {k: [] for k in KINDS}
    for i in range(1, len(lines) - 1):
        line, nxt = lines[i], lines[i + 1]
        if i in prose or not _code(line):
            continue
        s = line.strip()
        deeper = len(_indent(nxt)) > len(_indent(line)) and _code(nxt)
        if s.startswith("def ") and s.endswith(":") and deeper:
            # The body goes (its blank tail stays); Enter at the end of the def line.
            end = i + 1
            while end < len(lines) and (
                not lines[end].strip() or len(_indent(lines[end])) > len(_indent(line))
            ):
                end += 1
            while end > i + 1 and not lines[end - 1].strip():
                end -= 1
            doc = "\n".join(lines[: i + 1] + lines[end:])
            ins = "\n" + _indent(line) + "    "
            found["empty body"].append(
                Position("empty body", name, i, doc, (i, len(line), ins), (i + 1, len(ins) - 1))
            )
        elif s.startswith(_OPENERS) and s.endswith(":") and deeper:
            ins = "\n" + _indent(nxt)
            found["after ':'"].append(
                Position("after ':'", name, i, text, (i, len(line), ins), (i + 1, len(ins) - 1))
            )
        elif (
            _code(nxt)
            and i + 1 not in prose
            and _indent(nxt) == _indent(line)
            and not s.endswith(_CONTINUED)
            and _indent(line)
        ):
            ins = "\n" + _indent(nxt)
            found["fresh line"].append(
                Position("fresh line", name, i, text, (i, len(line), ins), (i + 1, len(ins) - 1))
            )
        m = _CALL.search(line)
        if m is not None and not s.startswith(("def ", "class ")):
            # The arguments go; `(` typed after the callee, the editor closing it.
            at = m.start(2) - 1
            doc_line = line[:at] + line[m.end(2) + 1 :]
            doc = "\n".join([*lines[:i], doc_line, *lines[i + 1 :]])
            found["call args"].append(Position("call args", name, i, doc, (i, at, "()"), (i, at + 1)))
    return [p for k in KINDS for p in _spread(found[k], per_kind)]


def stdlib_positions(per_kind: int, files: tuple[str, ...] = FILES) -> list[Position]:
    import json

    lib = Path(json.__file__).resolve().parents[1]
    out: list[Position] = []
    for name in files:
        out.extend(positions(lib / name, name, per_kind))
    return out


def typing_lines(path: Path, count: int, keys: int = 12) -> list[tuple[str, int, str]]:
    """`count` real statements of `path` to type again (for the bursts), spread over the file:
    (the document with the statement's row left as its indentation only, the row, the
    statement's first `keys` characters after the indentation)."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    prose = _in_docstring_rows(lines)
    rows = [
        i
        for i, line in enumerate(lines)
        if i not in prose
        and _code(line)
        and _indent(line)
        and len(line.strip()) >= keys + 2
        and not lines[i - 1].rstrip().endswith((",", "(", "[", "{", "\\"))
    ]
    step = max(1, len(rows) // max(1, count))
    out = []
    for i in rows[step // 2 :: step][:count]:
        ind = _indent(lines[i])
        doc = "\n".join([*lines[:i], ind, *lines[i + 1 :]])
        out.append((doc, i, lines[i].strip()[:keys]))
    return out
