"""Who made a model call, in the forms gateways read, so their budgets line up with ours.

Every call of an HTTP provider can carry the business line, the feature and the user:

- OpenAI-compatible bodies: ``user`` (OpenAI's end-user id; LiteLLM tracks spend per
  ``user`` too); Anthropic bodies: ``metadata.user_id``;
- LiteLLM (``attribution.litellm = true``): body ``metadata.tags`` and the
  ``x-litellm-tags`` header, ``["business_line:payments", "feature:completion", ...]``;
- any gateway: ``attribution.headers``, a map of header name to a template using
  ``{business_line}``, ``{feature}``, ``{user}``, ``{environment}``.

Only these labels are sent (names from configuration, never code or keys). Off unless a
`[team]` business line, store or attribution header is configured, so a single-user setup
does not send its login name anywhere.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any

from lsp_assist.config.schema import AttributionConfig

# Bodies that take OpenAI's `user` field. Native APIs (Ollama, llama.cpp, Mistral FIM) get
# the headers only: an unknown body field may be refused there.
_OPENAI_FAMILIES = ("openai",)
_FIELDS = ("business_line", "feature", "user", "environment")


def _header_value(v: str) -> str:
    # Header values must be printable ASCII on one line.
    return "".join(c for c in v if 32 <= ord(c) < 127)[:200]


@dataclass(frozen=True)
class Attribution:
    business_line: str
    user: str
    environment: str = ""
    config: AttributionConfig = field(default_factory=AttributionConfig)

    def values(self, feature: str) -> dict[str, str]:
        return {
            "business_line": self.business_line,
            "feature": feature,
            "user": self.user,
            "environment": self.environment,
        }

    def tags(self, feature: str) -> list[str]:
        return [f"{k}:{v}" for k, v in self.values(feature).items() if v]

    def headers(self, feature: str) -> dict[str, str]:
        vals = self.values(feature)
        out: dict[str, str] = {}
        for name, template in self.config.headers.items():
            try:
                value = string.Formatter().vformat(template, (), vals)
            except (KeyError, IndexError, ValueError):
                value = template  # an unknown placeholder is sent as written
            if value:
                out[_header_value(name)] = _header_value(value)
        if self.config.litellm:
            out["x-litellm-tags"] = _header_value(",".join(self.tags(feature)))
        return out

    def body_fields(self, family: str, feature: str) -> dict[str, Any]:
        """Fields merged into the JSON body (top level) for this API family."""
        out: dict[str, Any] = {}
        if family in _OPENAI_FAMILIES:
            if self.config.openai_user and self.user:
                out["user"] = self.user
            if self.config.litellm:
                vals = {k: v for k, v in self.values(feature).items() if v}
                out["metadata"] = {"tags": self.tags(feature), **vals}
        elif family == "anthropic" and self.config.openai_user and self.user:
            out["metadata"] = {"user_id": self.user}
        return out


def attribution_wanted(business_line: str, store: str, config: AttributionConfig) -> bool:
    return bool(business_line or store or config.headers or config.litellm)


__all__ = ["Attribution", "attribution_wanted"]
