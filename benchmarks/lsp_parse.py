"""LSP message parsing cost: what pygls + cattrs spend turning a frame into typed params.

For the messages of a keystroke (didChange, inlineCompletion) and a didOpen, the time of
`json.loads(body, object_hook=protocol.structure_message)` (what pygls runs per message)
next to a bare `json.loads` of the same bytes (the baseline, same run); and for the answer
(an InlineCompletionList of one item), pygls' `json.dumps(response,
default=protocol._serialize_message)` next to a bare `json.dumps` of the same dict. It
decides whether the protocol layer is worth optimizing: it is not when it is microseconds
against a 1-2 ms budget. `benchmarks/latency.py` prints the same figures.

Usage: python -m benchmarks.lsp_parse [--n 5000]
"""

from __future__ import annotations

import json
import statistics
import time

from lsprotocol import types
from pygls.protocol import JsonRPCResponseMessage

from benchmarks.common import arg_parser
from benchmarks.latency import doc_text
from lsp_assist.protocol import convert
from lsp_assist.protocol.handlers import create_server


def frames() -> dict[str, bytes]:
    def enc(msg: dict[str, object]) -> bytes:
        return json.dumps(msg).encode()

    uri = "file:///bench/a.py"
    return {
        "inlineCompletion": enc({
            "jsonrpc": "2.0", "id": 7, "method": "textDocument/inlineCompletion",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 8, "character": 4},
                       "context": {"triggerKind": 2}},
        }),
        "didChange (1 char)": enc({
            "jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
                {"range": {"start": {"line": 8, "character": 4}, "end": {"line": 8, "character": 4}},
                 "text": "r"}]},
        }),
        "didOpen (10 KB)": enc({
            "jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                        "text": doc_text(1) * 40}},
        }),
    }  # fmt: skip


def per_call_us(fn: object, body: object, n: int) -> float:
    call = fn  # type: ignore[assignment]
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            call(body)  # type: ignore[operator]
        samples.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(samples)


def measure(n: int) -> list[tuple[str, float, float]]:
    """(message, pygls microseconds, bare json microseconds) per message kind."""
    proto = create_server().protocol

    def typed(body: bytes) -> object:
        return json.loads(body, object_hook=proto.structure_message)

    out = []
    for name, body in frames().items():
        typed(body)
        out.append((name, per_call_us(typed, body, n), per_call_us(json.loads, body, n)))
    pos = types.Position(line=8, character=4)
    answer = convert.completion_list("return compute_total(items, tax_rate)", pos)
    response = JsonRPCResponseMessage(id=7, result=answer, jsonrpc="2.0")
    plain = json.loads(json.dumps(response, default=proto._serialize_message))

    def dumps_typed(_: object) -> object:
        return json.dumps(response, default=proto._serialize_message)

    out.append(
        ("answer (1 item), dumps", per_call_us(dumps_typed, b"", n), per_call_us(json.dumps, plain, n))
    )
    return out


def main() -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("--n", type=int, default=5000)
    args = ap.parse_args()
    print(f"{'message':<24}{'pygls (de)serialize':>26}{'json only':>18}")
    for name, ours, base in measure(args.n):
        print(f"{name:<24}{ours:>23.1f} us{base:>15.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
