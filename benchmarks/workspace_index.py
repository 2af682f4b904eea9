"""Workspace index at monorepo scale: today's in-memory JSON index beside the on-disk store.

Trees (built in a temp dir, outside the repository):
- `19k`: the tree of issue 27, a copy of the Python standard library and the virtualenv's
  installed packages under a first-party folder name (`acme/stdlib`, `acme/packages`);
- `100k`: 100,000 generated small source files (`make_generated`; `--files` to change).

For each tree and each index, a child process plays the server (a real `Runtime`, the
index built as the server builds it: the old `WorkspaceIndex` refresh + `build_symbol_index`
in a thread, or `WorkspaceService.refresh`, whose parsing runs in the indexer process).
This process samples the RSS of the child (the server) and of its descendants (the indexer
and its workers) every 100 ms. The child measures, with an open document of the tree,
the context build (the "before the model call" work of a request) and the event loop's
lag every 20 ms, while the index builds and then idle with the index loaded. A second run
after touching 10 files gives the incremental figure. The old index is stopped after
`--old-cap-s` seconds (it also stops at its own 20,000-file cap, as it does in the product).

`--scaling` shows that the build time is linear in files: it runs the indexer process alone
(`python -m lsp_assist.workspace.indexer`, fresh database) on 25%, 50% and 100% of the 19k
tree (every 4th, every 2nd file of the sorted list, hard links, so each subset has the same
mix of sizes) and prints seconds and CPU per 1,000 files for each. `--baseline-src DIR` runs
the same builds, in the same run, with the `lsp_assist` package found under DIR (for example
an export of the previous commit) for before/after figures.

Usage: flock -x /tmp/lsp-cpu.lock python -m benchmarks.workspace_index --tree 19k
       flock -x /tmp/lsp-cpu.lock python -m benchmarks.workspace_index --scaling [--baseline-src DIR]
           [--unique]   (also the 19k tree with one file per distinct content)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, arg_parser, percentile

WORK = Path(tempfile.gettempdir()) / "lsp-index-bench"
PROBE_S = 0.02
IDLE_PROBE_S = 3.0


# ------------------------------------------------------------------------------- trees


def make_19k(dest: Path) -> Path:
    """The stdlib and the installed packages under `acme/` (a first-party name). This
    virtualenv holds fewer packages than the one of issue 27 (6,356 Python files, not
    ~17,000), so the packages are copied twice (`acme/packages`, `acme/platform`) and the
    system's `dist-packages` added (`acme/tools`): ~19,000 indexable files, as in the issue."""
    root = dest / "mono19k"
    if (root / ".complete").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    site = Path(sysconfig.get_paths()["purelib"])
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "site-packages", "dist-packages")
    shutil.copytree(stdlib, root / "acme" / "stdlib", symlinks=True, ignore=ignore)
    shutil.copytree(site, root / "acme" / "packages", symlinks=True, ignore=ignore)
    shutil.copytree(site, root / "acme" / "platform", symlinks=True, ignore=ignore)
    system = Path("/usr/lib/python3/dist-packages")
    if system.is_dir():
        shutil.copytree(system, root / "acme" / "tools", symlinks=True, ignore=ignore)
    (root / ".complete").write_text("")
    return root


def make_generated(dest: Path, n: int, seed: int = 7) -> Path:
    """`n` small Python files, 100 per folder, each defining a class and two functions and
    calling names defined elsewhere (so names resolve across files); plus a symlink loop."""
    root = dest / f"gen{n}"
    if (root / ".complete").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(seed)
    for i in range(n):
        d = root / "svc" / f"m{i // 1000:03d}" / f"p{(i // 100) % 10}"
        if i % 100 == 0:
            d.mkdir(parents=True, exist_ok=True)
        j = rng.randrange(n)
        (d / f"f{i}.py").write_text(
            f'"""Module {i}."""\n\nfrom svc import f{j}\n\n\n'
            f"class Model{i}:\n    size: int = {i}\n\n    def total_{i}(self, other: int) -> int:\n"
            f"        return self.size + other\n\n\n"
            f"def build_{i}(count: int) -> Model{i}:\n    return f{j}.build_{j}(count)\n\n\n"
            f"def check_{i}(m: Model{i}) -> bool:\n    return m.total_{i}(1) > {j}\n"
        )
    (root / "svc" / "loop").symlink_to(root / "svc", target_is_directory=True)
    (root / ".complete").write_text("")
    return root


def _linked_tree(full: Path, name: str, keep: Callable[[list[str]], list[str]]) -> Path:
    """`full`'s regular files (sorted paths) that `keep` picks, hard-linked in place under
    `<full>-<name>`; built once (a `.complete` marker)."""
    root = full.parent / f"{full.name}-{name}"
    if (root / ".complete").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    files: list[str] = []
    for d, dirs, names in os.walk(full):
        dirs.sort()
        files.extend(os.path.join(d, n) for n in names if not os.path.islink(os.path.join(d, n)))
    for f in keep(sorted(f for f in files if os.path.basename(f) != ".complete")):
        dest = root / os.path.relpath(f, full)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.link(f, dest)
    (root / ".complete").write_text("")
    return root


def make_subset(full: Path, every: int) -> Path:
    """Every `every`-th regular file of `full`: the same kind of tree, 1/`every` of its size."""
    return _linked_tree(full, f"every{every}", lambda files: files[::every])


def make_unique(full: Path) -> Path:
    """One file per distinct content of `full` (the first of each): the 19k tree holds its
    packages twice (`acme/packages`, `acme/platform`), and this tree shows what a build costs
    when no file's bytes repeat."""
    import hashlib

    def first_of_each(files: list[str]) -> list[str]:
        seen: set[str] = set()
        out: list[str] = []
        for f in files:
            with open(f, "rb") as fh:
                digest = hashlib.blake2b(fh.read(), digest_size=16).hexdigest()
            if digest not in seen:
                seen.add(digest)
                out.append(f)
        return out

    return _linked_tree(full, "unique", first_of_each)


def build_once(root: Path, src: Path) -> dict[str, Any]:
    """One full build by the indexer process of the package under `src`, fresh database:
    wall seconds and the CPU of the indexer and its workers (waited-for children)."""
    db = Path(tempfile.mkdtemp(prefix="lsp-index-scale-", dir=WORK)) / "index.sqlite3"
    opts = {"root": str(root), "db": str(db)}
    env = dict(os.environ, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # -P: the working directory is not put first on sys.path, so the package under `src`
    # is the one imported (before 2026-12-03 "baseline" ran this checkout's code too).
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "lsp_assist.workspace.indexer"], input=json.dumps(opts) + "\n",
        capture_output=True, text=True, env=env, timeout=900, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(db.parent, ignore_errors=True)
    result: dict[str, Any] = {}
    for line in proc.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        result = msg.get("result", result)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "seconds": wall, "cpu_s": cpu, "files": result.get("files", 0), "symbols": result.get("symbols"),
        "reused": result.get("reused", 0),
    }  # fmt: skip


def scaling(full: Path, baseline_src: Path | None, unique: bool = False) -> None:
    sizes: list[tuple[str, Path]] = [("1/4", make_subset(full, 4)), ("1/2", make_subset(full, 2))]
    sizes.append(("full", full))
    if unique:
        sizes.append(("unique", make_unique(full)))
    sources = [("this checkout", ROOT)] + ([("baseline", baseline_src)] if baseline_src else [])
    print(f"\n== scaling: the indexer process alone, fresh database, {os.cpu_count()} cores")
    head = f"{'code':14} {'tree':>12} {'files':>7} {'symbols':>8} {'s':>7}"
    print(f"   {head} {'s/1k files':>11} {'CPU ms/file':>12} {'copied':>7}")
    for label, root in sizes:
        for name, src in sources:
            r = build_once(root, src)
            n = max(1, int(r["files"]))
            print(
                f"   {name:14} {label:>12} {r['files']:>7} "
                f"{_fmt(r['symbols']):>8} {r['seconds']:>7.1f} {r['seconds'] * 1000 / n:>11.2f} "
                f"{r['cpu_s'] * 1000 / n:>12.2f} {r['reused']:>7}",
                flush=True,
            )


# ------------------------------------------------------------------------------- the child


def _rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


async def _probe(rt: Any, doc: Any, cursor: Any, stop: asyncio.Event) -> dict[str, list[float]]:
    builds: list[float] = []
    lags: list[float] = []
    while not stop.is_set():
        t = time.perf_counter()
        await asyncio.sleep(PROBE_S)
        lags.append((time.perf_counter() - t - PROBE_S) * 1000)
        t = time.perf_counter()
        rt.context.build(doc, cursor, 4000, deadline_ms=1000)
        builds.append((time.perf_counter() - t) * 1000)
    return {"build": builds, "lag": lags}


def _stats(p: dict[str, list[float]]) -> dict[str, float]:
    return {
        "build_p50": percentile(p["build"], 50),
        "build_p90": percentile(p["build"], 90),
        "build_max": max(p["build"], default=float("nan")),
        "lag_p90": percentile(p["lag"], 90),
        "lag_max": max(p["lag"], default=float("nan")),
        "n": len(p["build"]),
    }


async def _child(kind: str, root: Path, probe_file: Path, probing: bool = True) -> dict[str, Any]:
    from lsp_assist.domain import Cursor
    from lsp_assist.server import build_runtime

    rt = build_runtime([root])
    text = await asyncio.to_thread(probe_file.read_text, encoding="utf-8", errors="replace")
    rt.store.open(probe_file.as_uri(), "python", 1, text, str(probe_file))
    doc = rt.store.get(probe_file.as_uri())
    assert doc is not None
    row = max(0, doc.line_count // 2)
    cursor = Cursor(row, len(doc.line(row)))
    stop = asyncio.Event()
    if not probing:
        stop.set()  # the build alone: no requests while it runs
    probe = asyncio.get_running_loop().create_task(_probe(rt, doc, cursor, stop))
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    if kind == "old":
        summary = await _old_refresh(rt, root)
    else:
        summary = await rt.workspace.refresh()
    seconds = time.perf_counter() - t0
    server_cpu = time.process_time() - cpu0
    stop.set()
    during = await probe
    gc.collect()
    await asyncio.sleep(0.5)
    stop = asyncio.Event()
    probe = asyncio.get_running_loop().create_task(_probe(rt, doc, cursor, stop))
    await asyncio.sleep(IDLE_PROBE_S)
    stop.set()
    idle = await probe
    gc.collect()
    out = {
        "seconds": seconds,
        "server_cpu_s": server_cpu,
        "files": summary.get("files"),
        "symbols": summary.get("symbols"),
        "reread": summary.get("reread"),
        "stopped": summary.get("stopped"),
        "rss_after_mb": _rss_mb(),
        "peak_self_mb": _rss_mb(field="VmHWM"),
        "during": _stats(during),
        "idle": _stats(idle),
    }
    await rt.aclose()
    return out


async def _old_refresh(rt: Any, root: Path) -> dict[str, Any]:
    """Today's index exactly as the server built it before the store (`index.py`)."""
    from lsp_assist.workspace.index import WorkspaceIndex, build_symbol_index
    from lsp_assist.workspace.service import settle_long_lived_heap

    cfg = rt.config.workspace
    idx = WorkspaceIndex(
        str(root), rt.cache_dir, excluded=rt.governance.excluded if rt.governance else None,
        max_files=cfg.max_files, max_file_bytes=cfg.max_file_bytes, time_budget_s=cfg.scan_time_budget_s,
    )  # fmt: skip
    res = await asyncio.to_thread(idx.refresh)
    symbols = await asyncio.to_thread(build_symbol_index, [idx], rt.context.boundary)
    rt.context.symbols = symbols
    for d in rt.store.documents():
        rt.context.index_document(d)
    settle_long_lived_heap()
    await asyncio.to_thread(idx.save)
    return {"files": res.files, "symbols": res.symbols, "reread": res.reread, "stopped": res.stopped}


# ------------------------------------------------------------------------------- the parent


def _descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            kids = []
        out.extend(kids)
        todo.extend(kids)
    return out


def run_child(
    kind: str, root: Path, cache: Path, probe: Path, cap_s: float, probing: bool = True
) -> dict[str, Any]:
    env = dict(os.environ)
    env.update(
        LSP_ASSIST_CACHE_DIR=str(cache),
        LSP_ASSIST_CONFIG=str(cache / "none.toml"),
        LSP_ASSIST_POLICY=str(cache / "none-policy.toml"),
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    cmd = [sys.executable, __file__, "--child", kind, "--root", str(root), "--probe", str(probe)]
    if not probing:
        cmd.append("--no-probing")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peak_server = peak_tree = 0.0
    t0 = time.monotonic()
    capped = False
    while proc.poll() is None:
        server = _rss_mb(proc.pid)
        tree = server + sum(_rss_mb(p) for p in _descendants(proc.pid))
        peak_server, peak_tree = max(peak_server, server), max(peak_tree, tree)
        if time.monotonic() - t0 > cap_s:
            proc.kill()
            capped = True
            break
        time.sleep(0.1)
    out, _ = proc.communicate()
    if capped:
        return {"capped": cap_s, "peak_server_mb": peak_server, "peak_tree_mb": peak_tree}
    try:
        res: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": out[-500:], "peak_server_mb": peak_server, "peak_tree_mb": peak_tree}
    res["peak_server_mb"] = max(peak_server, float(res.get("peak_self_mb", 0)))
    res["peak_tree_mb"] = peak_tree
    return res


def touch(root: Path, n: int) -> None:
    files = sorted(root.rglob("*.py"))
    for p in files[:: max(1, len(files) // n)][:n]:
        p.write_text(p.read_text(encoding="utf-8", errors="replace") + "\n# touched\n", encoding="utf-8")


def _fmt(v: Any, spec: str = ".1f") -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def report(name: str, root: Path, runs: dict[str, dict[str, Any]]) -> None:
    old, new = runs.get("old", {}), runs.get("new", {})
    old2, new2 = runs.get("old2", {}), runs.get("new2", {})
    quiet = [float(q) for q in new.get("quiet", [])]
    print(f"\n== {name}: {root}")
    print(f"   (full index: a context build every {PROBE_S * 1000:.0f} ms while it runs; no requests: none)")
    if old.get("capped"):
        print(f"   (old index stopped by this benchmark after {old['capped']:.0f} s)")
    rows = [
        ("full index, s", old.get("seconds"), new.get("seconds"), "<= 20 (19k tree, 2 cores)"),
        (
            "  no requests, median s",
            None,
            statistics.median(quiet) if quiet else None,
            f"runs: {', '.join(f'{q:.1f}' for q in quiet)}" if quiet else "",
        ),
        ("files indexed", old.get("files"), new.get("files"), "all (old: capped at 20,000)"),
        ("server CPU while indexing, s", old.get("server_cpu_s"), new.get("server_cpu_s"), "(with probes)"),
        ("symbols", old.get("symbols"), new.get("symbols"), ""),
        ("server peak RSS, MB", old.get("peak_server_mb"), new.get("peak_server_mb"), "<= 300"),
        ("server RSS after, MB", old.get("rss_after_mb"), new.get("rss_after_mb"), "<= 200"),
        ("all processes peak, MB", old.get("peak_tree_mb"), new.get("peak_tree_mb"), "(indexer + workers)"),
        ("2nd run, 10 touched, s", old2.get("seconds"), new2.get("seconds"), "<= 2"),
        ("2nd run, files re-read", old2.get("reread"), new2.get("reread"), "10"),
    ]
    for phase in ("idle", "during"):
        for key in ("n", "build_p50", "build_p90", "build_max", "lag_p90", "lag_max"):
            rows.append(
                (f"{phase}: {key}" + ("" if key == "n" else ", ms"), old.get(phase, {}).get(key),
                 new.get(phase, {}).get(key),
                 "during within 2 ms of idle" if phase == "during" and key == "build_p50" else "")
            )  # fmt: skip
    print(f"   {'':30} {'old (JSON, memory)':>20} {'new (SQLite, workers)':>22}   target")
    for label, a, b, target in rows:
        print(f"   {label:30} {_fmt(a):>20} {_fmt(b):>22}   {target}")
    for k in ("old", "new"):
        if runs.get(k, {}).get("stopped"):
            print(f"   {k} stopped: {runs[k]['stopped']}")
        if runs.get(k, {}).get("error"):
            print(f"   {k} error: {runs[k]['error']}")


def main() -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("--tree", choices=["19k", "100k"], default="19k")
    ap.add_argument("--files", type=int, default=100_000, help="files of the generated tree")
    ap.add_argument("--old-cap-s", type=float, default=240.0)
    ap.add_argument("--only", choices=["old", "new"], default=None)
    ap.add_argument("--scaling", action="store_true", help="the indexer alone at 25/50/100%% of 19k")
    ap.add_argument("--baseline-src", type=Path, default=None, help="with --scaling: compare to this code")
    ap.add_argument("--unique", action="store_true", help="with --scaling: also the 19k tree without repeats")
    ap.add_argument("--child", choices=["old", "new"], default=None, help=argparse.SUPPRESS)
    ap.add_argument("--root", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--probe", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--no-probing", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--quiet", type=int, default=3, help="more new-index builds with no requests (median)")
    args = ap.parse_args()
    if args.child:
        result = asyncio.run(_child(args.child, Path(args.root), Path(args.probe), not args.no_probing))
        print(json.dumps(result))
        return 0
    WORK.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    root = make_19k(WORK) if args.tree == "19k" else make_generated(WORK, args.files)
    print(f"tree ready in {time.perf_counter() - t:.1f} s")
    if args.scaling:
        scaling(make_19k(WORK), args.baseline_src, args.unique)
        return 0
    probe = next(iter(sorted(root.rglob("*.py"))))
    if args.tree == "19k":
        probe = next(p for p in sorted(root.rglob("json/decoder.py")))
    runs: dict[str, dict[str, Any]] = {}
    for kind in ("old", "new"):
        if args.only and kind != args.only:
            continue
        cache = Path(tempfile.mkdtemp(prefix=f"lsp-index-{kind}-", dir=WORK))
        cap = args.old_cap_s if kind == "old" else 600.0
        runs[kind] = run_child(kind, root, cache, probe, cap)
        if not runs[kind].get("capped") and not runs[kind].get("error"):
            touch(root, 10)
            runs[kind + "2"] = run_child(kind, root, cache, probe, cap)
        shutil.rmtree(cache, ignore_errors=True)
        print(f"{kind}: {json.dumps(runs[kind])[:300]}", flush=True)
        if kind == "new":
            # The same build with no requests during it, a few times: this shared machine's
            # speed moves by +-20% between runs, so one figure says little.
            quiet = []
            for _ in range(args.quiet):
                cache = Path(tempfile.mkdtemp(prefix="lsp-index-quiet-", dir=WORK))
                quiet.append(run_child(kind, root, cache, probe, cap, probing=False).get("seconds"))
                shutil.rmtree(cache, ignore_errors=True)
            runs[kind]["quiet"] = [q for q in quiet if q is not None]
    report(args.tree, root, runs)
    print(f"\ncores: {os.cpu_count()}, python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
