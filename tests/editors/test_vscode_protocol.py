"""Runs the VS Code extension's own tests (`npm test` in editors/vscode).

`npm test` compiles the extension with `tsc --strict` and runs node's test runner: unit tests
for the settings nesting, server discovery and restart backoff, and a protocol test that drives
the real `lsp-assist serve` with vscode-languageserver-protocol against the fake model server.
Installs node_modules with `npm ci` when missing (needs the npm registry or a warm npm cache);
skips when npm is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.node

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"


def test_vscode_extension_npm_test() -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm not found")
    if not (EXTENSION / "node_modules").is_dir():
        ci = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=EXTENSION, capture_output=True, text=True, timeout=300
        )
        assert ci.returncode == 0, f"npm ci failed:\n{ci.stdout[-3000:]}\n{ci.stderr[-3000:]}"
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        # The protocol test must not silently skip here: this venv is the one under test.
        "LSP_ASSIST_REQUIRE_SERVER": "1",
        "LSP_ASSIST_PYTHON": sys.executable,
        "LSP_ASSIST_SERVER": str(bin_dir / "lsp-assist"),
    }
    proc = subprocess.run([npm, "test"], cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "# fail 0" in output or "ℹ fail 0" in output, output[-3000:]
    assert "textDocument/inlineCompletion returns the model text" in output, output[-3000:]
