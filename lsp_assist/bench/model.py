"""The loopback model every server in a bench run talks to, bound to 127.0.0.1 only.

It speaks the OpenAI streaming API (`POST /v1/completions`, `POST /v1/chat/completions`,
`GET /v1/models`) and the Tabby API (`POST /v1/completions` with `segments`, `GET /v1/health`).
Every answer is the same `Script`: a text sent token by token, the first token `ttft_ms` after
the request, then `tokens_per_s`. A Tabby client gets one JSON answer, the text up to the end
of its first line, sent when a stream would send the token that ends that line: the latency
a streaming server needs for the same line.

Per request it records, on `time.monotonic()` (CLOCK_MONOTONIC is system-wide on Linux, so
the client's times compare), when the request line was read, when the token ending the first
line was written and when the last one was. `ModelProcess` runs it in a child process, so
its threads never hold the measuring client's GIL, and reads the records over HTTP.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"
_TOKEN_RE = re.compile(r"\s*\S{1,3}|\s+", re.S)


def split_tokens(text: str) -> list[str]:
    """Small "tokens" (up to 3 visible characters and the whitespace before them); joined,
    they give `text` back."""
    return _TOKEN_RE.findall(text)


def first_line_token(tokens: list[str]) -> int:
    """The index of the token that ends the first line (the last token when none does)."""
    return next((i for i, t in enumerate(tokens) if "\n" in t), len(tokens) - 1)


@dataclass
class Script:
    text: str = "pass\n"
    ttft_ms: float = 120.0
    tokens_per_s: float = 125.0

    def token_at_s(self, i: int) -> float:
        """Seconds from the request to token `i` of the stream."""
        return self.ttft_ms / 1000.0 + (i / self.tokens_per_s if self.tokens_per_s > 0 else 0.0)


@dataclass
class StreamRecord:
    """One model request, its times on the monotonic clock."""

    api: str  # "completions" | "chat" | "tabby"
    t_read: float  # the request line was read
    t_first_line: float | None = None  # the token ending the first line was written
    t_last: float | None = None  # the stream's last token was written (None: not read to its end)
    tokens: int = 0  # tokens written
    body: dict[str, Any] = field(default_factory=dict)


class LoopbackModel:
    """The model in this process (tests; `ModelProcess` runs it in another)."""

    def __init__(self, script: Script | None = None, port: int = 0) -> None:
        self.script = script or Script()
        self._records: list[StreamRecord] = []
        self._lock = threading.Lock()
        self._server = _Server((HOST, port), _Handler)
        self._server.model = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="bench-model", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> LoopbackModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add(self, record: StreamRecord) -> None:
        with self._lock:
            self._records.append(record)

    def records(self) -> list[StreamRecord]:
        with self._lock:
            return [StreamRecord(**asdict(r)) for r in self._records]

    def reset(self) -> None:
        with self._lock:
            self._records.clear()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    model: LoopbackModel

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-stream (a cancelled request) is no error here


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as model clients pool connections
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        with contextlib.suppress(OSError):  # each token leaves at once
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def parse_request(self) -> bool:
        # The request line is here: from now on the time is the model's, not the server's.
        self._t_read = time.monotonic()
        return super().parse_request()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        model = self.server.model
        if path.endswith("/health"):
            self._json({"model": "bench-loopback", "device": "cpu", "version": {"git_describe": "bench"}})
        elif path.endswith("/models"):
            self._json({"object": "list", "data": [{"id": "bench-loopback", "object": "model"}]})
        elif path == "/_bench/records":
            self._json({"records": [asdict(r) for r in model.records()]})
        else:
            self._json({"error": {"message": f"no route {path}"}}, 404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b"{}"
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        path = self.path.split("?", 1)[0]
        if path.startswith("/_bench/"):
            self._control(path, body)
        elif path.endswith("/completions"):
            self._answer(path, body)
        else:
            self._json({"error": {"message": f"no route {path}"}}, 404)

    def _control(self, path: str, body: dict[str, Any]) -> None:
        model = self.server.model
        if path == "/_bench/reset":
            model.reset()
        elif path == "/_bench/script":
            model.script = Script(**body)
        self._json({"ok": True})

    def _answer(self, path: str, body: dict[str, Any]) -> None:
        model = self.server.model
        script = model.script
        api = "chat" if "/chat/" in path else "completions"
        api = "tabby" if isinstance(body.get("segments"), dict) else api
        record = StreamRecord(api, self._t_read, body={k: v for k, v in body.items() if k != "segments"})
        model.add(record)
        tokens = split_tokens(script.text)
        try:
            if api == "tabby":
                self._tabby(script, tokens, record)
            elif body.get("stream"):
                self._stream(script, tokens, record, chat=api == "chat")
            else:
                self._whole(script, tokens, record, chat=api == "chat")
        except _ClientGone:
            self.close_connection = True

    def _until(self, t: float) -> None:
        left = t - time.monotonic()
        if left > 0:
            time.sleep(left)

    def _tabby(self, script: Script, tokens: list[str], record: StreamRecord) -> None:
        k = first_line_token(tokens)
        self._until(record.t_read + script.token_at_s(k))
        text = "".join(tokens[: k + 1])
        text = text[: text.index("\n") + 1] if "\n" in text else text
        record.tokens = k + 1
        record.t_first_line = time.monotonic()
        self._json({"id": "bench", "choices": [{"index": 0, "text": text}]})

    def _whole(self, script: Script, tokens: list[str], record: StreamRecord, chat: bool) -> None:
        self._until(record.t_read + script.token_at_s(len(tokens) - 1))
        text = "".join(tokens)
        choice = {"index": 0, "finish_reason": "stop"}
        choice.update({"message": {"role": "assistant", "content": text}} if chat else {"text": text})
        record.tokens = len(tokens)
        record.t_first_line = record.t_last = time.monotonic()
        self._json({"id": "bench", "object": "completion", "choices": [choice]})

    def _stream(self, script: Script, tokens: list[str], record: StreamRecord, chat: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        k = first_line_token(tokens)
        for i, tok in enumerate(tokens):
            self._until(record.t_read + script.token_at_s(i))
            self._event(_chunk(tok, None, chat))
            record.tokens = i + 1
            if i == k:
                record.t_first_line = time.monotonic()
        record.t_last = time.monotonic()
        self._event(_chunk("", "stop", chat))
        self._event("[DONE]")
        self._write(b"0\r\n\r\n")

    def _event(self, payload: dict[str, Any] | str) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        frame = f"data: {data}\n\n".encode()
        self._write(b"%x\r\n%s\r\n" % (len(frame), frame))

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc

    def _json(self, payload: dict[str, Any], status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(data)
            self.wfile.flush()


def _chunk(tok: str, finish: str | None, chat: bool) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
    choice.update({"delta": {"content": tok} if tok else {}} if chat else {"text": tok})
    kind = "chat.completion.chunk" if chat else "text_completion"
    return {"id": "bench", "object": kind, "created": int(time.time()), "choices": [choice]}


class ModelProcess:
    """`LoopbackModel` in a child process, ended by its PID (it also exits when its stdin
    closes, so it never outlives this process)."""

    def __init__(self, script: Script, timeout_s: float = 10.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_assist.bench.model"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = _readline(self.proc.stdout, timeout_s)
        if not line.startswith("PORT="):
            self.close()
            raise RuntimeError(f"the loopback model did not start: {line!r}")
        self.origin = f"http://{HOST}:{int(line.split('=', 1)[1])}"
        self.base_url = self.origin + "/v1"
        self.set_script(script)

    def __enter__(self) -> ModelProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _post(self, path: str, payload: dict[str, Any]) -> None:
        req = urllib.request.Request(
            self.origin + path, json.dumps(payload).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()

    def set_script(self, script: Script) -> None:
        self.script = script
        self._post("/_bench/script", asdict(script))

    def reset(self) -> None:
        self._post("/_bench/reset", {})

    def records(self) -> list[StreamRecord]:
        with urllib.request.urlopen(self.origin + "/_bench/records", timeout=10) as resp:
            rows = json.loads(resp.read())["records"]
        return [StreamRecord(**row) for row in rows]

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)


def _readline(stream: Any, timeout_s: float) -> str:
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return got[0].strip() if got else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The bench's loopback model (127.0.0.1 only).")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    with LoopbackModel(port=args.port) as model:
        # This child is never a language server: its stdout is the pipe the parent reads the
        # port from (`_readline` above), the one line it ever writes there.
        sys.stdout.write(f"PORT={model.port}\n")
        sys.stdout.flush()
        sys.stdin.read()  # until the parent closes our stdin (or exits)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
