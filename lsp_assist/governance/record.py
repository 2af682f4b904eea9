"""`CallRecord`: everything governance learns about one model call when it ends, and the
audit line written from it (`audit_line`).

One value instead of a dozen positional arguments: the permit releases its slot, feeds the
breaker, counts the tokens and writes the audit line from it. The caller fills in what it
knows (the pipeline knows the prompt's redaction count and the HTTP status of a failure);
every field but the outcome has a neutral default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lsp_assist.domain import Usage


@dataclass(frozen=True)
class CallRecord:
    # "model" (served), "error", "timeout", "cancelled", "fallback" (served as a fallback).
    outcome: str
    model: str = ""
    endpoint_host: str | None = None
    provider: str | None = None  # the provider family; the permit's key when None
    usage: Usage | None = None
    stages: Mapping[str, float] = field(default_factory=dict)  # ms; "ttft" and "total" feed usage
    request_bytes: int = 0
    error: BaseException | None = None  # only its class name is audited
    fallback_from: str | None = None
    hedged: bool = False
    retries: int = 0
    redactions: int = 0  # secrets removed from this call's prompt
    http_status: int | None = None
    language: str = ""  # the document's language id (a label)

    @property
    def status(self) -> int | None:
        """The HTTP status: the one recorded, else the one the provider error carries."""
        if self.http_status is not None:
            return self.http_status
        status = getattr(self.error, "http_status", None)
        return status if isinstance(status, int) else None


@dataclass(frozen=True)
class CallKey:
    """Which model call a permit admitted."""

    feature: str
    tier: str
    provider_key: str


def audit_line(
    key: CallKey, record: CallRecord, environment: str, workspace: str | None
) -> dict[str, object]:
    """The audit line of one model call: labels, sizes and timings only, never content."""
    u = record.usage or Usage()
    error = record.error
    line: dict[str, object] = {
        "environment": environment,
        "feature": key.feature,
        "tier": key.tier,
        "provider": record.provider or key.provider_key,
        "model": record.model,
        "endpoint_host": record.endpoint_host,
        "request_bytes": int(record.request_bytes),
        "prompt_tokens": int(u.prompt_tokens),
        "completion_tokens": int(u.completion_tokens),
        "tokens_estimated": bool(u.estimated),
        "stages_ms": dict(record.stages),
        "outcome": record.outcome,
        "error_class": None if error is None else type(error).__name__,
        "http_status": record.status,
        "fallback_from": record.fallback_from,
        "hedged": record.hedged,
        "retries": record.retries,
        "redactions": record.redactions,
        "workspace": workspace,
    }
    if record.language:
        line["language"] = record.language
    return line
