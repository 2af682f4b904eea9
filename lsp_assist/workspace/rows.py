"""The stored forms of an indexed file: its row, its definitions, and a copy of another file."""

from __future__ import annotations

from dataclasses import dataclass

#: One definition as stored: (name, kind, start, end, sig_start, sig_end, signature, container).
DefRow = tuple[str, str, int, int, int, int, str, str | None]
#: A file stored as a copy of another with the same bytes: (path, mtime_ns, size, sha, language).
Copy = tuple[str, int, int, str, str]


@dataclass(frozen=True)
class FileRow:
    """Everything indexed of one file, in its stored form (built by `parse_worker`)."""

    path: str
    mtime_ns: int
    size: int
    sha: str
    language: str
    outline: bytes  # zlib(JSON of `outline.entries_to_rows`)
    refs: bytes  # zlib("\n".join(the names the file spells))
    imports: str  # JSON list of its import statements
    defs: tuple[DefRow, ...]
