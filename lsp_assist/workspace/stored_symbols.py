"""A `SymbolIndex` whose closed files live in the on-disk store, not in memory.

The context engine reads one `SymbolIndex` (`structure/symbols.py`). This one answers from
two layers: in memory, exactly what the plain index holds for what was set on it (the open
documents, the editor's definitions: `set_symbols` and friends, unchanged), and beneath it
the workspace stores (`store.py`), queried by indexed lookups (tens of µs) for every path
the memory layer does not hold. A path in memory shadows its stored row, as an open
buffer shadowed its disk record before. The results are those of the in-memory index
over the same files, in the same order (by path, then row).

What stays in memory is bounded: a cache of looked-up names (`NAME_CACHE`), of definer
counts, and of outlines (`OUTLINE_CACHE_BYTES`); all are dropped when the store changes
(`store_updated`, which also bumps `generation` so caches keyed on it follow).
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, cast

from lsp_assist.structure.outline import FileOutline, OutlineEntry, entries_from_rows
from lsp_assist.structure.symbols import Symbol, SymbolIndex, admit_all
from lsp_assist.workspace.rows import DefRow
from lsp_assist.workspace.store import Store, unpack_json, unpack_names

NAME_CACHE = 4096  # names whose stored definitions are kept (a request weighs hundreds)
OUTLINE_CACHE_BYTES = 8 << 20
ADMIT_CACHE = 65_536


def _symbol(path: str, d: DefRow) -> Symbol:
    return Symbol(d[0], d[1], path, d[2], d[3], d[4], d[5], d[6], d[7])


def _entries(rows: list[Any]) -> tuple[OutlineEntry, ...]:
    """Rows as the store writes them (`entries_to_rows`: six typed fields) into entries;
    anything else through `entries_from_rows`, which converts field by field."""
    if all(type(r) is list and len(r) == 6 for r in rows):
        return tuple(OutlineEntry._make(r) for r in rows)
    return entries_from_rows(rows)


class _Lru(OrderedDict[Any, Any]):
    """An LRU bounded by a total cost (entries' `cost` summed)."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget
        self.used = 0
        self.costs: dict[Any, int] = {}

    def hit(self, key: Any) -> Any:
        got = self.get(key)
        if got is not None:
            self.move_to_end(key)
        return got

    def put(self, key: Any, value: Any, cost: int = 1) -> None:
        if key in self:
            self.used -= self.costs.pop(key, 0)
            del self[key]
        self[key] = value
        self.costs[key] = cost
        self.used += cost
        while self.used > self.budget and self:
            old, _ = self.popitem(last=False)
            self.used -= self.costs.pop(old, 0)

    def drop(self, key: Any) -> None:
        if key in self:
            self.used -= self.costs.pop(key, 0)
            del self[key]

    def reset(self) -> None:
        self.clear()
        self.costs.clear()
        self.used = 0


class StoredSymbolIndex(SymbolIndex):
    """Memory layer (open files) over the workspace stores (everything indexed on disk)."""

    def __init__(self, stores: Sequence[Store] = ()) -> None:
        super().__init__()
        self.stores: list[Store] = list(stores)
        self._names = _Lru(NAME_CACHE)  # name -> ((path, DefRow), ...) from the stores
        self._definer_counts = _Lru(NAME_CACHE * 4)  # name -> files defining it in the stores
        self._outline_cache = _Lru(OUTLINE_CACHE_BYTES)
        self._admitted: dict[str, bool] = {}
        self._shadow: dict[str, frozenset[str]] | None = None  # memory path -> its stored names
        self.store_epoch = 0
        self._stored_count: tuple[int, int] | None = None  # (epoch, files in the stores)

    # ------------------------------------------------------------------ store changes

    def set_stores(self, stores: Sequence[Store]) -> None:
        self.stores = list(stores)
        self.store_updated(())

    def store_updated(self, paths: Sequence[str]) -> None:
        """The stores changed (a build's batch, a saved file): drop caches, bump generation."""
        self.store_epoch += 1
        self._names.reset()
        self._definer_counts.reset()
        # Outlines stay cached (decoding them is most of a cold request): each is checked
        # against its row's content hash once per epoch (`outline`); named paths go now.
        for p in paths:
            self._outline_cache.drop(p)
        self._shadow = None
        self.generation += 1
        for p in paths:
            self._changes[p] = self._changes.get(p, 0) + 1

    # ------------------------------------------------------------------ helpers

    def _ok(self, path: str) -> bool:
        """The stored `path` is visible: not shadowed by memory, and the boundary admits it."""
        if path in self._by_path:
            return False
        if self.admits is admit_all:
            return True
        got = self._admitted.get(path)
        if got is None:
            if len(self._admitted) >= ADMIT_CACHE:
                self._admitted.clear()
            got = self._admitted[path] = bool(self.admits(path))
        return got

    def _in_memory(self, path: str) -> bool:
        return path in self._by_path

    def purge(self) -> int:
        self._admitted.clear()
        self.store_updated(())
        return super().purge()

    def set_symbols(self, path: str, symbols: Any, version: object = None, outline: FileOutline | None = None,
                    refs: Any = None, imports: Any = None) -> None:  # fmt: skip
        if path not in self._by_path:
            self._shadow = None
            if self.stores and self._ok(path):
                # Like a disk record under an opened buffer: its counts, imports and outline
                # stay until the buffer gives its own (`SymbolIndex.set_symbols`).
                refs = self.refs(path) if refs is None else refs
                imports = self.imports(path) if imports is None else imports
                if outline is None and path not in self._outlines:
                    outline = self.outline(path)
        super().set_symbols(path, symbols, version, outline, refs, imports)

    def remove_file(self, path: str) -> None:
        if path in self._by_path:
            self._shadow = None
        super().remove_file(path)

    def forget_memory(self, path: str) -> None:
        """Drop what memory holds for `path` (a closed buffer): its stored row shows again."""
        if path in self._by_path or path in self._outlines:
            self.remove_file(path)

    # ------------------------------------------------------------------ paths

    def has_path(self, path: str) -> bool:
        return path in self._by_path or (self._ok(path) and any(s.has_path(path) for s in self.stores))

    def paths_with_stem(self, stem: str) -> list[str]:
        got = set(self._by_stem.get(stem, ()))
        got.update(p for s in self.stores for p in s.paths_with_stem(stem) if self._ok(p))
        return sorted(got)

    def paths_in_dir(self, directory: str) -> list[str]:
        got = set(self._by_dir.get(directory, ()))
        got.update(p for s in self.stores for p in s.paths_in_dir(directory) if self._ok(p))
        return sorted(got)

    def paths_in_dir_named(self, tail: str) -> list[str]:
        tail = tail.strip("/")
        want = "/" + tail
        base = tail.rsplit("/", 1)[-1]
        dirs = set(self._dirs_by_base.get(base, ()))
        dirs.update(d for s in self.stores for d in s.dirs_ending(base))
        out: list[str] = []
        for d in sorted(dirs):
            if d.replace("\\", "/").endswith(want):
                out.extend(self.paths_in_dir(d))
        return out

    def file_count(self) -> int:
        # COUNT(*) walks the table (ms on 100,000 files) and a request asks: once per epoch.
        if self._stored_count is None or self._stored_count[0] != self.store_epoch:
            self._stored_count = (self.store_epoch, sum(s.file_count() for s in self.stores))
        stored = self._stored_count[1]
        return stored + sum(1 for p in self._by_path if not any(s.has_path(p) for s in self.stores))

    def paths(self) -> list[str]:
        got = set(self._by_path)
        got.update(p for s in self.stores for p in s.paths() if self._ok(p))
        return sorted(got)

    def version(self, path: str) -> object:
        if path in self._by_path or not self.stores:
            return self._versions.get(path)
        if not self._ok(path):
            return None
        for s in self.stores:
            info = s.file_info(path)
            if info is not None:
                return ("disk", info[1])
        return None

    def language_of(self, path: str) -> str | None:
        for s in self.stores:
            info = s.file_info(path)
            if info is not None:
                return info[0]
        return None

    # ------------------------------------------------------------------ names

    def _stored_defs(self, name: str) -> tuple[tuple[str, DefRow], ...]:
        got: tuple[tuple[str, DefRow], ...] | None = self._names.hit(name)
        if got is None:
            got = tuple(x for s in self.stores for x in s.defs_named(name))
            self._names.put(name, got, 1)
        return got

    def lookup(self, name: str) -> list[Symbol]:
        mine = self._by_name.get(name, ())
        stored = [_symbol(p, d) for p, d in self._stored_defs(name) if self._ok(p)]
        if not mine:
            return stored
        if not stored:
            return list(mine)
        return sorted([*mine, *stored], key=lambda s: (s.path, s.start_row))

    def definers(self, name: str) -> int:
        """Files defining `name`: the memory layer's, plus the stores' not shadowed by it."""
        count: int | None = self._definer_counts.hit(name)
        if count is None:
            count = sum(s.definer_count(name) for s in self.stores)
            self._definer_counts.put(name, count, 1)
        if self._by_path:
            count -= sum(1 for names in self._shadowed().values() if name in names)
            syms = self._by_name.get(name)
            if syms:
                count += len({s.path for s in syms})
        return count

    def _shadowed(self) -> dict[str, frozenset[str]]:
        """Memory paths that the stores hold too -> the names stored for them."""
        if self._shadow is None:
            self._shadow = {}
            for p in self._by_path:
                names = frozenset(d[0] for s in self.stores for d in s.defs_of(p))
                if names:
                    self._shadow[p] = names
        return self._shadow

    def symbols(self, path: str) -> list[Symbol]:
        if path in self._by_path or not self._ok(path):
            return super().symbols(path)
        return [_symbol(path, d) for s in self.stores for d in s.defs_of(path)]

    def __len__(self) -> int:
        return super().__len__() + sum(s.def_count() for s in self.stores)

    # ------------------------------------------------------------------ per file

    def outline(self, path: str) -> FileOutline | None:
        if path in self._outlines or path in self._by_path:
            return self._outlines.get(path)
        if not self.stores or not self._ok(path):
            return None
        cached: list[Any] | None = self._outline_cache.hit(path)  # [epoch checked, outline]
        if cached is not None:
            if cached[0] == self.store_epoch:
                return cast(FileOutline, cached[1])
            if self.version(path) == cached[1].version:
                cached[0] = self.store_epoch
                return cast(FileOutline, cached[1])
        for s in self.stores:
            blob = s.outline_blob(path)
            if blob is None:
                continue
            language, sha, packed = blob
            rows = unpack_json(packed)
            entries = _entries(rows if isinstance(rows, list) else [])
            got = FileOutline(path, language, entries, ("disk", sha))
            cost = 200 + sum(64 + len(e.text) + len(e.name) for e in entries)
            self._outline_cache.put(path, [self.store_epoch, got], cost)
            return got
        return None

    def imports(self, path: str) -> tuple[str, ...]:
        if path in self._by_path or path in self._imports or not self._ok(path):
            return super().imports(path)
        for s in self.stores:
            got = s.imports(path)
            if got:
                return got
        return ()

    def refs(self, path: str) -> frozenset[str]:
        if path in self._by_path or path in self._refs or not self._ok(path):
            return super().refs(path)
        for s in self.stores:
            blob = s.refs_blob(path)
            if blob is not None:
                return unpack_names(blob)
        return frozenset()

    def refs_in_dir(self, directory: str) -> list[tuple[str, frozenset[str]]]:
        got = dict(super().refs_in_dir(directory))
        for s in self.stores:
            for p, blob in s.refs_in_dir(directory):
                if p not in got and self._ok(p):
                    names = unpack_names(blob)
                    if names:  # as in memory: a file that spells nothing is not listed
                        got[p] = names
        return sorted(got.items())

    def package_uses(self, directory: str) -> Mapping[str, int]:
        counts: Counter[str] = Counter()
        for _p, names in self.refs_in_dir(directory):
            counts.update(names)
        return counts

    def package_changes(self, directory: str) -> int:
        return hash((super().package_changes(directory), self.store_epoch))

    def summary(self) -> dict[str, Any]:
        """Sizes for status and benchmarks (what memory holds)."""
        return {
            "memory_files": len(self._by_path),
            "cached_names": len(self._names),
            "cached_outline_bytes": self._outline_cache.used,
            "stores": [json.dumps(str(s.path)) for s in self.stores],
        }
