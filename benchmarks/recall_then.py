"""The context engine as of an older commit, on the same positions: `context_recall.py --then REV`.

"In-file recall not lower than today" needs today's engine next to the current one, on the
same deleted lines, in the same run. This module does both halves:

- `ThenEngine` (imported by context_recall.py) unpacks `lsp_assist/` of REV with `git
  archive` into the gitignored corpus folder (once per commit) and runs this file as a
  worker process with that tree first on `PYTHONPATH`, so the older package is the one
  imported; it sends the blanked texts and gets the prompts back;
- `main()` is that worker: JSON lines in (the text, the cursor, the budget, the open
  tabs), the prompt's text out, built with the older `ContextEngine.build_from_text`
  (an API every commit since the first landing has). The current process scores them with
  the current `identifiers`, so both engines are judged by the same rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent


class ThenEngine:
    """Prompts from the engine at one older commit, built in a worker process."""

    def __init__(self, rev: str, cache_dir: Path) -> None:
        sha = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--verify", f"{rev}^{{commit}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        self.rev = sha[:7]
        self.root = cache_dir / f"then-{sha[:12]}"
        if not (self.root / "lsp_assist" / "__init__.py").is_file():
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile() as tar:
                subprocess.run(["git", "-C", str(REPO), "archive", sha, "lsp_assist"], stdout=tar, check=True)
                tar.seek(0)
                with tarfile.open(fileobj=tar) as tf:
                    tf.extractall(self.root, filter="data")
        env = dict(os.environ, PYTHONPATH=str(self.root))
        self.proc = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(self.root),
        )

    def prompt(
        self,
        language: str,
        path: str,
        text: str,
        row: int,
        col: int,
        budget: int,
        tabs: list[tuple[str, str]],
    ) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        req = {
            "language": language,
            "path": path,
            "text": text,
            "row": row,
            "col": col,
            "budget": budget,
            "tabs": tabs,
        }
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the engine at {self.rev} exited (rc {self.proc.wait()})")
        got: dict[str, Any] = json.loads(line)
        if "error" in got:
            raise RuntimeError(f"the engine at {self.rev}: {got['error']}")
        return str(got["prompt"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _serve(inp: IO[str], out: IO[str]) -> None:
    # Imported here, in the worker: the older tree is first on PYTHONPATH.
    from lsp_assist.context.builder import ContextEngine
    from lsp_assist.documents.store import Document
    from lsp_assist.domain import Cursor

    local = ContextEngine()
    for line in inp:
        req = json.loads(line)
        try:
            lang, path, text = req["language"], req["path"], req["text"]
            cursor = Cursor(req["row"], req["col"])
            tabs = [Document("file://" + p, lang, 1, t, p) for p, t in req["tabs"]]
            # A fresh engine when other files are open (as the current benchmark does),
            # the same long-lived one for local-only prompts.
            engine = ContextEngine() if tabs else local
            ctx = engine.build_from_text(
                text, lang, path, cursor, req["budget"], others=tabs, deadline_ms=15.0, crossfile=bool(tabs)
            )
            prompt = "\n".join([ctx.prefix, ctx.suffix, *(s.text for s in ctx.snippets)])
            out.write(json.dumps({"prompt": prompt, "size": ctx.size}) + "\n")
        except Exception as exc:  # reported to the parent, which stops the run
            out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        out.flush()


def main() -> None:
    _serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
