"""A real model for the next-edit benchmark: the embedded code model behind loopback HTTP.

The server's model predictor takes a tier whose provider accepts raw prompts (OpenAI-
compatible, Ollama, llama.cpp). The embedded code model (Qwen2.5-Coder-1.5B-Instruct
Q4_K_M, extra `local-coder`) is served here by `python -m llama_cpp.server` on 127.0.0.1
and a free port, as `providers/local_server.py` runs it; the benchmark points an OpenAI
`chat` tier at it, which is what a user does to try the instruct format on that model.
Zeta and Sweep weights are not installable here (no model hub is reachable): their formats
are exercised by the unit tests and the fake model only.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from lsp_assist.providers.local_server import free_port
from lsp_assist.providers.models import resolve_model

# Runs llama_cpp.server with the model loaded without llama.cpp's "extra" CPU buffer types
# (weight repacking for AMX and the like): on this machine the AMX kernels fault
# (`ldtilecfg` in ggml_backend_amx_mul_mat, SIGSEGV on the first decode: the virtual
# machine does not grant AMX tile state) and they are a speed-up only.
_LAUNCHER = """
import runpy, sys
import llama_cpp.llama_cpp as api
_default = api.llama_model_default_params
def _params():
    p = _default()
    p.use_extra_bufts = False
    return p
api.llama_model_default_params = _params
sys.argv = ["llama_cpp.server"] + sys.argv[1:]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


@contextlib.contextmanager
def model_server(name: str, cache_dir: Path, threads: int, n_ctx: int = 4096) -> Iterator[str]:
    """Start llama_cpp.server on `name`'s GGUF; yield its base URL (…/v1); stop it after."""
    path = resolve_model(name, cache_dir)
    port = free_port()
    args = [
        sys.executable, "-c", _LAUNCHER,
        "--model", str(path), "--model_alias", "coder",
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads),
        "--verbose", "False",
    ]  # fmt: skip
    log = open(cache_dir / "next-edit-model.log", "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(proc, base, timeout_s=300)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_ready(proc: subprocess.Popen[bytes], base: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {proc.returncode} while starting")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base}/models", timeout=2.0).status_code == 200:
                return
        time.sleep(0.5)
    raise RuntimeError(f"llama_cpp.server not ready within {timeout_s:.0f} s")


def warm(base: str) -> float:
    """One short chat request (loads the weights into memory); its seconds."""
    t0 = time.monotonic()
    httpx.post(
        f"{base}/chat/completions",
        json={"model": "coder", "messages": [{"role": "user", "content": "Say ok."}], "max_tokens": 4},
        timeout=300.0,
    ).raise_for_status()
    return time.monotonic() - t0
