"""A loopback fake model server for tests: OpenAI-compatible plus four native APIs.

It serves, over HTTP/1.1 with keep-alive and chunked streaming:

- ``POST /v1/completions``        SSE chunks with ``choices[].text``
- ``POST /v1/chat/completions``   SSE chunks with ``choices[].delta.content``
- ``POST /api/generate``          Ollama NDJSON lines ``{"response", "done": false}``; the last
                                  has ``done: true``, ``done_reason``, ``prompt_eval_count``,
                                  ``eval_count``. Without a ``prompt`` (a model load) one JSON
                                  object with ``done_reason: "load"``.
- ``POST /infill``, ``/completion`` llama.cpp SSE ``{"content", "stop": false}``; the last event
                                  has ``stop: true``, ``stop_type``, ``tokens_evaluated``,
                                  ``tokens_predicted``; no ``[DONE]``
- ``POST /v1/messages``           Anthropic SSE events: message_start, content_block_start,
                                  ping, content_block_delta..., content_block_stop,
                                  message_delta (stop_reason, usage), message_stop
- ``POST /v1/fim/completions``    Mistral SSE ``choices[].delta.content``, usage on the finish
                                  chunk, then ``data: [DONE]``
- ``POST /v1/completions`` with ``segments`` (the Tabby API): one JSON answer with the
                                  text up to the end of the first line, sent when a stream
                                  would send that line's last token
- ``GET  /v1/models``             a one-model list (used by ``warm()``)
- ``HEAD`` on any path            200, no body
- ``/_control/*``                 JSON control endpoints for subprocess mode (see below)

The ``/v1`` prefix is optional: ``/completions`` works too. The four native routes always
stream (their ``stream`` flag is ignored), and apply the same `Script` (ttft, rate, faults)
with each fault in the family's own shape: HTTP errors carry the family's error body,
``malformed`` is a frame that is not JSON, ``error_chunk`` is the family's mid-stream error
(Ollama ``{"error": ...}``, llama.cpp ``data: {"error": ...}``, Anthropic ``event: error``,
Mistral ``data: {"object": "error", ...}``) and ``cut`` never sends the end marker.

What it answers is a `Script`: the text (or a function of the request body, or `oracle`: the
rest of a target line after what the prompt ends with, like a model that predicts what the
user types), the time to first token (`prefill_ms` of it is prompt reading that a one-slot
server cannot interrupt: an abandoned request holds its slot until then), the token rate,
and an optional fault:

===============  ==========================================================================
fault            behaviour
===============  ==========================================================================
``None``         a normal stream, ends with ``finish_reason`` then ``data: [DONE]``
``"stall"``      reads the request and never sends a byte (until the client goes away)
``"stall_mid"``  sends the first half of the tokens, then stalls
``"http500"``    HTTP 500 with a JSON error body
``"http429"``    HTTP 429 with ``Retry-After: <script.retry_after>``
``"http401"``    HTTP 401 (``"http<N>"`` works for any status code N >= 400)
``"cut"``        sends half the tokens, then closes the socket (no terminating chunk,
                 no ``[DONE]``, no ``finish_reason``)
``"malformed"``  sends half the tokens, then a ``data:`` line that is not JSON
``"error_chunk"`` sends half the tokens, then ``data: {"error": {...}}``
``"slow"``       a normal stream at 5 tokens/s (unless ``tokens_per_s`` says otherwise)
===============  ==========================================================================

The script for a request is chosen in this order: the next queued per-request script
(`FakeModelServer.push`), else the first regex rule matching the prompt (`add_rule`),
else the server default (`FakeModelServer.default`).

Everything observable is recorded and readable from any thread: every request
(`RecordedRequest`: method, path, headers, JSON body), TCP connections accepted, streams
started / completed / aborted by the client, and for each aborted stream how many tokens
had been sent when the disconnect was noticed. A client disconnect is detected by
polling the socket for EOF between tokens and while waiting, so an abort is seen within
~10 ms even while the server is stalling.

In-process use (the usual one)::

    with FakeModelServer() as srv:
        srv.default = Script(text="return 42", ttft_ms=20, tokens_per_s=200)
        srv.push(Script(fault="http429", retry_after="3"))
        ... base_url = srv.base_url  # "http://127.0.0.1:<port>/v1"
        srv.wait_for(lambda s: s.streams_aborted >= 1, timeout=2)

Subprocess use (for end-to-end tests that start the LSP server as a process)::

    python -m tests.fakes.fake_model_server --port 0 [--text T] [--ttft-ms N] [--tokens-per-s N]

prints ``PORT=<n>`` as stdout line 1 and serves until SIGTERM/SIGINT or stdin closes
(with ``--exit-on-stdin-eof``). It is then driven over HTTP with the control endpoints:
``POST /_control/default`` and ``POST /_control/push`` (a JSON `Script`, without callables),
``POST /_control/rule`` (``{"pattern": ..., "text": ...}``), ``POST /_control/reset``,
``POST /_control/limit`` (``{"max_concurrent": N}``, null for none),
``GET /_control/stats`` and ``GET /_control/requests``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = dict[str, Any]

# How often a waiting handler looks for a client disconnect or server shutdown.
_POLL_S = 0.005
# A stalled handler gives up after this long even if nobody disconnects, so that a
# forgotten stall can never keep a thread alive forever.
_MAX_STALL_S = 120.0
_TOKEN_RE = re.compile(r"\s*\S{1,3}|\s+", re.S)


def split_tokens(text: str) -> list[str]:
    """Split text into small "tokens" (up to 3 visible chars plus leading whitespace).

    Concatenating the result gives back `text` exactly.
    """
    return _TOKEN_RE.findall(text)


@dataclass
class Script:
    """How to answer one request. All fields have harmless defaults."""

    text: str | Callable[[JSON], str] = "pass"
    tokens: list[str] | None = None  # explicit token split; overrides splitting `text`
    ttft_ms: float = 0.0  # delay before the first token (after the response headers)
    tokens_per_s: float = 0.0  # 0: as fast as possible
    fault: str | None = None  # see the module docstring
    retry_after: str = "1"  # Retry-After header value for http429 (seconds or an HTTP date)
    finish_reason: str = "stop"
    usage: bool = True  # send the usage chunk when the request asked for include_usage
    headers_delay_ms: float = 0.0  # delay before the response status line
    # The part of ttft spent reading the prompt. Under a concurrency cap (one slot, like
    # llama.cpp's server) it cannot be interrupted: a request abandoned during it still
    # holds its slot until it ends, so the next request waits for it.
    prefill_ms: float = 0.0
    # A model that predicts what the user is typing: the answer is the rest of `oracle`
    # after the longest start of it the prompt ends with, cut to `oracle_chars` characters
    # (0: all of it) and ended there with a newline (right that far, then a new line).
    oracle: str = ""
    oracle_chars: int = 0
    # A model that stalls after its first line (OpenAI routes): this long after the token
    # that ends the first line, before the rest. A server that waits for the whole stream
    # answers only after it.
    pause_after_line_ms: float = 0.0

    def render_text(self, body: JSON) -> str:
        if self.oracle:
            return oracle_answer(self.oracle, prompt_of(body), self.oracle_chars)
        return self.text(body) if callable(self.text) else self.text

    @classmethod
    def from_json(cls, data: JSON) -> Script:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it. Header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: JSON | None
    time: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class Stats:
    """A consistent snapshot of the counters."""

    connections: int
    requests: int
    streams_started: int
    streams_completed: int
    streams_aborted: int
    tokens_at_abort: tuple[int, ...]  # per aborted stream, tokens sent before the disconnect
    tokens_sent: int  # over all streams
    max_active: int = 0  # most model requests served at once (with a cap: at most the cap)
    queued: int = 0  # model requests that waited for a slot (with a cap)


def prompt_of(body: JSON | None) -> str:
    """The text a rule is matched against: `prompt` (+ `suffix`), or the chat messages."""
    if not body:
        return ""
    if "messages" in body:
        msgs = body.get("messages") or []
        return "\n".join(_content_text(m.get("content", "")) for m in msgs if isinstance(m, dict))
    if "input_prefix" in body:  # llama.cpp /infill
        return str(body.get("input_prefix", "")) + str(body.get("input_suffix", ""))
    prompt = body.get("prompt", "")
    if isinstance(prompt, list):
        prompt = "".join(str(p) for p in prompt)
    return str(prompt)


def oracle_answer(target: str, prompt: str, chars: int = 0) -> str:
    """The rest of `target` after the longest start of it that `prompt` ends with."""
    typed = next((k for k in range(len(target), 0, -1) if prompt.endswith(target[:k])), 0)
    rest = target[typed:]
    if chars and len(rest) > chars:
        rest = rest[:chars] + "\n"
    return rest


def _content_text(content: object) -> str:
    """A message's text: a string, or the text of Anthropic-style content blocks."""
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


class _ClientGone(Exception):
    """The client closed the connection (or the server is shutting down)."""


class FakeModelServer:
    """A threaded loopback HTTP server. Start with `start()` or use as a context manager."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        default: Script | None = None,
        *,
        max_concurrent: int | None = None,
    ) -> None:
        self._lock = threading.Condition()
        # A concurrency limit like a model server's batch size (vLLM max_num_seqs): requests
        # beyond it wait for a slot (queue, latency grows) or, with `reject_over_cap`, get 429.
        self.max_concurrent = max_concurrent
        self.reject_over_cap = False
        self._active = 0
        self._max_active = 0
        self._queued = 0
        self.default: Script = default or Script()
        self._queue: deque[Script] = deque()
        self._rules: list[tuple[re.Pattern[str], Script]] = []
        self._requests: list[RecordedRequest] = []
        self._connections = 0
        self._started = 0
        self._completed = 0
        self._aborted = 0
        # Per stream: (time the request was read, [time each token was written]), monotonic.
        self.stream_times: list[tuple[float, list[float]]] = []
        self._tokens_at_abort: list[int] = []
        self._tokens_sent = 0
        self._closing = threading.Event()
        self._httpd = _Server((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The URL an OpenAI client takes (with ``/v1``)."""
        return f"{self.origin}/v1"

    def start(self) -> FakeModelServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; stalled handlers notice within a few ms and exit."""
        self._closing.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------------------------
    def push(self, script: Script | None = None, **kwargs: Any) -> None:
        """Queue a script for the next request (FIFO). kwargs build one: push(fault="cut")."""
        with self._lock:
            self._queue.append(script if script is not None else Script(**kwargs))

    def add_rule(self, pattern: str, script: Script | str) -> None:
        """Answer requests whose prompt matches `pattern` (re.search) with `script`."""
        s = Script(text=script) if isinstance(script, str) else script
        with self._lock:
            self._rules.append((re.compile(pattern, re.S), s))

    def reset(self) -> None:
        """Forget queued scripts, rules, recorded requests and counters (not the default)."""
        with self._lock:
            self._queue.clear()
            self._rules.clear()
            self._requests.clear()
            self._connections = self._started = self._completed = self._aborted = 0
            self._max_active = self._queued = 0
            self.stream_times = []
            self._tokens_at_abort.clear()
            self._tokens_sent = 0
            self._lock.notify_all()

    def _pick(self, body: JSON | None) -> Script:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            text = prompt_of(body)
            for pattern, script in self._rules:
                if pattern.search(text):
                    return script
            return self.default

    # -- observation -------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def model_requests(self) -> list[RecordedRequest]:
        """Only the POSTs to the completion endpoints."""
        return [r for r in self.requests if r.method == "POST" and not r.path.startswith("/_control")]

    @property
    def stats(self) -> Stats:
        with self._lock:
            return Stats(
                connections=self._connections,
                requests=len(self._requests),
                streams_started=self._started,
                streams_completed=self._completed,
                streams_aborted=self._aborted,
                tokens_at_abort=tuple(self._tokens_at_abort),
                tokens_sent=self._tokens_sent,
                max_active=self._max_active,
                queued=self._queued,
            )

    def wait_for(self, predicate: Callable[[Stats], bool], timeout: float = 5.0) -> bool:
        """Block until predicate(stats) holds; False on timeout. Call from a thread, or
        via ``await asyncio.to_thread(srv.wait_for, ...)`` from async tests."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate(self._stats_locked()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(min(left, 0.05))
            return True

    def _stats_locked(self) -> Stats:
        return Stats(
            self._connections,
            len(self._requests),
            self._started,
            self._completed,
            self._aborted,
            tuple(self._tokens_at_abort),
            self._tokens_sent,
            self._max_active,
            self._queued,
        )

    def _bump(self, **changes: int) -> None:
        with self._lock:
            for name, delta in changes.items():
                setattr(self, f"_{name}", getattr(self, f"_{name}") + delta)
            self._lock.notify_all()

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)
            self._lock.notify_all()

    def _abort(self, tokens: int) -> None:
        with self._lock:
            self._aborted += 1
            self._tokens_at_abort.append(tokens)
            self._lock.notify_all()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a stuck handler never blocks interpreter exit
    allow_reuse_address = True
    fake: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that goes away mid-request (an aborted stream) is normal traffic here.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection pooling can be observed
    server: _Server

    # Silence the default stderr access log.
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.server.fake._bump(connections=1)
        # Small writes must leave at once: we are simulating token-by-token streaming.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def fake(self) -> FakeModelServer:
        return self.server.fake

    def parse_request(self) -> bool:
        # The request line has arrived: from here on the time is the model server's own
        # (header parsing in Python costs this fake ~0.3 ms a real server does not have).
        self._t_arrived = time.monotonic()
        return super().parse_request()

    # -- request handling --------------------------------------------------------------------
    def _read_body(self) -> JSON | None:
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0:
            return None
        raw = self.rfile.read(length)
        try:
            data = json.loads(raw)
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}
        return data if isinstance(data, dict) else {"_value": data}

    def _recorded(self, body: JSON | None) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fake._record(RecordedRequest(self.command, self.path, headers, body))

    def do_HEAD(self) -> None:
        self._recorded(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._recorded(None)
        path = self.path.split("?", 1)[0]
        if path.endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        elif path == "/_control/stats":
            self._send_json(200, asdict(self.fake.stats))
        elif path == "/_control/stream_times":
            with self.fake._lock:
                times = [[t0, list(ts)] for t0, ts in self.fake.stream_times]
            self._send_json(200, {"stream_times": times})
        elif path == "/_control/requests":
            self._send_json(200, {"requests": [asdict(r) for r in self.fake.requests]})
        elif path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        else:
            self._send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    def do_POST(self) -> None:
        body = self._read_body()
        self._t_request = getattr(self, "_t_arrived", None) or time.monotonic()
        path = self.path.split("?", 1)[0]
        if path.startswith("/_control/"):
            self._control(path, body or {})
            return
        self._recorded(body)
        if not self._take_slot():
            return
        try:
            self._serve_model(path, body)
        finally:
            self._free_slot()

    def _take_slot(self) -> bool:
        """Wait for a slot under the fake's concurrency cap; False if the client left meanwhile."""
        fake = self.fake
        waited = False
        with fake._lock:
            while fake.max_concurrent is not None and fake._active >= fake.max_concurrent:
                if fake.reject_over_cap:
                    break
                if not waited:
                    waited = True
                    fake._queued += 1
                fake._lock.wait(0.01)
                if self._client_gone():
                    return False
            else:
                fake._active += 1
                fake._max_active = max(fake._max_active, fake._active)
                return True
        self._send_json(429, _openai_error(429, "over the concurrency limit"), {"Retry-After": "1"})
        return False

    def _free_slot(self) -> None:
        with self.fake._lock:
            self.fake._active -= 1
            self.fake._lock.notify_all()

    def _serve_model(self, path: str, body: JSON | None) -> None:
        dialect = _dialect_for(path)
        if dialect is not None:
            self._native(body or {}, dialect)
        elif path.endswith("/chat/completions"):
            self._complete(body or {}, chat=True)
        elif path.endswith("/completions") and isinstance((body or {}).get("segments"), dict):
            self._tabby(body or {})
        elif path.endswith("/completions"):
            self._complete(body or {}, chat=False)
        else:
            self._send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    def _tabby(self, body: JSON) -> None:
        """The Tabby API (`segments.prefix/suffix`): one JSON answer, not a stream. It is sent
        when a stream of the same script would send the token that ends the first line, with
        the text up to there, so a Tabby client sees the latency a streaming server needs."""
        fake = self.fake
        script = fake._pick(body)
        if self._before_stream(script, _openai_error):
            return
        tokens = list(script.tokens) if script.tokens is not None else split_tokens(script.render_text(body))
        k = next((i for i, t in enumerate(tokens) if "\n" in t), len(tokens) - 1)
        rate = script.tokens_per_s
        fake._bump(started=1)
        token_times: list[float] = []
        with fake._lock:
            fake.stream_times.append((self._t_request, token_times))
        try:
            self._wait(script.ttft_ms / 1000 + (k / rate if rate else 0.0))
            joined = "".join(tokens[: k + 1])
            text = joined[: joined.index("\n") + 1] if "\n" in joined else joined
            token_times.append(time.monotonic())
            self._send_json(200, {"id": "fake-tabby", "choices": [{"index": 0, "text": text}]})
            fake._bump(tokens_sent=k + 1, completed=1)
        except _ClientGone:
            self.close_connection = True
            fake._abort(0)

    def _control(self, path: str, body: JSON) -> None:
        fake = self.fake
        if path == "/_control/default":
            fake.default = Script.from_json(body)
        elif path == "/_control/push":
            fake.push(Script.from_json(body))
        elif path == "/_control/rule":
            fake.add_rule(str(body["pattern"]), Script.from_json(body))
        elif path == "/_control/reset":
            fake.reset()
        elif path == "/_control/limit":  # {"max_concurrent": N or null}
            with fake._lock:
                fake.max_concurrent = body.get("max_concurrent")
                fake._lock.notify_all()
        else:
            self._send_json(404, {"error": {"message": f"no control {path}"}})
            return
        self._send_json(200, {"ok": True})

    # -- low-level writing -------------------------------------------------------------------
    def _send_json(self, status: int, payload: JSON, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(data)
            self.wfile.flush()

    def _client_gone(self) -> bool:
        """True when the peer closed its side: the socket is readable and reads EOF.

        The client sends nothing during a response (no pipelining), so readable means
        EOF or a reset.
        """
        if self.fake._closing.is_set():
            return True
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except OSError:
            return True

    def _wait(self, seconds: float) -> None:
        """Sleep in small slices, raising _ClientGone as soon as the client leaves."""
        end = time.monotonic() + seconds
        while True:
            if self._client_gone():
                raise _ClientGone
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(_POLL_S, left))

    def _chunk(self, data: bytes) -> None:
        """Write one HTTP/1.1 chunk (chunked transfer encoding)."""
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc

    def _event(self, payload: JSON | str) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        self._chunk(f"data: {data}\n\n".encode())

    # -- the completion endpoints ------------------------------------------------------------
    def _complete(self, body: JSON, *, chat: bool) -> None:
        fake = self.fake
        script = fake._pick(body)
        fault = script.fault or ""
        prefill_end = time.monotonic() + script.prefill_ms / 1000
        if self._before_stream(script, _openai_error):
            return

        text = script.render_text(body)
        tokens = list(script.tokens) if script.tokens is not None else split_tokens(text)
        if not body.get("stream", False):
            self._whole(body, chat, "".join(tokens), script)
            return
        rate = script.tokens_per_s or (5.0 if fault == "slow" else 0.0)
        half = len(tokens) // 2
        sent = 0
        fake._bump(started=1)
        token_times: list[float] = []
        with fake._lock:
            fake.stream_times.append((self._t_request, token_times))
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            self._wait(script.ttft_ms / 1000)
            created = int(time.time())
            if chat:
                self._event(self._chat_chunk(created, {"role": "assistant", "content": ""}, None))
            for i, tok in enumerate(tokens):
                if i == half and fault in ("stall_mid", "cut", "malformed", "error_chunk"):
                    self._fault_mid_stream(fault)
                    return
                if i and rate:
                    self._wait(1.0 / rate)
                elif self._client_gone():
                    raise _ClientGone
                if chat:
                    self._event(self._chat_chunk(created, {"content": tok}, None))
                else:
                    self._event(self._text_chunk(created, tok, None))
                sent += 1
                token_times.append(time.monotonic())
                fake._bump(tokens_sent=1)
                if script.pause_after_line_ms and "\n" in tok and "\n" not in "".join(tokens[:i]):
                    self._wait(script.pause_after_line_ms / 1000)
            if not tokens and fault in ("cut", "malformed", "error_chunk", "stall_mid"):
                self._fault_mid_stream(fault)
                return
            finish = script.finish_reason
            if chat:
                self._event(self._chat_chunk(created, {}, finish))
            else:
                self._event(self._text_chunk(created, "", finish))
            opts = body.get("stream_options") or {}
            if script.usage and isinstance(opts, dict) and opts.get("include_usage"):
                usage = {
                    "prompt_tokens": max(1, len(split_tokens(prompt_of(body)))),
                    "completion_tokens": len(tokens),
                }
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                self._event(
                    {"id": "fake", "object": "chunk", "created": created, "choices": [], "usage": usage}
                )
            self._event("[DONE]")
            self._chunk(b"")  # the terminating zero-length chunk
            fake._bump(completed=1)
        except _ClientGone:
            self.close_connection = True
            fake._abort(sent)
            left = prefill_end - time.monotonic()
            if left > 0 and fake.max_concurrent is not None:
                time.sleep(left)  # the prompt batch runs to its end; the slot stays taken

    def _before_stream(self, script: Script, error_body: Callable[[int, str], JSON]) -> bool:
        """Apply headers_delay_ms and the faults that end a request before any stream
        (stall, http<N>). True when the request has been answered (or abandoned)."""
        fault = script.fault or ""
        try:
            if script.headers_delay_ms:
                self._wait(script.headers_delay_ms / 1000)
            if fault == "stall":
                self._wait(_MAX_STALL_S)
                self.close_connection = True
                return True
            if fault.startswith("http") and fault[4:].isdigit():
                status = int(fault[4:])
                extra = {"Retry-After": script.retry_after} if status == 429 else {}
                message = {429: "rate limited", 401: "invalid api key"}.get(status, "fake failure")
                self._send_json(status, error_body(status, message), extra)
                return True
        except _ClientGone:
            self.close_connection = True
            return True
        return False

    # -- the native endpoints (Ollama, llama.cpp, Anthropic, Mistral) ----------------------------
    def _native(self, body: JSON, dialect: _Dialect) -> None:
        fake = self.fake
        if dialect.is_load(body):
            self._send_json(200, dialect.load_reply(body))
            return
        script = fake._pick(body)
        fault = script.fault or ""
        if self._before_stream(script, dialect.error_body):
            return
        text = script.render_text(body)
        tokens = list(script.tokens) if script.tokens is not None else split_tokens(text)
        prompt_tokens = max(1, len(split_tokens(prompt_of(body))))
        rate = script.tokens_per_s or (5.0 if fault == "slow" else 0.0)
        half = len(tokens) // 2
        sent = 0
        fake._bump(started=1)
        token_times: list[float] = []
        with fake._lock:
            fake.stream_times.append((self._t_request, token_times))
        try:
            self.send_response(200)
            self.send_header("Content-Type", dialect.content_type)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            self._wait(script.ttft_ms / 1000)
            for frame in dialect.start(prompt_tokens):
                self._chunk(frame)
            mid_fault = fault in ("stall_mid", "cut", "malformed", "error_chunk")
            for i, tok in enumerate(tokens):
                if i == half and mid_fault:
                    self._native_fault(fault, dialect)
                    return
                if i and rate:
                    self._wait(1.0 / rate)
                elif self._client_gone():
                    raise _ClientGone
                self._chunk(dialect.token(tok, i))
                sent += 1
                token_times.append(time.monotonic())
                fake._bump(tokens_sent=1)
                if i == 0:
                    for frame in dialect.after_first():
                        self._chunk(frame)
            if not tokens and mid_fault:
                self._native_fault(fault, dialect)
                return
            for frame in dialect.end(script.finish_reason, prompt_tokens, len(tokens)):
                self._chunk(frame)
            self._chunk(b"")  # the terminating zero-length chunk
            fake._bump(completed=1)
        except _ClientGone:
            self.close_connection = True
            fake._abort(sent)

    def _native_fault(self, fault: str, dialect: _Dialect) -> None:
        if fault == "stall_mid":
            self._wait(_MAX_STALL_S)
        elif fault == "cut":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        elif fault == "malformed":
            self._chunk(dialect.malformed())
        elif fault == "error_chunk":
            self._chunk(dialect.error_frame())
        self._chunk(b"")

    def _fault_mid_stream(self, fault: str) -> None:
        if fault == "stall_mid":
            self._wait(_MAX_STALL_S)
        elif fault == "cut":
            # Close the socket abruptly: no terminating chunk, no [DONE], no finish_reason.
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        elif fault == "malformed":
            self._chunk(b'data: {"choices": [{"text": "oops", \n\n')
        elif fault == "error_chunk":
            self._event({"error": {"message": "model crashed", "type": "server_error"}})
        self._event("[DONE]")
        self._chunk(b"")

    @staticmethod
    def _text_chunk(created: int, text: str, finish: str | None) -> JSON:
        return {
            "id": "cmpl-fake",
            "object": "text_completion",
            "created": created,
            "model": "fake-model",
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}],
            "usage": None,
        }

    @staticmethod
    def _chat_chunk(created: int, delta: JSON, finish: str | None) -> JSON:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": created,
            "model": "fake-model",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": None,
        }

    def _whole(self, body: JSON, chat: bool, text: str, script: Script) -> None:
        """A non-streaming answer (stream: false)."""
        created = int(time.time())
        if chat:
            choice: JSON = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": script.finish_reason,
            }
        else:
            choice = {"index": 0, "text": text, "finish_reason": script.finish_reason}
        usage = {
            "prompt_tokens": len(split_tokens(prompt_of(body))),
            "completion_tokens": len(split_tokens(text)),
        }
        self._send_json(
            200,
            {"id": "fake", "created": created, "model": "fake-model", "choices": [choice], "usage": usage},
        )


def _openai_error(status: int, message: str) -> JSON:
    return {"error": {"message": message, "type": "fake", "code": status}}


def _sse(payload: JSON | str, event: str | None = None) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


class _Dialect:
    """How one native API frames a stream (SSE by default)."""

    content_type = "text/event-stream"

    def is_load(self, body: JSON) -> bool:
        return False

    def load_reply(self, body: JSON) -> JSON:
        return {}

    def error_body(self, status: int, message: str) -> JSON:
        return _openai_error(status, message)

    def start(self, prompt_tokens: int) -> list[bytes]:
        return []

    def token(self, tok: str, i: int) -> bytes:
        raise NotImplementedError

    def after_first(self) -> list[bytes]:
        return []

    def end(self, finish: str, prompt_tokens: int, n: int) -> list[bytes]:
        raise NotImplementedError

    def malformed(self) -> bytes:
        return b'data: {"content": "oops", \n\n'

    def error_frame(self) -> bytes:
        return _sse({"error": {"message": "model crashed", "type": "server_error", "code": 500}})


class _Ollama(_Dialect):
    content_type = "application/x-ndjson"

    @staticmethod
    def _line(obj: JSON) -> bytes:
        return (json.dumps(obj, ensure_ascii=False) + "\n").encode()

    def is_load(self, body: JSON) -> bool:
        return not body.get("prompt")

    def load_reply(self, body: JSON) -> JSON:
        return {
            "model": body.get("model", ""),
            "created_at": "",
            "response": "",
            "done": True,
            "done_reason": "load",
        }

    def error_body(self, status: int, message: str) -> JSON:
        return {"error": message}

    def token(self, tok: str, i: int) -> bytes:
        return self._line({"model": "fake-model", "created_at": "", "response": tok, "done": False})

    def end(self, finish: str, prompt_tokens: int, n: int) -> list[bytes]:
        last = {
            "model": "fake-model",
            "created_at": "",
            "response": "",
            "done": True,
            "done_reason": finish,
            "total_duration": 1000,
            "prompt_eval_count": prompt_tokens,
            "eval_count": n,
            "context": [1, 2, 3],
        }
        return [self._line(last)]

    def malformed(self) -> bytes:
        return b'{"response": "oops", \n'

    def error_frame(self) -> bytes:
        return self._line({"error": "model crashed"})


class _LlamaCpp(_Dialect):
    def error_body(self, status: int, message: str) -> JSON:
        return {"error": {"code": status, "message": message, "type": "fake"}}

    def token(self, tok: str, i: int) -> bytes:
        return _sse({"content": tok, "tokens": [i], "stop": False, "id_slot": 0, "tokens_predicted": i + 1})

    def end(self, finish: str, prompt_tokens: int, n: int) -> list[bytes]:
        stop_type = {"stop": "eos", "length": "limit"}.get(finish, finish)
        return [
            _sse(
                {
                    "content": "",
                    "tokens": [],
                    "stop": True,
                    "stop_type": stop_type,
                    "stopping_word": "",
                    "id_slot": 0,
                    "tokens_predicted": n,
                    "tokens_evaluated": prompt_tokens,
                    "timings": {"predicted_n": n, "prompt_n": prompt_tokens},
                }
            )
        ]


class _Anthropic(_Dialect):
    def error_body(self, status: int, message: str) -> JSON:
        kind = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error"}.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}

    def start(self, prompt_tokens: int) -> list[bytes]:
        message: JSON = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "fake-model",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": prompt_tokens, "output_tokens": 1},
        }
        block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        return [
            _sse({"type": "message_start", "message": message}, "message_start"),
            _sse(block, "content_block_start"),
        ]

    def token(self, tok: str, i: int) -> bytes:
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": tok}}
        return _sse(delta, "content_block_delta")

    def after_first(self) -> list[bytes]:
        return [_sse({"type": "ping"}, "ping")]

    def end(self, finish: str, prompt_tokens: int, n: int) -> list[bytes]:
        reason = {"stop": "end_turn", "length": "max_tokens"}.get(finish, finish)
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": n},
        }
        return [
            _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            _sse(delta, "message_delta"),
            _sse({"type": "message_stop"}, "message_stop"),
        ]

    def malformed(self) -> bytes:
        return b'event: content_block_delta\ndata: {"type": "content_block_delta", \n\n'

    def error_frame(self) -> bytes:
        return _sse(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error"
        )


class _Mistral(_Dialect):
    def error_body(self, status: int, message: str) -> JSON:
        return {"object": "error", "message": message, "type": "fake", "param": None, "code": status}

    @staticmethod
    def _chunk(content: str | None, finish: str | None, usage: JSON | None = None) -> JSON:
        delta: JSON = {} if content is None else {"content": content}
        return {
            "id": "fim-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": "fake-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **({"usage": usage} if usage else {}),
        }

    def token(self, tok: str, i: int) -> bytes:
        return _sse(self._chunk(tok, None))

    def end(self, finish: str, prompt_tokens: int, n: int) -> list[bytes]:
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": n, "total_tokens": prompt_tokens + n}
        return [_sse(self._chunk("", finish, usage)), _sse("[DONE]")]

    def malformed(self) -> bytes:
        return b'data: {"choices": [{"delta": {"content": "oops"}, \n\n'

    def error_frame(self) -> bytes:
        return _sse({"object": "error", "message": "model crashed", "type": "server_error", "code": 500})


_DIALECTS: tuple[tuple[str, _Dialect], ...] = (
    ("/api/generate", _Ollama()),
    ("/infill", _LlamaCpp()),
    ("/completion", _LlamaCpp()),  # llama-server's plain completion (next-edit prompts)
    ("/messages", _Anthropic()),
    ("/fim/completions", _Mistral()),
)


def _dialect_for(path: str) -> _Dialect | None:
    for suffix, dialect in _DIALECTS:
        if path.endswith(suffix):
            return dialect
    return None


@contextlib.contextmanager
def running(default: Script | None = None) -> Iterator[FakeModelServer]:
    """``with running(Script(text="x")) as srv:`` — a started server, stopped on exit."""
    srv = FakeModelServer(default=default).start()
    try:
        yield srv
    finally:
        srv.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Loopback fake OpenAI-compatible model server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="pass", help="default completion text")
    parser.add_argument("--ttft-ms", type=float, default=0.0)
    parser.add_argument("--tokens-per-s", type=float, default=0.0)
    parser.add_argument("--fault", default=None)
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    parser.add_argument("--max-concurrent", type=int, default=None, help="concurrency cap (requests queue)")
    parser.add_argument("--reject-over-cap", action="store_true", help="answer 429 over the cap instead")
    args = parser.parse_args(argv)
    srv = FakeModelServer(
        args.host,
        args.port,
        Script(text=args.text, ttft_ms=args.ttft_ms, tokens_per_s=args.tokens_per_s, fault=args.fault),
        max_concurrent=args.max_concurrent,
    )
    srv.reject_over_cap = args.reject_over_cap
    srv.start()
    sys.stdout.write(f"PORT={srv.port}\n")
    sys.stdout.flush()
    try:
        if args.exit_on_stdin_eof:
            sys.stdin.read()
        else:
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
    return 0


def _on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    raise SystemExit(main())


__all__ = [
    "FakeModelServer",
    "RecordedRequest",
    "Script",
    "Stats",
    "oracle_answer",
    "prompt_of",
    "running",
    "split_tokens",
]
