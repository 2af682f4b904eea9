"""OpenTelemetry export (extra `otel`): traces and metrics per the GenAI semantic conventions.

With `[telemetry] otlp_endpoint = "http://collector:4318"` every request becomes a span
``inline_completion`` with one child span per latency stage (debounce, queue, context,
connect, ttft, generation, postprocess: the request's `StageClock`, laid end to end, so
the trace shows exactly what `lsp-assist stats` shows), and every model call a client span
``text_completion <model>``. Metrics:

=====================================  =========  ===========================================
name                                   unit       what
=====================================  =========  ===========================================
gen_ai.client.operation.duration       s          one model call, start to end
gen_ai.server.time_to_first_token      s          one model call, to its first token
gen_ai.client.token.usage              {token}    per call, ``gen_ai.token.type`` input|output
lsp_assist.request.duration            s          one editor request, with its outcome
lsp_assist.fallbacks                   {call}     model calls serving another tier's request
lsp_assist.model_calls                 {call}     model calls, by feature, tier, model, language
lsp_assist.prompt_tokens               {token}    prompt tokens of those calls (same labels)
lsp_assist.cost                        {cost}     estimated cost of those calls (prices, keyed by model)
lsp_assist.suggestion.events           {event}    client events, ``lsp_assist.event`` = shown,
                                                  accepted, accepted_partial, dismissed, typed_over
lsp_assist.suggestion.accepted         {suggestion}  suggestions accepted (their first accept)
lsp_assist.suggestion.accepted_chars   {char}     characters accepted
lsp_assist.suggestion.measured_chars   {char}     accepted characters measured at a checkpoint
lsp_assist.suggestion.retained_chars   {char}     of those, still there (``lsp_assist.checkpoint``
                                                  = 30s, 2m, 10m)
=====================================  =========  ===========================================

The ``lsp_assist.*`` counters share the labels ``lsp_assist.feature``, ``lsp_assist.tier``,
``gen_ai.request.model`` and ``lsp_assist.language``, so acceptance rate (accepted / shown),
characters per model call or per 1,000 prompt tokens and cost per retained character are
ratios of two counters over the same labels (`dashboards/lsp-assist.json`).

Attributes are labels only: ``gen_ai.operation.name``, ``gen_ai.provider.name``,
``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` / ``output_tokens``,
``server.address``, ``error.type`` and ``lsp_assist.*`` (feature, tier, outcome, business
line). Never code, prompts, paths or keys: the records they come from (the audit record
and the stats record) hold none.

Export never blocks the request path: spans are queued by a `BatchSpanProcessor` and
metrics read by a `PeriodicExportingMetricReader`, each exporting over OTLP/HTTP from its
own thread; the request path only creates spans and records numbers (microseconds).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsp_assist.config.schema import TelemetryConfig
from lsp_assist.telemetry.latency import STAGES
from lsp_assist.telemetry.stats import RequestRecord

if TYPE_CHECKING:  # extra `otel`: imported when a Telemetry is built
    from opentelemetry.metrics import Meter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

log = logging.getLogger(__name__)

OPERATION = "text_completion"
_NS = 1_000_000  # ns per ms


def _headers(env_name: str) -> dict[str, str]:
    raw = os.environ.get(env_name, "") if env_name else ""
    out: dict[str, str] = {}
    for part in raw.split(","):
        k, sep, v = part.partition("=")
        if sep and k.strip():
            out[k.strip()] = v.strip()
    return out


def _scalar(v: object) -> str | int | float | bool | None:
    return v if isinstance(v, (str, int, float, bool)) else None


def _providers(cfg: TelemetryConfig, environment: str) -> tuple[TracerProvider, MeterProvider]:
    """A tracer provider and a meter provider exporting over OTLP/HTTP, each from its thread."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    endpoint = cfg.otlp_endpoint.rstrip("/")
    headers = _headers(cfg.headers_env)
    interval = max(100, cfg.export_interval_ms)
    resource = Resource.create(
        {"service.name": cfg.service_name or "lsp-assist", "deployment.environment.name": environment}
    )
    # Private providers (not the global ones): a reconfiguration replaces them cleanly.
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        BatchSpanProcessor(
            OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", headers=headers, timeout=5),
            schedule_delay_millis=min(interval, 2000),
            max_queue_size=4096,
        )
    )
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{endpoint}/v1/metrics", headers=headers, timeout=5),
        export_interval_millis=interval,
    )
    return tracer_provider, MeterProvider(resource=resource, metric_readers=[reader])


class Instruments:
    """The metrics of the module docstring's table, created on one meter."""

    def __init__(self, meter: Meter) -> None:
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration"
        )
        self.ttft = meter.create_histogram(
            "gen_ai.server.time_to_first_token", unit="s", description="Time to generate the first token"
        )
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Input and output tokens used"
        )
        self.request_duration = meter.create_histogram(
            "lsp_assist.request.duration", unit="s", description="Editor request, keystroke to answer"
        )
        self.fallbacks = meter.create_counter(
            "lsp_assist.fallbacks", unit="{call}", description="Model calls serving another tier's request"
        )
        self.model_calls = meter.create_counter(
            "lsp_assist.model_calls", unit="{call}", description="Model calls"
        )
        self.prompt_tokens = meter.create_counter(
            "lsp_assist.prompt_tokens", unit="{token}", description="Prompt tokens of the model calls"
        )
        self.cost = meter.create_counter(
            "lsp_assist.cost",
            unit="{cost}",
            description="Estimated cost of the model calls (governance.prices)",
        )
        self.suggestion_events = meter.create_counter(
            "lsp_assist.suggestion.events",
            unit="{event}",
            description="Suggestion events reported by editors",
        )
        self.suggestions_accepted = meter.create_counter(
            "lsp_assist.suggestion.accepted", unit="{suggestion}", description="Suggestions accepted"
        )
        self.accepted_chars = meter.create_counter(
            "lsp_assist.suggestion.accepted_chars", unit="{char}", description="Characters accepted"
        )
        self.measured_chars = meter.create_counter(
            "lsp_assist.suggestion.measured_chars",
            unit="{char}",
            description="Accepted characters measured at a retention checkpoint",
        )
        self.retained_chars = meter.create_counter(
            "lsp_assist.suggestion.retained_chars",
            unit="{char}",
            description="Accepted characters still present at a retention checkpoint",
        )


@dataclass(frozen=True)
class _CallNumbers:
    """The token counts and timings of one model call's governance record."""

    prompt: int
    completion: int
    total_ms: float
    ttft_ms: str | int | float | bool | None

    @classmethod
    def of(cls, record: Mapping[str, object]) -> _CallNumbers:
        stages = record.get("stages_ms")
        stages = stages if isinstance(stages, Mapping) else {}
        return cls(
            prompt=int(_scalar(record.get("prompt_tokens")) or 0),
            completion=int(_scalar(record.get("completion_tokens")) or 0),
            total_ms=float(_scalar(stages.get("total")) or 0.0),
            ttft_ms=_scalar(stages.get("ttft")),
        )


class Telemetry:
    """The tracer and meter of one server; `observe_request` and `observe_call` are the hooks."""

    def __init__(
        self,
        cfg: TelemetryConfig,
        *,
        business_line: str = "",
        environment: str = "",
        cost_of: Callable[[Mapping[str, object]], float] | None = None,
    ) -> None:
        self.endpoint = cfg.otlp_endpoint.rstrip("/")
        self.tracer_provider, self.meter_provider = _providers(cfg, environment)
        self.tracer = self.tracer_provider.get_tracer("lsp_assist")
        self.metrics = Instruments(self.meter_provider.get_meter("lsp_assist"))
        self.cost_of = cost_of
        self.business_line = business_line
        self.environment = environment
        self.errors = 0

    # --- hooks (called on the event loop; only in-memory work) ---------------------------

    def observe_request(self, rec: RequestRecord) -> None:
        """One editor request: a span with a child span per stage, and its duration."""
        from opentelemetry import trace

        total_ms = float(rec.stages.get("total", 0.0))
        end_ns = time.time_ns()
        start_ns = end_ns - int(total_ms * _NS)
        attrs: dict[str, str | bool] = {
            "lsp_assist.outcome": rec.outcome,
            "lsp_assist.tier": rec.tier,
            "lsp_assist.feature": rec.feature,
            "lsp_assist.model_call": rec.model_call,
        }
        if self.business_line:
            attrs["lsp_assist.business_line"] = self.business_line
        span = self.tracer.start_span("inline_completion", start_time=start_ns, attributes=attrs)
        ctx = trace.set_span_in_context(span)
        t = start_ns
        for stage in STAGES:
            ms = rec.stages.get(stage)
            if stage == "total" or not ms or ms <= 0:
                continue
            child = self.tracer.start_span(stage, context=ctx, start_time=t)
            t += int(ms * _NS)
            child.end(end_time=min(t, end_ns))
        span.end(end_time=end_ns)
        self.metrics.request_duration.record(
            total_ms / 1000.0, {k: v for k, v in attrs.items() if k != "lsp_assist.model_call"}
        )

    def observe_call(self, record: Mapping[str, object]) -> None:
        """One model call, from the governance record (the audit line's metadata): a client
        span, the GenAI metrics and the usage counters."""
        attrs = self._call_attributes(record)
        numbers = _CallNumbers.of(record)
        self._call_span(record, attrs, numbers)
        self._call_metrics(record, attrs, numbers)

    def _call_attributes(self, record: Mapping[str, object]) -> dict[str, Any]:
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": OPERATION,
            "gen_ai.provider.name": str(record.get("provider") or ""),
            "gen_ai.request.model": str(record.get("model") or ""),
            "lsp_assist.feature": str(record.get("feature") or ""),
            "lsp_assist.tier": str(record.get("tier") or ""),
            "lsp_assist.outcome": str(record.get("outcome") or ""),
        }
        host = _scalar(record.get("endpoint_host"))
        if host:
            attrs["server.address"] = str(host)
        if record.get("error_class"):
            attrs["error.type"] = str(record["error_class"])
        if self.business_line:
            attrs["lsp_assist.business_line"] = self.business_line
        return attrs

    def _call_span(self, record: Mapping[str, object], attrs: dict[str, Any], n: _CallNumbers) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        end_ns = time.time_ns()
        span_attrs = {
            **attrs,
            "gen_ai.usage.input_tokens": n.prompt,
            "gen_ai.usage.output_tokens": n.completion,
        }
        if record.get("fallback_from"):
            span_attrs["lsp_assist.fallback_from"] = str(record["fallback_from"])
        span = self.tracer.start_span(
            f"{OPERATION} {attrs['gen_ai.request.model']}".strip(),
            kind=SpanKind.CLIENT,
            start_time=end_ns - int(n.total_ms * _NS),
            attributes=span_attrs,
        )
        if "error.type" in attrs:
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=end_ns)

    def _call_metrics(self, record: Mapping[str, object], attrs: dict[str, Any], n: _CallNumbers) -> None:
        m = self.metrics
        if n.total_ms:
            m.duration.record(n.total_ms / 1000.0, attrs)
        if isinstance(n.ttft_ms, (int, float)) and n.ttft_ms > 0:
            m.ttft.record(float(n.ttft_ms) / 1000.0, attrs)
        if n.prompt:
            m.tokens.record(n.prompt, {**attrs, "gen_ai.token.type": "input"})
        if n.completion:
            m.tokens.record(n.completion, {**attrs, "gen_ai.token.type": "output"})
        if record.get("fallback_from"):
            m.fallbacks.add(1, attrs)
        labels = self._labels(record)
        m.model_calls.add(1, labels)
        if n.prompt:
            m.prompt_tokens.add(n.prompt, labels)
        if self.cost_of is not None:
            cost = self.cost_of(record)
            if cost > 0:
                m.cost.add(cost, labels)

    def _labels(self, row: Mapping[str, object]) -> dict[str, str]:
        """The labels the usage counters share (so that their ratios line up)."""
        attrs = {
            "lsp_assist.feature": str(row.get("feature") or ""),
            "lsp_assist.tier": str(row.get("tier") or ""),
            "gen_ai.request.model": str(row.get("model") or ""),
            "lsp_assist.language": str(row.get("language") or ""),
        }
        if self.business_line:
            attrs["lsp_assist.business_line"] = self.business_line
        return attrs

    def observe_event(self, row: Mapping[str, object]) -> None:
        """One suggestion event (telemetry/events.py): counters only, labels and counts."""
        from lsp_assist.telemetry.retention import checkpoint_label

        kind = str(row.get("event") or "")
        labels = self._labels(row)
        accepted = int(_scalar(row.get("accepted_chars")) or 0)
        if kind == "retained":
            at = {
                **labels,
                "lsp_assist.checkpoint": checkpoint_label(float(_scalar(row.get("checkpoint_s")) or 0)),
            }
            self.metrics.measured_chars.add(accepted, at)
            self.metrics.retained_chars.add(int(_scalar(row.get("retained_chars")) or 0), at)
            return
        self.metrics.suggestion_events.add(1, {**labels, "lsp_assist.event": kind})
        if kind in ("accepted", "accepted_partial"):
            self.metrics.accepted_chars.add(accepted, labels)
            if row.get("first_accept"):
                self.metrics.suggestions_accepted.add(1, labels)

    def shutdown(self) -> None:
        """Flush what is queued (bounded by the exporters' timeouts) and stop the threads."""
        for provider in (self.tracer_provider, self.meter_provider):
            try:
                provider.shutdown()
            except Exception as exc:  # never fail a shutdown over telemetry
                log.debug("telemetry shutdown: %s", exc)


def build_telemetry(
    cfg: TelemetryConfig,
    *,
    business_line: str = "",
    environment: str = "",
    cost_of: Callable[[Mapping[str, object]], float] | None = None,
) -> tuple[Telemetry | None, list[str]]:
    """The exporter for this configuration, or None (with the reason) when off or unavailable."""
    if not cfg.otlp_endpoint:
        return None, []
    if not cfg.otlp_endpoint.startswith(("http://", "https://")):
        return None, ["telemetry.otlp_endpoint: expected an http(s):// URL (OTLP/HTTP)"]
    try:
        return Telemetry(cfg, business_line=business_line, environment=environment, cost_of=cost_of), []
    except ImportError:
        return None, [
            "telemetry.otlp_endpoint: OpenTelemetry is not installed (pip install 'lsp-assist[otel]')"
        ]


__all__ = ["Telemetry", "build_telemetry"]
