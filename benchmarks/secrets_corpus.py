"""Secret redaction: recall and false positives of lsp-assist's rules vs detect-secrets.

    .venv/bin/python -m benchmarks.secrets_corpus [--real-mb 4] [--n 300]

Three measurements, each printed for every redactor on the same input:

1. The corpus (tests/data/secrets_corpus.py): planted secrets in nine syntaxes (recall:
   a case counts when none of its secret substrings survive redaction) and look-alikes
   that must survive (false positives: a case with any redaction).
2. Real code nobody planted anything in (this repo's sources, the VS Code client's
   package-lock.json, a few installed libraries, certifi's CA bundle): redactions per MB,
   every one of them a false positive unless a library ships a live key.
3. Cost per prompt: a 10 KB prompt of real code, clean and with three planted secrets.

Redactors: `ours` (lsp_assist/governance/redaction.py); `detect-secrets` with every
plugin and its default filters, as it scans a file (`ds-file`: its per-line loop, given
the file's extension) and as its ad-hoc `scan_line` API scans a string (`ds-adhoc`:
eager search, quotes not required); `ours+ds-file` (the union). A detect-secrets finding
is redacted by replacing its `secret_value`.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from benchmarks.common import ROOT, percentile
from lsp_assist.governance.redaction import Redactor
from tests.data.secrets_corpus import BENIGN, PLANTED, Case

EXT = {
    "python": ".py", "javascript": ".js", "typescript": ".ts", "go": ".go", "java": ".java",
    "yaml": ".yaml", "dotenv": ".env", "json": ".json", "ini": ".ini", "toml": ".toml",
    "properties": ".properties", "shell": ".sh", "pem": ".pem", "csharp": ".cs", "http": ".http",
    "text": ".txt", "css": ".css",
}  # fmt: skip
LIBRARIES = (
    "httpx", "httpcore", "pygls", "lsprotocol", "pathspec", "diskcache", "platformdirs", "h2", "idna",
    "anyio", "attr", "cattrs", "_pytest", "pip/_vendor",
)  # fmt: skip

Find = Callable[[str, str], list[str]]  # (text, file suffix) -> secret values to replace


def ours() -> Find:
    r = Redactor()

    def find(text: str, suffix: str) -> list[str]:
        return [text[s:e] for s, e, _ in r.find(text)]

    return find


def detect_secrets(mode: str) -> Find:
    from detect_secrets.core.scan import _process_line_based_plugins, scan_line

    def find(text: str, suffix: str) -> list[str]:
        if mode == "adhoc":
            return [s.secret_value or "" for line in text.splitlines() for s in scan_line(line)]
        # What scan_file does after reading the file: the per-line loop, here on a string.
        lines = list(enumerate(text.splitlines(), start=1))
        return [s.secret_value or "" for s in _process_line_based_plugins(lines, f"prompt{suffix}")]

    return find


def union(a: Find, b: Find) -> Find:
    return lambda text, suffix: a(text, suffix) + b(text, suffix)


def redact_with(find: Find, text: str, suffix: str) -> tuple[str, int]:
    values = sorted({v for v in find(text, suffix) if v}, key=len, reverse=True)
    for v in values:
        text = text.replace(v, "<redacted>")
    return text, len(values)


def corpus(name: str, find: Find) -> dict[str, object]:
    missed = [c.name for c in PLANTED if _survives(find, c)]
    fps = [c.name for c in BENIGN if redact_with(find, c.text, EXT[c.lang])[1]]
    return {"name": name, "missed": missed, "fps": fps}


def _survives(find: Find, c: Case) -> bool:
    out, _ = redact_with(find, c.text, EXT[c.lang])
    return any(s in out for s in c.secrets)


def real_files(limit_bytes: int) -> Iterator[tuple[str, str]]:
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    sources = [
        *sorted((ROOT / "lsp_assist").rglob("*.py")),
        *sorted((ROOT / "benchmarks").rglob("*.py")),
        *sorted((ROOT / "editors").rglob("*.ts")),
        *sorted((ROOT / "editors").rglob("*.lua")),
        ROOT / "editors" / "vscode" / "package-lock.json",
        site / "certifi" / "cacert.pem",
    ]
    for lib in LIBRARIES:
        sources += sorted((site / lib).rglob("*.py"))
    total = 0
    for p in sources:
        if not p.is_file() or "node_modules" in p.parts:
            continue
        text = p.read_text(errors="replace")
        total += len(text)
        if total > limit_bytes:
            return
        yield str(p.relative_to(site) if p.is_relative_to(site) else p.relative_to(ROOT)), text


def real_code(finders: dict[str, Find], limit_bytes: int) -> None:
    files = list(real_files(limit_bytes))
    size = sum(len(t) for _, t in files)
    print(f"\n2. real code: {len(files)} files, {size / 1e6:.2f} MB (no planted secrets)")
    for name, find in finders.items():
        hits: Counter[str] = Counter()
        t = time.perf_counter()
        for path, text in files:
            n = redact_with(find, text, Path(path).suffix or ".txt")[1]
            if n:
                hits[path] += n
        dt = time.perf_counter() - t
        total = sum(hits.values())
        top = ", ".join(f"{p} ({n})" for p, n in hits.most_common(4))
        print(
            f"   {name:<14} {total:5d} redactions ({total / (size / 1e6):6.1f}/MB) in {len(hits):3d} files"
            f"   [{dt:5.1f} s]   {top}"
        )


def timing(finders: dict[str, Find], n: int) -> None:
    code = "".join(p.read_text() for p in sorted((ROOT / "lsp_assist").rglob("*.py")))
    clean = code[20_000:30_000]
    planted = clean[:9_000] + (
        f"\nAWS_ACCESS_KEY_ID = '{PLANTED[0].secrets[0]}'\n"
        f"password = '{PLANTED[-1].secrets[0]}'\n"
        "CONN = 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=" + "Zm9vYmFy" * 11 + "'\n"
    )
    print(f"\n3. cost per 10 KB prompt ({n} runs each; p50 / p95)")
    base: float | None = None
    for name, find in finders.items():
        row = []
        for text in (clean, planted):
            runs = n if name.startswith("ours") and "+" not in name else max(10, n // 20)
            samples = []
            for _ in range(runs):
                t = time.perf_counter()
                find(text, ".py")
                samples.append((time.perf_counter() - t) * 1000)
            samples.sort()
            row.append((statistics.median(samples), percentile(samples, 95)))
        if base is None:
            base = row[0][0]
        print(
            f"   {name:<14} clean {row[0][0]:8.3f} / {row[0][1]:8.3f} ms   planted {row[1][0]:8.3f} / "
            f"{row[1][1]:8.3f} ms   ({row[0][0] / base:6.1f}x ours)"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--real-mb", type=float, default=6.0)
    ap.add_argument("--n", type=int, default=300)
    args = ap.parse_args()
    from detect_secrets.settings import default_settings

    with contextlib.ExitStack() as stack:
        stack.enter_context(default_settings())
        finders = {
            "ours": ours(),
            "ds-file": detect_secrets("file"),
            "ds-adhoc": detect_secrets("adhoc"),
            "ours+ds-file": union(ours(), detect_secrets("file")),
        }
        print(f"1. corpus: {len(PLANTED)} planted secrets, {len(BENIGN)} look-alikes that must survive")
        for name, find in finders.items():
            res = corpus(name, find)
            missed, fps = res["missed"], res["fps"]
            assert isinstance(missed, list) and isinstance(fps, list)
            recall = 1 - len(missed) / len(PLANTED)
            print(
                f"   {name:<14} recall {recall:6.1%} ({len(PLANTED) - len(missed)}/{len(PLANTED)})   "
                f"false positives {len(fps):2d}/{len(BENIGN)}"
            )
            if missed:
                print(f"      missed: {'; '.join(missed[:12])}{' ...' if len(missed) > 12 else ''}")
            if fps:
                print(f"      false positives: {'; '.join(fps[:12])}{' ...' if len(fps) > 12 else ''}")
        real_code({k: finders[k] for k in ("ours", "ds-file")}, int(args.real_mb * 1e6))
        timing(finders, args.n)


if __name__ == "__main__":
    main()
