"""OpenTelemetry end to end: the real `lsp-assist serve` exports to a loopback OTLP/HTTP
receiver that decodes the protobuf payloads; names follow the GenAI conventions and no
attribute carries code."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.e2e.conftest import doc_uri, inline, lsp_session, open_doc, openai_tiers, texts
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.fakes.otlp_receiver import OtlpReceiver, attrs

CODE = "def settle_invoice(ledger, amount):\n    token = 'sk-live-abcdef0123456789abcdef'\n    \n"


async def test_spans_and_metrics_reach_an_otlp_receiver(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return ledger.post(amount)\n", ttft_ms=30)
    receiver = OtlpReceiver().start()
    try:
        opts = {
            **openai_tiers(fake.base_url),
            "telemetry": {"otlp_endpoint": receiver.endpoint, "export_interval_ms": 300},
            "team": {"business_line": "payments", "user": "dev0"},
        }
        async with lsp_session(tmp_path, opts) as client:
            uri = doc_uri(tmp_path, "billing.py")
            open_doc(client, uri, CODE)
            assert texts(await inline(client, uri, 2, 4))
            for _ in range(100):
                names = {s.name for s in receiver.spans()}
                if "inline_completion" in names and "gen_ai.client.token.usage" in receiver.metric_points():
                    break
                await asyncio.sleep(0.1)
    finally:
        receiver.stop()

    spans = receiver.spans()
    by_name = {s.name: s for s in spans}
    request = by_name["inline_completion"]
    assert attrs(request)["lsp_assist.outcome"] == "model"
    assert attrs(request)["lsp_assist.business_line"] == "payments"
    children = [s for s in spans if s.parent_span_id == request.span_id]
    assert {"context", "ttft"} <= {s.name for s in children}, "a child span per stage"
    assert all(
        request.start_time_unix_nano <= c.start_time_unix_nano <= request.end_time_unix_nano for c in children
    )
    call = by_name["text_completion fake-coder"]
    a = attrs(call)
    assert a["gen_ai.operation.name"] == "text_completion"
    assert a["gen_ai.request.model"] == "fake-coder"
    assert a["gen_ai.provider.name"] == "openai"
    assert int(a["gen_ai.usage.input_tokens"]) > 0 and int(a["gen_ai.usage.output_tokens"]) > 0  # type: ignore[call-overload]

    metrics = receiver.metric_points()
    for name in (
        "gen_ai.client.operation.duration",
        "gen_ai.server.time_to_first_token",
        "gen_ai.client.token.usage",
        "lsp_assist.request.duration",
    ):
        assert metrics.get(name), f"metric {name} exported"
    token_types = {attrs(p).get("gen_ai.token.type") for p in metrics["gen_ai.client.token.usage"]}
    assert token_types == {"input", "output"}
    assert attrs(metrics["gen_ai.client.operation.duration"][0])["gen_ai.request.model"] == "fake-coder"

    # No code, no secret, no path in any attribute or name.
    for value in receiver.all_attribute_values():
        text = str(value)
        for needle in ("settle_invoice", "ledger", "sk-live", "billing.py", "return "):
            assert needle not in text, f"{needle!r} leaked into telemetry: {text!r}"
