"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.fake_model_server import FakeModelServer
from tests.fakes.redis_server import RedisServer, redis_binary


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    """A loopback OpenAI-compatible fake model server, in this process, on an ephemeral port."""
    srv = FakeModelServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A real redis-server on a free loopback port (skips only when the binary is absent)."""
    if redis_binary() is None:
        pytest.skip("redis-server is not installed (Debian package redis-server; .ci/run installs it)")
    srv = RedisServer(tmp_path / "redis").start()
    try:
        yield srv
    finally:
        srv.stop()
