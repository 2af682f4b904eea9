"""Suggestion events over real stdio: an editor shows, accepts (whole and a word), dismisses
and types over suggestions by id, edits what it accepted; the retention checkpoints run on a
scaled clock (`LSP_ASSIST_TIME_SCALE`), and `lsp-assist usage --json` and `stats --json`
show the counts and the retained characters. A secret and a code marker planted in the
document and in the suggestion reach no audit line, stats line, log line or metric."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import ROOT, doc_uri, inline, isolated_env, lsp_session, open_doc, openai_tiers
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.fakes.otlp_receiver import OtlpReceiver

SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dcZQ"
CODE_MARKER = "quux_frobnicate_ledger"
SUGGESTION = f"{CODE_MARKER}(amount)"
DOC = f"import os\nAPI = '{SECRET}'\n"


def first_item(result: Any) -> types.InlineCompletionItem:
    items = result.items if hasattr(result, "items") else result
    assert items, "a suggestion"
    item = items[0]
    assert isinstance(item, types.InlineCompletionItem)
    return item


def suggestion_id(item: types.InlineCompletionItem) -> str:
    assert item.command is not None and item.command.arguments
    sid = item.command.arguments[0]
    assert isinstance(sid, str)
    return sid


class Editor:
    def __init__(self, client: LanguageClient, uri: str) -> None:
        self.client = client
        self.uri = uri
        self.version = 1

    def insert(self, line: int, character: int, text: str) -> None:
        self.replace(line, character, line, character, text)

    def replace(self, l0: int, c0: int, l1: int, c1: int, text: str) -> None:
        self.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=types.Position(l0, c0), end=types.Position(l1, c1)), text=text
                    )
                ],
            )
        )

    def event(self, sid: str, event: str, **extra: Any) -> None:
        self.client.protocol.notify("lspAssist/suggestionEvent", {"id": sid, "event": event, **extra})

    async def suggest(self, line: int, character: int) -> tuple[str, str]:
        item = first_item(await inline(self.client, self.uri, line, character))
        text = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
        return suggestion_id(item), text


def cli(args: list[str], env: dict[str, str]) -> Any:
    out = subprocess.run(
        [sys.executable, "-m", "lsp_assist", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def audit_rows(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "cache" / "audit" / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def test_events_and_retention_reach_usage_and_nothing_leaks(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text=SUGGESTION + "\n")
    receiver = OtlpReceiver().start()
    log_file = tmp_path / "server.log"
    env = isolated_env(
        tmp_path,
        LSP_ASSIST_TIME_SCALE="0.002",
        LSP_ASSIST_LOG_FILE=str(log_file),
        LSP_ASSIST_LOG_LEVEL="debug",
    )
    opts = {
        **openai_tiers(fake.base_url),
        "telemetry": {"otlp_endpoint": receiver.endpoint, "export_interval_ms": 300},
    }
    try:
        async with lsp_session(tmp_path, opts, env=env) as client:
            uri = doc_uri(tmp_path, "billing.py")
            open_doc(client, uri, DOC)
            ed = Editor(client, uri)

            # A: shown, accepted whole (the item's command), then 5 of its characters deleted.
            a, a_text = await ed.suggest(2, 0)
            assert a_text == SUGGESTION
            ed.event(a, "shown")
            ed.insert(2, 0, a_text)
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="lspAssist.accepted", arguments=[a])
            )
            ed.replace(2, 0, 2, 5, "")
            ed.insert(2, len(a_text) - 5, "\n")

            # B: shown, then dismissed.
            b, _ = await ed.suggest(3, 0)
            ed.event(b, "shown")
            ed.event(b, "dismissed")

            # C: shown, then typed over (the user typed something it did not predict).
            c, _ = await ed.suggest(3, 0)
            assert c != b
            ed.event(c, "shown")
            ed.insert(3, 0, "zz = ")
            ed.event(c, "typed_over")

            # D: shown, its first word accepted.
            d, d_text = await ed.suggest(3, 5)
            assert len({a, b, c, d}) == 4
            word = d_text[: len(CODE_MARKER)]
            ed.event(d, "shown")
            ed.insert(3, 5, word)
            ed.event(d, "accepted_partial", chars=len(word), offset=0, unit="word")

            # The 10 min checkpoint comes after 1.2 s on this clock: wait for it, bounded.
            for _ in range(200):
                if sum(1 for r in audit_rows(tmp_path) if r.get("event") == "retained") >= 6:
                    break
                await asyncio.sleep(0.1)
            for _ in range(100):
                if "lsp_assist.suggestion.retained_chars" in receiver.metric_points():
                    break
                await asyncio.sleep(0.1)
    finally:
        receiver.stop()

    rows = audit_rows(tmp_path)
    events = [(r["event"], r["suggestion_id"]) for r in rows if "event" in r]
    assert ("accepted", a) in events and ("dismissed", b) in events and ("typed_over", c) in events
    retained = sorted((r["checkpoint_s"], r["retained_chars"]) for r in rows if r.get("event") == "retained")
    kept_a = len(SUGGESTION) - 5
    assert retained == sorted(
        [(30, kept_a), (120, kept_a), (600, kept_a)] + [(s, len(word)) for s in (30, 120, 600)]
    )

    usage = cli(["usage", "--json"], env)
    s = usage["overall"]["suggestions"]
    assert (s["shown"], s["accepted"], s["accepted_whole"], s["accepted_partial"]) == (4, 2, 1, 1)
    assert (s["dismissed"], s["typed_over"]) == (1, 1)
    assert s["acceptance_rate"] == 0.5
    assert s["accepted_chars"] == len(SUGGESTION) + len(word)
    assert s["retained_chars"] == {cp: kept_a + len(word) for cp in ("30s", "2m", "10m")}
    calls = usage["overall"]["requests"]
    assert calls >= 1 and s["accepted_chars_per_call"] == round(s["accepted_chars"] / calls, 2)
    assert usage["by"]["language"]["python"]["suggestions"]["shown"] == 4
    assert usage["by"]["model"]["fake-coder"]["suggestions"]["accepted"] == 2

    stats = cli(["stats", "--json"], env)
    assert stats["suggestions"] == s

    metrics = receiver.metric_points()
    for name in (
        "lsp_assist.suggestion.events",
        "lsp_assist.suggestion.accepted",
        "lsp_assist.suggestion.accepted_chars",
        "lsp_assist.suggestion.retained_chars",
        "lsp_assist.model_calls",
    ):
        assert metrics.get(name), f"metric {name} exported"

    # The planted secret and code marker: in no audit line, stats line, log line or metric.
    stores = {
        "audit": "\n".join(
            p.read_text(encoding="utf-8") for p in (tmp_path / "cache" / "audit").glob("audit.jsonl*")
        ),
        "stats": (tmp_path / "cache" / "stats.jsonl").read_text(encoding="utf-8"),
        "log": log_file.read_text(encoding="utf-8", errors="replace"),
        "metrics": "\n".join(str(v) for v in receiver.all_attribute_values()),
    }
    assert stores["audit"] and stores["log"]
    for where, text in stores.items():
        for needle in (SECRET, CODE_MARKER, "amount)"):
            assert needle not in text, f"{needle!r} leaked into the {where}"
