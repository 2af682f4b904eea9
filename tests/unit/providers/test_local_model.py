"""The embedded model's managed-server backend (`local.backend = "server"`), for real
(marked `model`: needs the 'local' extra). The in-process backend: test_local_inprocess.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.domain import ModelRequest, PromptContext
from lsp_assist.errors import Unavailable
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.local_server import LocalServerProvider, missing_modules
from lsp_assist.providers.models import resolve_model


def _model_or_skip(tmp: Path) -> None:
    if missing_modules():
        pytest.skip(f"missing {missing_modules()}")
    try:
        resolve_model("smollm2", tmp)
    except Unavailable as exc:
        pytest.skip(str(exc))


async def test_unknown_model_path_is_unavailable(tmp_path: Path) -> None:
    pool = ClientPool()
    p = LocalServerProvider(
        TierConfig(provider="local", model=str(tmp_path / "nope.gguf")), LocalConfig(), pool, tmp_path
    )
    if missing_modules():
        with pytest.raises(Unavailable, match="lsp-assist\\[local\\]"):
            _ = [c async for c in p.stream(ModelRequest(PromptContext("python", "a.py", "x", ""), 4, 0.0))]
    else:
        with pytest.raises(Unavailable, match=r"nope\.gguf"):
            _ = [c async for c in p.stream(ModelRequest(PromptContext("python", "a.py", "x", ""), 4, 0.0))]
    await pool.aclose_all()


@pytest.mark.model
async def test_streams_a_real_completion(tmp_path: Path) -> None:
    _model_or_skip(tmp_path)
    pool = ClientPool()
    p = LocalServerProvider(
        TierConfig(provider="local", model="smollm2"),
        LocalConfig(n_ctx=512, startup_timeout_s=60),
        pool,
        tmp_path,
    )
    try:
        ctx = PromptContext("python", "calc.py", "def add(a, b):\n    return", "\n")
        chunks = []

        async def run() -> None:
            async for c in p.stream(ModelRequest(ctx, max_tokens=12, temperature=0.0)):
                chunks.append(c)

        await asyncio.wait_for(run(), 60)
        assert "".join(c.text for c in chunks).strip()
        # llama-cpp-python's server sends no usage chunk when streaming: nothing to check there.
        assert any(c.finish_reason for c in chunks)
        assert (tmp_path / "logs" / "local-model.log").exists()
    finally:
        await p.aclose()
        await pool.aclose_all()
