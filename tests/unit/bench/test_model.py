"""The bench's loopback model: its answers in each API and the times it records."""

from __future__ import annotations

import http.client
import json
import time
from typing import Any

from lsp_assist.bench.model import LoopbackModel, ModelProcess, Script, first_line_token, split_tokens

TEXT = "return a + b\n    # then\n"
SCRIPT = Script(TEXT, ttft_ms=40.0, tokens_per_s=200.0)


def post(model_port: int, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", model_port, timeout=10)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


def test_it_listens_on_loopback_only() -> None:
    with LoopbackModel(SCRIPT) as model:
        assert model.origin.startswith("http://127.0.0.1:")


def test_a_stream_records_request_first_line_and_last_token_times_in_order() -> None:
    tokens = split_tokens(TEXT)
    k = first_line_token(tokens)
    with LoopbackModel(SCRIPT) as model:
        t0 = time.monotonic()
        status, data = post(model.port, "/v1/completions", {"prompt": "x", "stream": True})
        t1 = time.monotonic()
        (rec,) = model.records()
    assert status == 200
    text = "".join(
        json.loads(line[6:])["choices"][0]["text"]
        for line in data.decode().split("\n")
        if line.startswith("data: {")
    )
    assert text == TEXT and b"data: [DONE]" in data
    assert rec.api == "completions" and rec.tokens == len(tokens)
    assert rec.t_first_line is not None and rec.t_last is not None
    assert t0 <= rec.t_read <= rec.t_first_line <= rec.t_last <= t1
    # The schedule: token i at ttft + i / rate after the request was read.
    assert rec.t_first_line - rec.t_read >= SCRIPT.token_at_s(k) - 0.001
    assert rec.t_last - rec.t_read >= SCRIPT.token_at_s(len(tokens) - 1) - 0.001


def test_chat_streams_deltas() -> None:
    with LoopbackModel(SCRIPT) as model:
        _, data = post(model.port, "/v1/chat/completions", {"messages": [], "stream": True})
        (rec,) = model.records()
    deltas = [
        json.loads(line[6:])["choices"][0]["delta"].get("content", "")
        for line in data.decode().split("\n")
        if line.startswith("data: {")
    ]
    assert "".join(deltas) == TEXT and rec.api == "chat"


def test_tabby_gets_the_first_line_when_a_stream_would_have_written_it() -> None:
    k = first_line_token(split_tokens(TEXT))
    with LoopbackModel(SCRIPT) as model:
        body = {"language": "python", "segments": {"prefix": "def f(a, b):\n    ", "suffix": ""}}
        status, data = post(model.port, "/v1/completions", body)
        (rec,) = model.records()
    assert status == 200
    assert json.loads(data)["choices"][0]["text"] == "return a + b\n"
    assert rec.api == "tabby" and rec.t_last is None and rec.tokens == k + 1
    assert rec.t_first_line is not None
    assert rec.t_first_line - rec.t_read >= SCRIPT.token_at_s(k) - 0.001


def test_health_and_reset() -> None:
    with LoopbackModel(SCRIPT) as model:
        conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
        conn.request("GET", "/v1/health")
        assert conn.getresponse().status == 200
        conn.close()
        post(model.port, "/v1/completions", {"prompt": "x"})
        assert len(model.records()) == 1
        model.reset()
        assert model.records() == []


def test_the_child_process_serves_and_reports_its_records() -> None:
    with ModelProcess(Script("x = 1\n", ttft_ms=0.0, tokens_per_s=1000.0)) as model:
        port = int(model.origin.rsplit(":", 1)[1])
        status, _ = post(port, "/v1/completions", {"prompt": "x", "stream": True})
        (rec,) = model.records()
        model.reset()
        assert model.records() == []
    assert status == 200 and rec.t_first_line is not None
    assert model.proc.returncode is not None  # ended when its stdin closed
