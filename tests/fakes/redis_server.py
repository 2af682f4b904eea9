"""A real Redis server (Debian's `redis-server`) on a free loopback port, for the team tests.

Started without persistence (`--save ""`, no AOF) in a temporary directory; `kill()`
ends exactly this process by its PID (SIGKILL, as a crash would), `start()` brings it
back on the same port (empty: a restarted cache has lost its counters).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

REDIS_BINARY = "redis-server"


def redis_binary() -> str | None:
    return shutil.which(REDIS_BINARY)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    def __init__(self, workdir: Path, port: int | None = None) -> None:
        binary = redis_binary()
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.binary = binary
        self.workdir = workdir
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.workdir), "--daemonize", "no",
                "--protected-mode", "yes", "--loglevel", "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}")
            if self.ping():
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("redis-server did not answer PING in time")

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def command(self, *args: str) -> bytes:
        """One raw RESP command (tests read counters without a client library)."""
        parts = [f"*{len(args)}\r\n".encode()]
        for a in args:
            b = a.encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(b"".join(parts))
            return s.recv(65536)

    def kill(self) -> None:
        """SIGKILL this server's own process (by PID) and wait for it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None
