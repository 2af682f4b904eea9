"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.fake_model_server import FakeModelServer


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    """A loopback OpenAI-compatible fake model server, in this process, on an ephemeral port."""
    srv = FakeModelServer().start()
    try:
        yield srv
    finally:
        srv.stop()
