"""`CallRecord`: everything governance learns about one model call when it ends.

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
