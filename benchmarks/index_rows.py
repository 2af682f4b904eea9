"""The index workers' per-file work on a sample of a tree: CPU per file, a profile, and every row.

Runs `parse_worker.index_batch` in this process, set up as a worker is (`init_worker`'s
boundary and collector settings, no nice), on files drawn at random from a tree (the 19k
tree of `workspace_index.py` by default), in batches of 32 as the indexer sends them.

- CPU per file, with a per-stage split of one row's work (`--stages`);
- `--profile N`: cProfile of the batches, the N costliest functions by own time;
- `--rows FILE`: every outcome as one JSON line (kind, path, and for a parsed file every
  stored field: the `files` row with its packed blobs' digests and decoded contents, and
  each `defs` row). Run it with this checkout and with another export of `lsp_assist`
  (`PYTHONPATH=DIR`), then `cmp` the two files: equal files mean equal stored rows.

The package is imported from PYTHONPATH (not from this checkout), so the same script
measures any export of the code.

Usage: flock -x /tmp/lsp-cpu.lock env PYTHONPATH=SRC python benchmarks/index_rows.py \
           [--root DIR] [--sample 1000] [--seed 1] [--stages] [--profile 30] [--rows OUT]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import random
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

DEFAULT_ROOT = Path(tempfile.gettempdir()) / "lsp-index-bench" / "mono19k"
BATCH = 32


def jobs_of(root: Path, sample: int, seed: int) -> list[tuple[str, str, int, str]]:
    """`sample` files of the scanner's candidates (all when 0), as the indexer's jobs."""
    from lsp_assist.workspace.scanner import ScanLimits, scan

    found = scan(
        str(root), limits=ScanLimits(max_files=10_000_000, max_entries=100_000_000, time_budget_s=600)
    )
    files = sorted(found.files, key=lambda e: e.path)
    if 0 < sample < len(files):
        files = sorted(random.Random(seed).sample(files, sample), key=lambda e: e.path)
    return [(e.path, e.language, e.mtime_ns, "") for e in files]


def _row_json(kind: str, value: Any) -> dict[str, Any]:
    if kind != "row":
        return {"kind": kind, "value": value}
    row = value
    return {
        "kind": kind,
        "path": row.path,
        "mtime_ns": row.mtime_ns,
        "size": row.size,
        "sha": row.sha,
        "language": row.language,
        "outline_blob": hashlib.blake2b(row.outline, digest_size=16).hexdigest(),
        "outline": json.loads(zlib.decompress(row.outline).decode("utf-8", "surrogatepass"))
        if row.outline
        else None,
        "refs_blob": hashlib.blake2b(row.refs, digest_size=16).hexdigest(),
        "refs": zlib.decompress(row.refs).decode("utf-8", "surrogatepass") if row.refs else None,
        "imports": row.imports,
        "defs": [list(d) for d in row.defs],
    }


def stages(jobs: list[tuple[str, str, int, str]], root: Path) -> dict[str, float]:
    """ms per file of the parts of a row, each timed alone (the parse reused)."""
    import hashlib

    from lsp_assist.structure.imports import HEAD_ROWS, index_imports
    from lsp_assist.structure.outline import entries_to_rows, outline_of
    from lsp_assist.structure.symbols import extract_symbols, parse_text
    from lsp_assist.workspace import parse_worker
    from lsp_assist.workspace.store import pack_json

    parse_worker.set_boundary((str(root), (), False))
    excluded = parse_worker._excluded
    names = ("boundary", "read", "hash", "parse", "outline", "definitions", "names", "imports", "packing")
    spent = dict.fromkeys(names, 0.0)
    clock = time.process_time
    for path, language, _m, _s in jobs:
        marks = [clock()]
        if excluded is not None:
            excluded(path)
        marks.append(clock())
        with open(path, "rb") as f:
            data = f.read()
        text = data.decode("utf-8", "replace")
        marks.append(clock())
        hashlib.blake2b(data, digest_size=16).hexdigest()
        marks.append(clock())
        parsed = parse_text(text, language)
        marks.append(clock())
        outline = outline_of(parsed[0], parsed[1], language, path, None).entries if parsed else ()
        marks.append(clock())
        if parsed is not None:
            extract_symbols(parsed[0], parsed[1], language, path)
        marks.append(clock())
        parse_worker.packed_names(data, text)
        marks.append(clock())
        index_imports(text.split("\n", HEAD_ROWS)[:HEAD_ROWS], language)
        marks.append(clock())
        pack_json(entries_to_rows(outline))
        marks.append(clock())
        for name, a, b in zip(names, marks, marks[1:], strict=False):
            spent[name] += b - a
    return {k: v * 1000 / max(1, len(jobs)) for k, v in spent.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--sample", type=int, default=1000, help="files drawn at random (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="passes over the sample (the best is printed)")
    ap.add_argument("--stages", action="store_true", help="time each part of a row apart")
    ap.add_argument("--profile", type=int, default=0, help="cProfile: print this many functions")
    ap.add_argument("--rows", type=Path, default=None, help="write every outcome here, one JSON line each")
    args = ap.parse_args()

    from lsp_assist.workspace import parse_worker

    jobs = jobs_of(args.root, args.sample, args.seed)
    parse_worker.tune_gc()
    import lsp_assist

    print(f"code: {os.path.dirname(os.path.dirname(lsp_assist.__file__))}; {len(jobs)} files of {args.root}")
    batches = [jobs[i : i + BATCH] for i in range(0, len(jobs), BATCH)]
    max_bytes = 1_000_000
    best = float("inf")
    outcomes: list[Any] = []
    for _ in range(max(1, args.repeat)):
        t = time.process_time()
        parse_worker.set_boundary((str(args.root), (), False))  # a worker's: new per build
        outcomes = [o for b in batches for o in parse_worker.index_batch(b, max_bytes)]
        best = min(best, time.process_time() - t)
    print(f"CPU per file: {best * 1000 / max(1, len(jobs)):.3f} ms (best of {max(1, args.repeat)})")
    if args.stages:
        parts = stages(jobs, args.root)
        print("stages, ms per file: " + ", ".join(f"{k} {v:.3f}" for k, v in parts.items()))
    if args.profile:
        prof = cProfile.Profile()
        parse_worker.set_boundary((str(args.root), (), False))
        prof.enable()
        for b in batches:
            parse_worker.index_batch(b, max_bytes)
        prof.disable()
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(args.profile)
    if args.rows is not None:
        with open(args.rows, "w", encoding="utf-8") as out:
            for kind, value in outcomes:
                out.write(json.dumps(_row_json(kind, value), sort_keys=True) + "\n")
        kinds: dict[str, int] = {}
        for kind, _v in outcomes:
            kinds[kind] = kinds.get(kind, 0) + 1
        print(f"rows: {args.rows} ({kinds})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
