"""The model predictor per prompt format, against the loopback fake model.

Each format is sent through a real provider (OpenAI-compatible completions and chat,
llama.cpp, Ollama) to the fake, which answers with a scripted rewrite of the editable
region it received (the user's rename applied at the next use): the plumbing and the
parsing are checked, not a model's quality. Answers that change nothing, that undo the
user's last edit, or that touch redacted text give no proposal; a refused admission makes
no call; the prompt never holds the secret planted in the region.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from lsp_assist.config.schema import NextEditConfig, TierConfig
from lsp_assist.documents.store import Document, DocumentStore
from lsp_assist.errors import QuotaExceeded
from lsp_assist.governance.record import CallRecord
from lsp_assist.governance.redaction import redact
from lsp_assist.nextedit.formats import instruct, sweep, zeta
from lsp_assist.nextedit.model import ModelPredictor
from lsp_assist.nextedit.proposal import Proposal
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.registry import build_provider
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.unit.nextedit.helpers import position, retype, session

URI = "file:///ws/calc.py"
SECRET = "AKIAIOSFODNN7EXAMPLE"
CALC = f'''AWS_KEY = "{SECRET}"


def scale(values, factor):
    out = []
    for v in values:
        out.append(v * factor)
    return out, factor
'''


class Gov:
    """Governance as the predictor sees it: the real redaction, a recorded admission."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.records: list[CallRecord] = []
        self.features: list[str] = []

    def redact(self, text: str) -> tuple[str, int]:
        return redact(text)

    async def admit_async(self, feature: str, tier: str, provider_key: str) -> Any:
        self.features.append(feature)
        if self.refuse:
            raise QuotaExceeded("the next_edit quota for today is spent")
        gov = self

        class Permit:
            def finish(self, record: CallRecord) -> None:
                gov.records.append(record)

        return Permit()


def _region(prompt: str, start: str, end: str) -> str:
    region = prompt.split(start, 1)[1].split(end, 1)[0]
    return region.removeprefix("\n").removesuffix("\n")


def _renamed(region: str) -> str:
    """The region with the user's rename (factor -> scale_by) applied to its next use."""
    return re.sub(r"\bfactor\b", "scale_by", region, count=1)


def zeta_answer(body: Any) -> str:
    prompt = str(body.get("prompt"))
    region = _region(prompt, zeta.START, zeta.END).replace(zeta.CURSOR, "")
    return f"```calc.py\n{zeta.START}\n{_renamed(region)}\n{zeta.END}\n```"


def sweep_answer(body: Any) -> str:
    prompt = str(body.get("prompt"))
    current = prompt.split(f"{sweep.SEP}current/", 1)[1].split("\n", 1)[1].split(sweep.SEP, 1)[0]
    return _renamed(current.removesuffix("\n")) + "\n" + sweep.SEP


def instruct_answer(body: Any) -> str:
    msgs = body.get("messages")
    prompt = str(msgs[-1]["content"]) if msgs else str(body.get("prompt"))
    region = _region(prompt, instruct.START, instruct.END).replace(instruct.CURSOR, "")
    return f"Here it is:\n```python\n{_renamed(region)}\n```\n"


CASES: dict[str, tuple[str, str, str, Callable[[Any], str], str]] = {
    # format: (provider, api, expected path, scripted answer, where the prompt is)
    "zeta": ("openai", "completions", "/v1/completions", zeta_answer, "prompt"),
    "sweep": ("llamacpp", "completions", "/completion", sweep_answer, "prompt"),
    "instruct": ("openai", "chat", "/v1/chat/completions", instruct_answer, "messages"),
    "instruct-ollama": ("ollama", "chat", "/api/generate", instruct_answer, "prompt"),
}


def _predictor(fake: FakeModelServer, fmt: str, store: DocumentStore, gov: Gov) -> ModelPredictor:
    provider_name, api, _, _, _ = CASES[fmt]
    base = fake.base_url if provider_name == "openai" else fake.origin
    tier = TierConfig(provider=provider_name, api=api, base_url=base, model="nes-model")
    provider = build_provider("fast", tier, clients=ClientPool())
    config = NextEditConfig(predictor="model", format=fmt.split("-")[0], region_lines=3)
    return ModelPredictor(config, store, provider, "fast", gov, "key")


async def _rename_and_predict(
    fake: FakeModelServer, fmt: str, gov: Gov | None = None
) -> tuple[Document, list[Proposal], Gov]:
    store, history = session(CALC, URI)
    doc = retype(store, URI, "factor", "scale_by")  # the parameter
    h = history.get(URI)
    assert h is not None and h.last is not None
    gov = gov or Gov()
    predictor = _predictor(fake, fmt, store, gov)
    found = await predictor(doc, history, position(doc, h.last.end))
    await predictor.provider.aclose()
    return doc, found, gov


@pytest.mark.parametrize("fmt", sorted(CASES))
async def test_each_format_turns_the_scripted_rewrite_into_the_next_use_edit(
    fake: FakeModelServer, fmt: str
) -> None:
    _, _, path, answer, field = CASES[fmt]
    fake.default = Script(text=answer)
    doc, found, gov = await _rename_and_predict(fake, fmt)
    assert len(found) == 1, fake.model_requests()
    p = found[0]
    assert p.text == "scale_by" and p.rule == fmt.split("-")[0]
    assert doc.text[doc.offset(p.start) : doc.offset(p.end)] == "factor"
    assert doc.line(p.start.line) == "        out.append(v * factor)"
    (request,) = fake.model_requests()
    assert request.path == path
    body = request.body or {}
    assert field in body and SECRET not in str(body)  # the planted key never leaves
    if fmt == "instruct-ollama":
        assert body.get("raw") is False and body.get("system") == instruct.SYSTEM
    if fmt == "zeta":
        assert body.get("raw") is None and zeta.CURSOR in str(body["prompt"])
    assert gov.features == ["next_edit"] and gov.records[0].outcome == "model"


async def test_an_answer_that_changes_nothing_proposes_nothing(fake: FakeModelServer) -> None:
    def unchanged(body: Any) -> str:
        prompt = str(body.get("prompt"))
        region = _region(prompt, zeta.START, zeta.END).replace(zeta.CURSOR, "")
        return f"{zeta.START}\n{region}\n{zeta.END}"

    fake.default = Script(text=unchanged)
    _, found, _ = await _rename_and_predict(fake, "zeta")
    assert found == []


async def test_an_answer_undoing_the_users_last_edit_is_dropped(fake: FakeModelServer) -> None:
    def undo(body: Any) -> str:
        prompt = str(body.get("prompt"))
        region = _region(prompt, zeta.START, zeta.END).replace(zeta.CURSOR, "")
        return f"{zeta.START}\n{region.replace('values, scale_by', 'values, factor')}\n{zeta.END}"

    fake.default = Script(text=undo)
    _, found, _ = await _rename_and_predict(fake, "zeta")
    assert found == []


async def test_an_answer_touching_redacted_text_is_dropped(fake: FakeModelServer) -> None:
    def touch_secret(body: Any) -> str:
        prompt = str(body.get("prompt"))
        region = _region(prompt, zeta.START, zeta.END).replace(zeta.CURSOR, "")
        assert "<redacted:" in region and SECRET not in region
        return f"{zeta.START}\n{re.sub(r'<redacted:[^>]*>', 'NEWKEY', region)}\n{zeta.END}"

    fake.default = Script(text=touch_secret)
    store, history = session(CALC, URI)
    doc = retype(store, URI, "AWS_KEY", "AWS_KEY_ID")  # the cursor, and the region, at the key
    h = history.get(URI)
    assert h is not None and h.last is not None
    predictor = _predictor(fake, "zeta", store, Gov())
    assert await predictor(doc, history, position(doc, h.last.end)) == []
    await predictor.provider.aclose()
    assert len(fake.model_requests()) == 1


async def test_a_refused_admission_makes_no_call(fake: FakeModelServer) -> None:
    fake.default = Script(text=zeta_answer)
    _, found, gov = await _rename_and_predict(fake, "zeta", Gov(refuse=True))
    assert found == [] and gov.features == ["next_edit"] and gov.records == []
    assert fake.model_requests() == []


async def test_a_failing_endpoint_is_audited_and_proposes_nothing(fake: FakeModelServer) -> None:
    fake.default = Script(text=zeta_answer, fault="http500")
    _, found, gov = await _rename_and_predict(fake, "zeta")
    assert found == [] and [r.outcome for r in gov.records] == ["error"]


def test_instruct_answer_without_a_fence_keeps_leading_blank_lines() -> None:
    from lsp_assist.nextedit.formats.window import Window

    w = Window("m.py", "python", 0, 0, "\nx = 1", "\nx = 1", 0, "", "", True, (), ())
    assert instruct.parse("\nx = 2\n", w) == "\nx = 2"
    assert instruct.parse("Sure:\n```python\n\nx = 2\n```\n", w) == "\nx = 2"
