"""The fake model server itself: rules, queueing, subprocess mode."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.fakes.fake_model_server import FakeModelServer, Script, split_tokens

ROOT = Path(__file__).resolve().parents[3]


def post(url: str, body: dict[str, object]) -> str:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return str(r.read().decode())


def streamed_text(raw: str) -> str:
    out = []
    for line in raw.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            for ch in json.loads(line[6:])["choices"]:
                out.append(ch.get("text") or ch.get("delta", {}).get("content") or "")
    return "".join(out)


def test_split_tokens_round_trips() -> None:
    text = "def f(x):\n    return x  # é\n\n"
    assert "".join(split_tokens(text)) == text and len(split_tokens(text)) > 5


def test_rules_queue_and_default() -> None:
    with FakeModelServer(default=Script(text="DEFAULT")) as srv:
        srv.add_rule(r"def add\(", "return a + b")
        srv.push(Script(text=lambda body: f"echo {body['max_tokens']}"))
        url = srv.base_url + "/completions"
        assert streamed_text(post(url, {"prompt": "def add(", "stream": True, "max_tokens": 5})) == "echo 5"
        assert streamed_text(post(url, {"prompt": "def add(", "stream": True})) == "return a + b"
        assert streamed_text(post(url, {"prompt": "other", "stream": True})) == "DEFAULT"
        whole = json.loads(post(url, {"prompt": "other", "stream": False}))
        assert whole["choices"][0]["text"] == "DEFAULT"
        srv.wait_for(lambda s: s.streams_completed == 3, 5.0)  # counted just after the last write
        assert srv.stats.streams_completed == 3 and len(srv.model_requests()) == 4


def test_subprocess_mode_prints_port_and_serves() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.fake_model_server", "--port", "0", "--text", "hi there"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("PORT=")
        base = f"http://127.0.0.1:{int(line[5:])}"
        assert streamed_text(post(base + "/v1/completions", {"prompt": "x", "stream": True})) == "hi there"
        post(base + "/_control/push", {"text": "pushed"})
        raw = post(
            base + "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "stream": True}
        )
        assert streamed_text(raw) == "pushed"
        with urllib.request.urlopen(base + "/_control/stats", timeout=5) as r:
            assert json.loads(r.read())["streams_completed"] == 2
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_oracle_continues_what_the_prompt_ends_with() -> None:
    target = "total = items_subtotal(items)\n"
    with FakeModelServer(default=Script(oracle=target)) as srv:
        url = srv.base_url + "/completions"
        assert (
            streamed_text(post(url, {"prompt": "def f():\n    tot", "stream": True}))
            == "al = items_subtotal(items)\n"
        )
        assert streamed_text(post(url, {"prompt": "x = 1\n", "stream": True})) == target
    with FakeModelServer(default=Script(oracle=target, oracle_chars=4)) as srv:
        url = srv.base_url + "/completions"
        assert streamed_text(post(url, {"prompt": "    tot", "stream": True})) == "al =\n"


def test_an_abandoned_request_holds_the_one_slot_until_its_prefill_ends() -> None:
    import socket
    import time

    with FakeModelServer(default=Script(text="x", ttft_ms=400, prefill_ms=300), max_concurrent=1) as srv:
        body = json.dumps({"prompt": "a", "stream": True}).encode()
        head = f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        sock = socket.create_connection(("127.0.0.1", srv.port))
        sock.sendall(head + body)
        assert srv.wait_for(lambda s: s.streams_started == 1, 5.0)
        t0 = time.monotonic()
        sock.close()  # abandoned during the prefill
        post(srv.base_url + "/completions", {"prompt": "b", "stream": True})
        waited = time.monotonic() - t0
        assert srv.stats.streams_aborted == 1
        # The second request waited for the first one's prefill, then its own 400 ms.
        assert waited >= 0.25 + 0.4
