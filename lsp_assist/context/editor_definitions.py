"""Definitions the editor's own language server resolved (pyright, gopls, tsserver...).

The VS Code and Neovim clients ask the language's server (`textDocument/definition`) where
a few names near the cursor are defined, read the first lines there and send them with
the `lspAssist/definitions` notification::

    {"uri": "file:///ws/app.py", "version": 7,
     "definitions": [{"name": "compute_total", "uri": "file:///ws/billing.py",
                      "range": {"start": {"line": 3, "character": 4}, "end": {...}},
                      "text": "def compute_total(prices, rate):\\n    ..."}]}

`EditorDefinitionStore` keeps them per open document: bounded (documents, entries per
document, characters and lines per entry), merged across notifications (newest first),
dropped on close and, per entry, once the document is `VERSION_TOLERANCE` edits past the
version it was sent for. A definition in a file the data boundary excludes is dropped when
it arrives and again when a prompt is built (the policy may have changed meanwhile); a
definition without a file path cannot be judged and is dropped too. The text is never
logged: only counts.

`pick_editor_definitions` ranks them for one request: names the rows around the cursor
use first, then names the enclosing function uses, then the cursor line's own names;
names the code no longer uses are left out. Whole lines only, deduplicated by name and
file and by the rows they cover, rendered one snippet per file, files by path, entries
by line, so equal inputs give the same bytes.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsp_assist.documents.store import path_from_uri
from lsp_assist.domain import Snippet
from lsp_assist.languages import language_id_for_path
from lsp_assist.structure.outline import FileOutline, outline_of
from lsp_assist.structure.symbols import Symbol, SymbolIndex, extract_symbols, parse_text

MAX_DOCUMENTS = 64  # documents with definitions kept (least recently updated dropped first)
MAX_PER_DOCUMENT = 32  # definitions kept per document (oldest dropped first)
MAX_PER_NOTIFICATION = 64  # entries read from one notification; the rest are ignored
MAX_TEXT_CHARS = 480  # per definition, cut at a line end
MAX_TEXT_LINES = 8
MAX_NAME_CHARS = 128
VERSION_TOLERANCE = 100  # edits of the document after which a definition is dropped
EDITOR_SHARE = 0.6  # of the cross-file budget at most; the outlines get the rest
NEAR_SCORE = 3.0
USED_SCORE = 2.0
CURSOR_LINE_SCORE = 1.5

MAX_NEW_FILES = 4  # files outlined per notification (read and parsed off the event loop)
MAX_EDITOR_FILES = 64  # files the index holds because the editor resolved into them
MAX_FILE_BYTES = 512_000

# Files of names every file sees without an import (a language's built-ins): a definition
# there tells the model nothing it does not know.
AMBIENT_FILES = re.compile(r"(^|/)(builtins\.pyi|__builtins__\.pyi|lib(\.[\w-]+)*\.d\.ts)$")

REASON = "editor"  # `Snippet.reason` of what the editor's language server resolved


@dataclass(frozen=True)
class EditorDefinition:
    """One definition as the editor sent it, capped; `row` is 0-based."""

    name: str
    path: str
    row: int
    text: str
    version: int  # the version of the requesting document it was resolved for


def cap_text(text: str, max_chars: int = MAX_TEXT_CHARS, max_lines: int = MAX_TEXT_LINES) -> str:
    """At most `max_lines` whole lines and `max_chars` characters, never cut mid-line
    (a first line longer than `max_chars` gives an empty text: the entry is dropped)."""
    out: list[str] = []
    used = 0
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[:max_lines]:
        line = line.rstrip()
        cost = len(line) + (1 if out else 0)
        if used + cost > max_chars:
            break
        out.append(line)
        used += cost
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def _normpath(path: str) -> str:
    return os.path.normpath(path)


def parse_notification(params: Any) -> tuple[str, int, list[EditorDefinition], int]:
    """(uri, version, definitions, entries dropped as malformed) from the notification's
    params; raises ValueError (no content in the message) when the envelope is unusable."""
    if not isinstance(params, Mapping):
        raise ValueError("params must be an object")
    uri = params.get("uri")
    version = params.get("version")
    raw = params.get("definitions")
    if not isinstance(uri, str) or not uri:
        raise ValueError("uri must be a string")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValueError("version must be an integer")
    if not isinstance(raw, list):
        raise ValueError("definitions must be a list")
    out: list[EditorDefinition] = []
    bad = 0
    for item in raw[:MAX_PER_NOTIFICATION]:
        d = _one(item, version)
        if d is None:
            bad += 1
        else:
            out.append(d)
    return uri, version, out, bad


def _one(item: Any, version: int) -> EditorDefinition | None:
    if not isinstance(item, Mapping):
        return None
    name, uri, text, rng = item.get("name"), item.get("uri"), item.get("text"), item.get("range")
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_CHARS or not isinstance(text, str):
        return None
    if not isinstance(uri, str):
        return None
    try:
        row = int(rng["start"]["line"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        return None
    path = path_from_uri(uri)
    if path is None or row < 0:
        return None  # no file path: the data boundary cannot judge it (fails closed)
    if AMBIENT_FILES.search(path):
        return None
    capped = cap_text(text)
    if not capped.strip():
        return None
    return EditorDefinition(name, _normpath(path), row, capped, version)


class EditorDefinitionStore:
    """What the editor sent, per document URI (bounded; see the module docstring)."""

    def __init__(self, excluded: Callable[[str], bool] | None = None) -> None:
        self._docs: OrderedDict[str, OrderedDict[tuple[str, str], EditorDefinition]] = OrderedDict()
        self._generation: dict[str, int] = {}
        self._counter = 0
        # True for a path the data boundary excludes; set by the runtime from governance.
        self.excluded: Callable[[str], bool] = excluded or (lambda _path: False)

    def update(self, uri: str, version: int, defs: Iterable[EditorDefinition]) -> tuple[int, int]:
        """Merge `defs` into the document's set; (kept, dropped as excluded)."""
        kept = dropped = 0
        entries = self._docs.get(uri)
        if entries is None:
            entries = OrderedDict()
            self._docs[uri] = entries
        self._docs.move_to_end(uri)
        for d in defs:
            if self.excluded(d.path):
                dropped += 1
                continue
            key = (d.name, d.path)
            entries.pop(key, None)
            entries[key] = d  # newest last
            kept += 1
        while len(entries) > MAX_PER_DOCUMENT:
            entries.popitem(last=False)
        while len(self._docs) > MAX_DOCUMENTS:
            gone, _ = self._docs.popitem(last=False)
            self._generation.pop(gone, None)
        if not entries:
            self._docs.pop(uri, None)
        self._bump(uri)
        return kept, dropped

    def forget(self, uri: str) -> None:
        """The document closed: its definitions go."""
        if self._docs.pop(uri, None) is not None:
            self._bump(uri)
        self._generation.pop(uri, None)

    def generation(self, uri: str) -> int:
        """Changes whenever the document's set changes (for prompt memo keys)."""
        return self._generation.get(uri, 0)

    def current(self, uri: str, version: int) -> list[EditorDefinition]:
        """The document's definitions still valid at `version`, newest first; stale ones
        (more than `VERSION_TOLERANCE` edits old) and newly excluded ones are dropped."""
        entries = self._docs.get(uri)
        if not entries:
            return []
        stale = [k for k, d in entries.items() if version - d.version > VERSION_TOLERANCE]
        for k in stale:
            del entries[k]
        if stale:
            self._bump(uri)
        return [d for d in reversed(entries.values()) if not self.excluded(d.path)]

    def has(self, uri: str) -> bool:
        return bool(self._docs.get(uri))

    def count(self) -> int:
        return sum(len(e) for e in self._docs.values())

    def _bump(self, uri: str) -> None:
        self._counter += 1
        self._generation[uri] = self._counter


@dataclass(frozen=True)
class Picked:
    """What `pick_editor_definitions` chose: snippets, and the names per file (for labels)."""

    snippets: list[Snippet]
    names: dict[str, list[str]]
    covered: dict[str, frozenset[str]]  # names per path, for de-duplicating the outlines

    @property
    def chars(self) -> int:
        return sum(len(s.text) for s in self.snippets)


def pick_editor_definitions(
    defs: Sequence[EditorDefinition],
    *,
    current_path: str,
    near: frozenset[str],
    used: frozenset[str],
    cursor_line: frozenset[str],
    budget: int,
) -> Picked:
    """The definitions worth their characters within `budget`, one snippet per file.

    A definition lsp-assist's own outline of that file has is not offered (the source
    filters it out first, `sources/editor.py`): measured (benchmarks/editor_definitions.py),
    the editor's first lines in place of outline entries cost cross-file recall."""
    scored = _scored(defs, _normpath(current_path), (near, used, cursor_line))
    return _snippets(_taken(scored, budget))


def _scored(
    defs: Sequence[EditorDefinition], here: str, names: tuple[frozenset[str], frozenset[str], frozenset[str]]
) -> list[EditorDefinition]:
    """The definitions the code at the cursor uses, best first: names `near` the cursor,
    then `used` by the enclosing function, then on the cursor line (`names`, in that order)."""
    near, used, cursor_line = names
    scored: list[tuple[float, int, EditorDefinition]] = []
    seen: set[tuple[str, str]] = set()
    for order, d in enumerate(defs):  # newest first: the first of a (name, file) wins
        key = (d.name, d.path)
        if key in seen or d.path == here:  # this file: the local context has it
            continue
        seen.add(key)
        if d.name in near:
            s = NEAR_SCORE
        elif d.name in used:
            s = USED_SCORE
        elif d.name in cursor_line:
            s = CURSOR_LINE_SCORE
        else:
            continue  # the code at the cursor no longer uses it
        scored.append((s, order, d))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [d for _, _, d in scored]


def _taken(scored: list[EditorDefinition], budget: int) -> dict[str, list[tuple[int, str, str]]]:
    """Per file, (row, name, text) of the definitions that fit: whole lines, at least the
    signature; one inside a definition already taken is skipped."""
    taken: dict[str, list[tuple[int, str, str]]] = {}
    rows: dict[str, set[int]] = {}
    left = budget
    for d in scored:
        lines = d.text.split("\n")
        have = rows.setdefault(d.path, set())
        if all(d.row + i in have for i in range(len(lines))):
            continue  # inside a definition already taken (a method of a class sent whole)
        keep: list[str] = []
        cost = 1 if d.path in taken else 0  # the newline between two entries of one file
        for line in lines:  # whole lines, as many as fit: at least the signature
            step = len(line) + (1 if keep else 0)
            if cost + step > left:
                break
            keep.append(line)
            cost += step
        if not keep:
            continue
        left -= cost
        have.update(d.row + i for i in range(len(keep)))
        taken.setdefault(d.path, []).append((d.row, d.name, "\n".join(keep)))
    return taken


def _snippets(taken: dict[str, list[tuple[int, str, str]]]) -> Picked:
    """One snippet per file, files by path, entries by row: equal inputs, equal bytes."""
    snippets: list[Snippet] = []
    names: dict[str, list[str]] = {}
    covered: dict[str, frozenset[str]] = {}
    for path in sorted(taken):
        items = sorted(taken[path])
        snippets.append(Snippet(path=path, text="\n".join(t for _, _, t in items), score=1.0, reason=REASON))
        names[path] = [n for _, n, _ in items]
        covered[path] = frozenset(names[path])
    return Picked(snippets, names, covered)


@dataclass(frozen=True)
class LoadedFile:
    """One file the editor resolved into, read and parsed (symbols and outline)."""

    path: str
    symbols: tuple[Symbol, ...]
    outline: FileOutline
    version: object


def load_definition_files(paths: Iterable[str], max_bytes: int = MAX_FILE_BYTES) -> list[LoadedFile]:
    """Read and parse each file (pure: safe in a worker thread); unreadable, too big or
    unknown-language files are skipped."""
    out = []
    for path in paths:
        language = language_id_for_path(path)
        try:
            st = os.stat(path)
            if st.st_size > max_bytes or language in ("", "plaintext"):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        parsed = parse_text(text, language)
        if parsed is None:
            continue
        tree, data = parsed
        version = ("editor", st.st_mtime_ns, st.st_size)
        outline = outline_of(tree, data, language, path, version)
        out.append(LoadedFile(path, tuple(extract_symbols(tree, data, language, path)), outline, version))
    return out


def _only(outline: FileOutline, names: Mapping[str, int]) -> FileOutline:
    """The outline's entries for `names` and the members of those among them that are
    containers (a class's methods): what the language server said the code uses. A name
    that is no entry of the file resolved to the file itself (a module): all of it."""
    have = outline.names()
    if any(row == 0 and name not in have for name, row in names.items()):
        return outline
    keep = [
        i
        for i, e in enumerate(outline.entries)
        if e.name in names or (e.owner >= 0 and outline.entries[e.owner].name in names)
    ]
    remap = {old: new for new, old in enumerate(keep)}
    entries = tuple(outline.entries[i]._replace(owner=remap.get(outline.entries[i].owner, -1)) for i in keep)
    return FileOutline(outline.path, outline.language, entries, outline.version)


class EditorFiles:
    """Files outside what lsp-assist indexed that the editor's language server resolved
    names into (a library, a stub, another project), put in the symbol index with an
    outline of just those names (and a class's members), so the outlines rank them with
    everything else; the file's other names are not offered (measured: they crowd out the
    open tabs' entries). Bounded (`MAX_EDITOR_FILES`, least recently added dropped); put
    back when the workspace index is swapped for a new one."""

    def __init__(self) -> None:
        self._files: OrderedDict[str, LoadedFile] = OrderedDict()
        self._names: dict[str, dict[str, int]] = {}  # per path: each resolved name's row
        self._index_id = 0

    def wanted(self, index: SymbolIndex, defs: Iterable[EditorDefinition]) -> list[str]:
        """Paths of `defs` the index does not hold yet (at most `MAX_NEW_FILES`); names for
        files already held are added to their outlines at once."""
        out: list[str] = []
        more: dict[str, dict[str, int]] = {}
        for d in defs:
            if d.path in self._files:
                if d.name not in self._names.get(d.path, {}):
                    more.setdefault(d.path, {})[d.name] = d.row
            elif d.path not in out and not index.has_path(d.path) and len(out) < MAX_NEW_FILES:
                out.append(d.path)
            if d.path in out:
                more.setdefault(d.path, {})[d.name] = d.row
        for path, names in more.items():
            self._names[path] = {**self._names.get(path, {}), **names}
            f = self._files.get(path)
            if f is not None and index.version(path) == f.version:
                index.set_symbols(path, f.symbols, f.version, _only(f.outline, self._names[path]))
        return out

    def add(self, index: SymbolIndex, loaded: Iterable[LoadedFile], excluded: Callable[[str], bool]) -> int:
        added = 0
        for f in loaded:
            if excluded(f.path) or (index.has_path(f.path) and f.path not in self._files):
                continue  # excluded meanwhile, or indexed (or opened) since it was asked for
            self._files.pop(f.path, None)
            self._files[f.path] = f
            index.set_symbols(f.path, f.symbols, f.version, _only(f.outline, self._names.get(f.path, {})))
            added += 1
        while len(self._files) > MAX_EDITOR_FILES:
            old, f = self._files.popitem(last=False)
            self._names.pop(old, None)
            if index.version(old) == f.version:
                index.remove_file(old)
        self._index_id = id(index)
        return added

    def ensure(self, index: SymbolIndex) -> None:
        """After the workspace index was swapped: put the editor's files back (cheap when not)."""
        if id(index) == self._index_id or not self._files:
            return
        self._index_id = id(index)
        for f in self._files.values():
            if not index.has_path(f.path):
                index.set_symbols(f.path, f.symbols, f.version, _only(f.outline, self._names.get(f.path, {})))

    def __len__(self) -> int:
        return len(self._files)
