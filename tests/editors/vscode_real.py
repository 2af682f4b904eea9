"""A real VS Code for the tests: code-server 4.100.3 in headless Chromium, driven by puppeteer-core.

`ensure_installed()` runs editors/vscode/e2e/setup.sh (cached outside the repository, so a
second run returns at once); `CodeServer` starts code-server with the built .vsix installed
and a workspace whose `.vscode/settings.json` points the extension at this checkout's server
and the loopback fake model; `drive()` runs editors/vscode/e2e/drive.js and returns what it
saw. code-server keeps the extension host (and the language server it started) alive after
the browser leaves, so the whole process group is ended at the end, by its id.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
SETUP = EXTENSION / "e2e" / "setup.sh"
DRIVER = EXTENSION / "e2e" / "drive.js"
CHROMIUM = "/usr/bin/chromium"


class Unavailable(Exception):
    """code-server, Chromium or puppeteer-core cannot be installed here (the reason)."""


def ensure_installed() -> Path:
    """The install directory; raises Unavailable with the setup script's reason."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise Unavailable("node/npm not found")
    proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=1500)
    if proc.returncode != 0:
        raise Unavailable(f"editors/vscode/e2e/setup.sh failed (rc={proc.returncode}): {proc.stderr[-1500:]}")
    where = Path(proc.stdout.strip().splitlines()[-1])
    if not (where / "code-server" / "out" / "node" / "entry.js").exists() or not Path(CHROMIUM).exists():
        raise Unavailable(f"code-server or {CHROMIUM} missing after setup")
    return where


def build_vsix() -> Path:
    npm = shutil.which("npm")
    assert npm is not None
    if not (EXTENSION / "node_modules").is_dir():
        ci = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=EXTENSION, capture_output=True, text=True
        )
        assert ci.returncode == 0, ci.stderr[-3000:]
    proc = subprocess.run([npm, "run", "package"], cwd=EXTENSION, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    vsix = EXTENSION / "lsp-assist.vsix"
    assert vsix.exists()
    return vsix


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class CodeServer:
    """One code-server on 127.0.0.1 with the extension installed; a context manager."""

    def __init__(
        self, install: Path, vsix: Path, root: Path, settings: dict[str, Any], files: dict[str, str]
    ):
        self.install = install
        self.root = root
        self.port = free_port()
        self.workspace = root / "ws"
        (self.workspace / ".vscode").mkdir(parents=True)
        (self.workspace / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2))
        for name, text in files.items():
            (self.workspace / name).write_text(text)
        user = root / "user-data" / "User"
        user.mkdir(parents=True)
        # Read once at start-up (changes from outside later are not picked up).
        (user / "settings.json").write_text(
            json.dumps(
                {
                    "security.workspace.trust.enabled": False,
                    "workbench.startupEditor": "none",
                    "workbench.tips.enabled": False,
                    "telemetry.telemetryLevel": "off",
                    "extensions.autoCheckUpdates": False,
                    "extensions.autoUpdate": False,
                    "update.mode": "none",
                }
            )
        )
        self.config = root / "code-server.yaml"
        self.config.write_text(f"bind-addr: 127.0.0.1:{self.port}\nauth: none\ncert: false\n")
        self.entry = install / "code-server" / "out" / "node" / "entry.js"
        self.base = [
            "node",
            str(self.entry),
            "--config",
            str(self.config),
            "--user-data-dir",
            str(root / "user-data"),
            "--extensions-dir",
            str(root / "extensions"),
        ]
        self.env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "LSP_ASSIST_CACHE_DIR": str(root / "cache"),
            "LSP_ASSIST_CONFIG": str(root / "no-user-config.toml"),
            "LSP_ASSIST_POLICY": str(root / "no-policy.toml"),
            "HOME": str(root / "home"),
        }
        (root / "home").mkdir()
        install_out = subprocess.run(
            [*self.base, "--install-extension", str(vsix)],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
        )
        assert install_out.returncode == 0 and "successfully installed" in install_out.stdout, install_out
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = root / "code-server.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={self.workspace}"

    def __enter__(self) -> CodeServer:
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [*self.base, str(self.workspace)],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: extension host and servers too
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"code-server exited: {self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2):
                    return self
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"code-server did not come up: {self.log.read_text()[-3000:]}")

    def __exit__(self, *exc: object) -> None:
        proc = self.proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # the group this test started, by its id
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        # Children that outlived the leader (the extension host, the language server).
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def drive(install: Path, server: CodeServer, shots: Path, **spec: Any) -> dict[str, Any]:
    shots.mkdir(parents=True, exist_ok=True)
    full = {
        "driverDir": str(install / "driver"),
        "chromium": CHROMIUM,
        "url": server.url,
        "shots": str(shots),
        **spec,
    }
    proc = subprocess.run(
        ["node", str(DRIVER), json.dumps(full)], capture_output=True, text=True, timeout=240, env=server.env
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"driver printed nothing (rc={proc.returncode}): {proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1])
    result["code_server_log"] = server.log.read_text(errors="replace")[-4000:]
    # The extension's output channel (the server's log lines arrive there as logMessage).
    logs = sorted((server.root / "user-data" / "logs").glob("*/exthost*/lsp-assist.lsp-assist/*.log"))
    result["extension_log"] = logs[-1].read_text(errors="replace")[-4000:] if logs else ""
    return result


def python_server() -> str:
    return str(Path(sys.executable).with_name("lsp-assist"))
