"""The audit line of a model call made by the request path carries the prompt's redaction
count and the HTTP status (both were always 0 / null before the call record)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsp_assist.domain import Cursor, Outcome
from lsp_assist.pipeline.request import CompletionRequest
from tests.fakes.fake_model_server import FakeModelServer
from tests.fakes.runtimes import openai_runtime

AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GHP = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"


def _audit(cache: Path) -> list[dict[str, Any]]:
    path = cache / "audit" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def _complete_once(rt: Any, tmp_path: Path, text: str) -> Any:
    path = tmp_path / "ws" / "settings.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    uri = path.as_uri()
    rt.store.open(uri, "python", 1, text, str(path))
    lines = text.split("\n")
    cursor = Cursor(len(lines) - 1, len(lines[-1]))
    res = await rt.engine.complete(CompletionRequest(uri=uri, cursor=cursor, invoked=True))
    # The permit is released when the stream ends, just after the answer.
    for _ in range(200):
        if _audit(rt.cache_dir):
            break
        await asyncio.sleep(0.01)
    return res


async def test_two_redacted_secrets_are_audited_as_two(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    fake.push(text="connect()\n")
    rt = openai_runtime(fake, tmp_path / "ws")
    try:
        text = f'AWS_KEY = "{AWS}"\nGITHUB = "{GHP}"\n\nclient = '
        res = await _complete_once(rt, tmp_path, text)
        assert res.outcome == Outcome.MODEL
        [sent] = fake.model_requests()
        assert AWS not in json.dumps(sent.body) and GHP not in json.dumps(sent.body)
        [record] = _audit(isolated)
        assert record["redactions"] == 2
        assert record["http_status"] == 200
    finally:
        await rt.aclose()


async def test_http_failure_status_is_audited(tmp_path: Path, isolated: Path, fake: FakeModelServer) -> None:
    fake.push(fault="http400")
    rt = openai_runtime(fake, tmp_path / "ws")
    try:
        res = await _complete_once(rt, tmp_path, "def f():\n    return ")
        assert res.outcome in (Outcome.FALLBACK, Outcome.EMPTY)
        records = _audit(isolated)
        assert [r["http_status"] for r in records] == [400]
        assert records[0]["error_class"] == "BadRequest" and records[0]["redactions"] == 0
    finally:
        await rt.aclose()
