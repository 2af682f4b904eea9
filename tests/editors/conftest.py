"""Editor tests: each test marked `nvim` runs on every Neovim version (nvim_versions.py)."""

from __future__ import annotations

import pytest

from tests.editors import nvim_versions


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("nvim") is not None:
        metafunc.fixturenames.append("nvim_version")
        metafunc.parametrize("nvim_version", nvim_versions.VERSIONS)


@pytest.fixture(autouse=True)
def _nvim_binary(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The binary of the test's Neovim version, for tests/editors' runners (or a skip)."""
    callspec = getattr(request.node, "callspec", None)
    version = callspec.params.get("nvim_version") if callspec is not None else None
    if version is None:
        return
    try:
        path = nvim_versions.binary(version)
    except nvim_versions.Unavailable as exc:
        pytest.skip(f"Neovim {version} unavailable: {exc}")
    monkeypatch.setenv(nvim_versions.ENV, path)
    monkeypatch.setenv(nvim_versions.ENV_VERSION, version)
