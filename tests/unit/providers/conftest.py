"""Fixtures for the provider tests: a running fake model server and a client pool."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

# `tests.fakes` is imported by absolute name: make the repository root importable when
# pytest is started as a console script (which does not put the cwd on sys.path).
_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from lsp_assist.config.schema import LocalConfig, TierConfig  # noqa: E402
from lsp_assist.domain import ModelRequest, PromptContext  # noqa: E402
from lsp_assist.errors import Unavailable  # noqa: E402
from lsp_assist.providers.http import ClientPool  # noqa: E402
from lsp_assist.providers.local import LocalProvider  # noqa: E402
from lsp_assist.providers.models import resolve_model  # noqa: E402
from tests.fakes.fake_model_server import FakeModelServer  # noqa: E402

SECRET_KEY = "sk-test-SECRET-0123456789abcdef"


async def loaded_gemma(tmp_path: Path, local: LocalConfig) -> LocalProvider:
    """The embedded Gemma as a `LocalProvider` with `local`, loaded; the test is skipped
    where the model cannot be had. The real-model tests' common start."""
    try:
        resolve_model("gemma3-270m", tmp_path)
    except Unavailable as exc:
        pytest.skip(str(exc))
    p = LocalProvider(TierConfig(provider="local", model="gemma3-270m"), local, tmp_path)
    await asyncio.wait_for(p.ready(), 120)
    # The healing index is built after the load (~0.3 s, longer on a loaded machine): a
    # request before it is not healed, so two answers compared token for token could differ.
    engine = p._loader.engine
    for _ in range(400 if local.token_healing else 0):
        if engine.heal_index is not None:
            break
        await asyncio.sleep(0.05)
    return p


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer() as srv:
        yield srv


@pytest.fixture
async def pool() -> AsyncIterator[ClientPool]:
    p = ClientPool()
    yield p
    await p.aclose_all()


def tier_for(srv: FakeModelServer, **kw: object) -> TierConfig:
    base: dict[str, object] = {
        "provider": "openai",
        "base_url": srv.base_url,
        "model": "fake-model",
        "fim_template": "plain",
    }
    base.update(kw)
    return TierConfig(**base)  # type: ignore[arg-type]


def request_for(prefix: str = "def add(a, b):\n    ", suffix: str = "\n", **kw: object) -> ModelRequest:
    ctx = PromptContext(language="python", path="src/calc.py", prefix=prefix, suffix=suffix)
    args: dict[str, object] = {"max_tokens": 32, "temperature": 0.0}
    args.update(kw)
    return ModelRequest(ctx, **args)  # type: ignore[arg-type]
