"""The fake model server in its own process, for benchmarks.

In-process, the fake's threads share the GIL with the measuring client, and a GIL
switch (5 ms by default) lands in the measured latency. A separate process keeps the
measurement clean. The same control surface as `FakeModelServer` is offered over HTTP.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx

from tests.fakes.fake_model_server import Script, Stats

ROOT = Path(__file__).resolve().parents[2]


class FakeModelProcess:
    def __init__(self, *extra_args: str, quiet: bool = False) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.fakes.fake_model_server",
                "--port",
                "0",
                "--exit-on-stdin-eof",
                *extra_args,
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # quiet: no tracebacks for clients that hang up mid-stream (cancellation soaks).
            stderr=subprocess.DEVNULL if quiet else None,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("PORT="):
            self.close()
            raise RuntimeError(f"fake model server did not start: {line!r}")
        self.port = int(line.split("=", 1)[1])
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base_url = self.origin + "/v1"
        self._http = httpx.Client(base_url=self.origin, timeout=10)

    def __enter__(self) -> FakeModelProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_default(self, script: Script) -> None:
        data = {k: v for k, v in asdict(script).items() if not callable(v)}
        self._http.post("/_control/default", json=data).raise_for_status()

    def reset(self) -> None:
        self._http.post("/_control/reset", json={}).raise_for_status()

    def set_limit(self, max_concurrent: int | None) -> None:
        """A concurrency cap (None: none); requests over it wait for a slot."""
        self._http.post("/_control/limit", json={"max_concurrent": max_concurrent}).raise_for_status()

    @property
    def stats(self) -> Stats:
        data: dict[str, Any] = self._http.get("/_control/stats").json()
        data["tokens_at_abort"] = tuple(data.get("tokens_at_abort", ()))
        return Stats(**data)

    @property
    def stream_times(self) -> list[tuple[float, list[float]]]:
        rows = self._http.get("/_control/stream_times").json()["stream_times"]
        return [(float(t0), [float(t) for t in ts]) for t0, ts in rows]

    def model_bodies(self) -> list[dict[str, Any]]:
        """JSON bodies of the completion requests received, in order."""
        rows = self._http.get("/_control/requests").json()["requests"]
        return [r["body"] or {} for r in rows if str(r["path"]).endswith("completions")]

    def close(self) -> None:
        self._http.close() if hasattr(self, "_http") else None
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
