"""The embedded model as a managed llama-cpp-python server (`local.backend = "server"`).

The default backend is in-process (`providers/local.py`, with KV-cache reuse); this one
is kept for isolation and as the baseline of ``benchmarks/local_latency.py``. The model
runs in a child process, ``python -m llama_cpp.server`` on 127.0.0.1 and a free port, started on first use.
- A crash, an out-of-memory kill or a slow model load never takes the LSP server down
  or stalls its event loop (no GIL contention with our process).
- Stopping early is the same as for remote servers: closing the HTTP response makes
  llama-cpp-python's server see the disconnect and stop generating at the next token.
- Its output goes to ``<cache_dir>/logs/local-model.log``, never to our stdout (the
  LSP stdio channel).
- It is wrapped in a tiny launcher that exits when its stdin pipe closes, so the child
  dies with us even if we are SIGKILLed; `aclose` and an atexit hook stop it otherwise.

Streaming then goes through `OpenAIProvider` (api "completions"). Gemma 3 270M and
SmolLM2 have no FIM tokens, so "auto" renders a prefix-only prompt unless the GGUF's
name says it is a FIM model (qwen2.5-coder, starcoder...).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

import httpx

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.context.templates import is_fim_model
from lsp_assist.domain import ModelRequest, StreamChunk
from lsp_assist.errors import ProviderError, Unavailable
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.models import INSTALL_HINT, resolve_model
from lsp_assist.providers.openai import OpenAIProvider, ServerFlavor

# Runs llama_cpp.server and exits as soon as the parent's end of stdin closes.
_LAUNCHER = """
import os, runpy, sys, threading
def _watch():
    try:
        while sys.stdin.buffer.read(1):
            pass
    finally:
        os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
if os.environ.get("LSP_ASSIST_NO_EXTRA_BUFTS") == "1":  # llama_engine.amx_faults()
    import llama_cpp.llama_cpp as lib
    _defaults = lib.llama_model_default_params
    def _without_extra_bufts():
        params = _defaults()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params
    lib.llama_model_default_params = _without_extra_bufts
sys.argv = ["llama_cpp.server"] + sys.argv[1:]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def _child_env() -> dict[str, str]:
    """The child's environment: ours, plus the extra-buffer switch where AMX faults."""
    from lsp_assist.providers.llama_engine import amx_faults

    return {**os.environ, "LSP_ASSIST_NO_EXTRA_BUFTS": "1" if amx_faults() else "0"}


_SERVER_MODULES = (
    "llama_cpp",
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
MODEL_ALIAS = "local"


def missing_modules() -> list[str]:
    """Which of the server's modules are not importable (checked without importing)."""
    return [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServerProvider:
    """A `Provider` backed by a managed llama.cpp server.

    `single_slot`: the server generates one stream at a time and interrupts the running
    one when another arrives; the pipeline closes older streams itself before starting one.

    `tier.model` (or `local.model` when the tier names none) is "gemma3-270m", "smollm2"
    or a GGUF path. `cache_dir` holds the assembled model and the server log.
    """

    def __init__(
        self,
        tier: TierConfig,
        local: LocalConfig,
        clients: ClientPool,
        cache_dir: Path,
        *,
        python: str = sys.executable,
    ) -> None:
        self._tier = tier
        self._local = local
        self._clients = clients
        self._cache_dir = Path(cache_dir)
        self._python = python
        name = tier.model or local.model
        self._model_name = "gemma3-270m" if name == "auto" else name  # roles.apply resolves "auto"
        self.single_slot = True
        self._lock = asyncio.Lock()
        self._proc: asyncio.subprocess.Process | None = None
        self._inner: OpenAIProvider | None = None
        self._log_path = self._cache_dir / "logs" / "local-model.log"
        self._atexit = False

    # -- Provider protocol ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "local"

    @property
    def model(self) -> str:
        return self._model_name

    @property
    def endpoint_host(self) -> str | None:
        return "127.0.0.1"

    @property
    def base_url(self) -> str | None:
        """The managed server's URL once started."""
        return self._inner.base_url if self._inner is not None else None

    @property
    def log_path(self) -> Path:
        return self._log_path

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        inner = await self._ensure_started()
        async for chunk in inner.stream(request):
            yield chunk

    async def warm(self) -> None:
        try:
            inner = await self._ensure_started()
            await inner.warm()
        except (ProviderError, OSError):
            return

    async def aclose(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after 5 s). A later request restarts it."""
        proc, self._proc, self._inner = self._proc, None, None
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 5.0)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        if proc.stdin is not None:
            proc.stdin.close()

    # -- the managed server -----------------------------------------------------------------------
    def _kill_now(self) -> None:
        """atexit: stop the child synchronously (the loop may be gone)."""
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, OSError):
                os.kill(proc.pid, 15)

    def _open_log(self) -> BinaryIO:
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        return open(self._log_path, "ab")

    async def _ensure_started(self) -> OpenAIProvider:
        inner, proc = self._inner, self._proc
        if inner is not None and proc is not None and proc.returncode is None:
            return inner
        async with self._lock:
            if self._inner is not None and self._proc is not None and self._proc.returncode is None:
                return self._inner
            self._inner = await self._start()
            return self._inner

    async def _start(self) -> OpenAIProvider:
        missing = missing_modules()
        if missing:
            raise Unavailable(f"the local model needs {', '.join(missing)}: {INSTALL_HINT}")
        path = await asyncio.to_thread(resolve_model, self._model_name, self._cache_dir)
        port = free_port()
        # All cores but one: llama.cpp's threads spin, and with the editor and the language
        # server competing for every core its speed collapses (measured here on 2 loaded
        # cores: 2 threads read a 400-token prompt 4x slower than 1 thread).
        threads = self._local.threads or max(1, (os.cpu_count() or 2) - 1)
        batch_threads = threads
        args = [
            "--model", str(path),
            "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--n_ctx", str(self._local.n_ctx),
            "--n_threads", str(threads),
            "--n_threads_batch", str(batch_threads),
            # Verbose only for measurement: llama-cpp-python then logs each prompt's
            # prefix-match hit, which benchmarks/local_latency.py reads for the baseline.
            "--verbose", "True" if os.environ.get("LSP_ASSIST_LOCAL_SERVER_VERBOSE") else "False",
            "--interrupt_requests", "True",
        ]  # fmt: skip
        if not self._atexit:  # registered only once a child exists, so unused providers leak nothing
            atexit.register(self._kill_now)
            self._atexit = True
        log = await asyncio.to_thread(self._open_log)
        try:
            self._proc = await asyncio.create_subprocess_exec(
                self._python, "-c", _LAUNCHER, *args,
                stdin=subprocess.PIPE, stdout=log, stderr=log, env=_child_env(),
            )  # fmt: skip
        finally:
            log.close()  # the child has its own copy of the descriptor
        base_url = f"http://127.0.0.1:{port}/v1"
        await self._wait_ready(base_url)
        tier = replace(
            self._tier,
            provider="local",
            api="completions",
            base_url=base_url,
            model=MODEL_ALIAS,
            api_key_env="",
        )
        # Gemma 3 / SmolLM2 have no FIM tokens: "auto" means prefix-only for them.
        fim = is_fim_model(path.name)
        flavor = ServerFlavor(
            name="local",
            default_template="plain" if fim else "none",
            template_model=path.name,
            # llama-cpp-python's /v1/models takes the model lock, and with interrupt_requests a
            # waiting lock-taker interrupts the running stream: warm connections on a route
            # that never touches the model (FastAPI's docs page).
            warm_path="/../docs",
        )
        return OpenAIProvider(tier, self._clients, None, flavor=flavor)

    async def _wait_ready(self, base_url: str) -> None:
        """Poll GET /models until 200, the child exits, or startup_timeout_s passes."""
        proc = self._proc
        assert proc is not None
        deadline = time.monotonic() + self._local.startup_timeout_s
        client = self._clients.get(base_url)
        delay = 0.05
        while True:
            if proc.returncode is not None:
                raise Unavailable(
                    f"the local model server exited with code {proc.returncode} while starting; "
                    f"see {self._log_path}"
                )
            try:
                resp = await client.get(f"{base_url}/models", timeout=httpx.Timeout(1.0))
                await resp.aclose()
                if resp.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                await self.aclose()
                raise Unavailable(
                    f"the local model server was not ready within {self._local.startup_timeout_s:.0f} s; "
                    f"see {self._log_path}"
                )
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), delay)
            delay = min(delay * 1.5, 0.5)


__all__ = ["MODEL_ALIAS", "LocalServerProvider", "free_port", "missing_modules"]
