"""The command line: complete, doctor, context, stats and serve --tcp, as a user runs them."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import ROOT, isolated_env
from tests.fakes.fake_model_server import FakeModelServer, Script


def write_config(tmp_path: Path, body: str) -> dict[str, str]:
    env = isolated_env(tmp_path)
    cfg = tmp_path / "config.toml"
    cfg.write_text(body, encoding="utf-8")
    env["LSP_ASSIST_CONFIG"] = str(cfg)
    return env


def run(args: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_assist", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def openai_config(base_url: str) -> str:
    return f'[tiers.fast]\nprovider = "openai"\nbase_url = "{base_url}"\nmodel = "fake-coder"\n'


def test_complete_prints_the_suggestion_and_its_stages(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n")
    env = write_config(tmp_path, openai_config(fake.base_url))
    src = tmp_path / "calc.py"
    src.write_text("def add(a, b):\n    \n", encoding="utf-8")
    out = run(["complete", f"{src}:2:5"], env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "return a + b"
    assert "ttft=" in out.stderr and "total=" in out.stderr  # stages on stderr, code on stdout
    js = run(["complete", f"{src}:2:5", "--json"], env)
    data = json.loads(js.stdout)
    assert data["text"] == "return a + b" and data["provider"] == "openai" and "total" in data["stages_ms"]


def test_complete_rejects_a_bad_location(tmp_path: Path) -> None:
    out = run(["complete", "nowhere"], isolated_env(tmp_path))
    assert out.returncode == 2 and "FILE:LINE:COL" in out.stderr


def test_doctor_reports_reachability_and_missing_keys(tmp_path: Path, fake: FakeModelServer) -> None:
    env = write_config(
        tmp_path, openai_config(fake.base_url) + 'api_key_env = "LSP_ASSIST_TEST_MISSING_KEY"\n'
    )
    env.pop("LSP_ASSIST_TEST_MISSING_KEY", None)
    out = run(["doctor", "--workspace", str(tmp_path)], env)
    assert "reachable (GET /models -> 200)" in out.stdout
    assert "LSP_ASSIST_TEST_MISSING_KEY" in out.stdout and "missing" in out.stdout
    assert out.returncode == 1  # a missing key is a problem to fix
    env2 = write_config(tmp_path, openai_config("http://127.0.0.1:9/v1"))
    out2 = run(["doctor", "--workspace", str(tmp_path)], env2)
    assert "UNREACHABLE" in out2.stdout and out2.returncode == 1


def test_context_shows_labelled_parts(tmp_path: Path) -> None:
    src = tmp_path / "calc.py"
    src.write_text("import math\n\n\ndef area(r):\n    return math.pi * r * r\n\n\ndef circ(r):\n    \n")
    out = run(["context", f"{src}:9:5", "--json"], isolated_env(tmp_path))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    text = json.dumps(data)
    assert "imports" in text and "prefix" in text


def test_stats_reads_the_recorded_requests(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n")
    env = write_config(tmp_path, openai_config(fake.base_url))
    src = tmp_path / "calc.py"
    src.write_text("def add(a, b):\n    \n", encoding="utf-8")
    assert run(["complete", f"{src}:2:5"], env).returncode == 0
    out = run(["stats", "--json"], env)
    rep = json.loads(out.stdout)
    assert rep["requests"] >= 1 and "total" in rep["stages"]


async def test_serve_tcp_binds_loopback_only(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lsp_assist",
        "serve",
        "--tcp",
        str(port),
        env=isolated_env(tmp_path),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        reader = writer = None
        for _ in range(100):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        assert reader is not None and writer is not None
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            }
        ).encode()
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
        length = int(header.split(b":")[1].split(b"\r\n")[0])
        reply = json.loads(await asyncio.wait_for(reader.readexactly(length), 20))
        assert reply["result"]["capabilities"]["inlineCompletionProvider"] is not None
        listening = ""
        if shutil.which("ss"):
            ss = await asyncio.to_thread(subprocess.run, ["ss", "-ltn"], capture_output=True, text=True)
            listening = ss.stdout
        if listening:
            assert f"0.0.0.0:{port}" not in listening and f"*:{port}" not in listening
        writer.close()
    finally:
        proc.kill()
        await proc.wait()


def test_context_labels_each_outline_and_why_it_was_chosen(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(
        "class Circle:\n    def __init__(self, r):\n        self.radius = r\n"
        "    def scaled(self, k):\n        return Circle(self.radius * k)\n\n\nUNIT = 1.0\n"
    )
    src = tmp_path / "main.py"
    src.write_text("from shapes import Circle\n\n\ndef grow(c):\n    big = Circle(2)\n    \n")
    out = run(["context", f"{src}:6:5", "--json"], isolated_env(tmp_path))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    outline = next(s for s in data["snippets"] if s["reason"] == "outline")
    assert outline["path"].endswith("shapes.py") and "class Circle:" in outline["text"]
    assert "radius" in outline["text"] and "scaled" in outline["text"]
    assert "imported by this file" in outline["why"]
    labels = {p["label"]: p["reason"] for p in data["parts"]}
    assert "outline:shapes.py" in labels and "imported by this file" in labels["outline:shapes.py"]
    text_out = run(["context", f"{src}:6:5"], isolated_env(tmp_path)).stdout
    assert "chosen because: imported by this file" in text_out


def test_doctor_prints_each_roles_model_and_why(tmp_path: Path) -> None:
    # --no-measure: the rates are estimated (a shared test machine is never quiet).
    out = run(["doctor", "--no-measure", "--workspace", str(tmp_path)], isolated_env(tmp_path))
    assert "roles:" in out.stdout, out.stdout
    for role in ("typing:", "rewrite:", "quality:", "next edit:"):
        assert f"  {role}" in out.stdout, out.stdout
    if "local models: none installed" not in out.stdout:
        assert "prompt tokens/s" in out.stdout and "estimated" in out.stdout, out.stdout
        assert "typing writes on one thread until the model's rates are measured" in out.stdout
