"""The error hierarchy. Below the protocol layer these are the only exceptions raised on purpose.

LspAssistError
├── ConfigError            invalid configuration (the offending key is in the message)
├── ProviderError          a model call failed; `counts_as_failure` feeds the circuit breaker
│   ├── ProviderTimeout    first-token or total timeout
│   ├── RateLimited        HTTP 429 (retry_after seconds when the server said)
│   ├── Unauthorized       401/403: a key is missing or wrong
│   ├── BadRequest         other 4xx: our request was wrong, retrying will not help
│   ├── Unavailable        connection refused, DNS, 5xx
│   └── BadResponse        a malformed or cut stream
└── PolicyError            governance refused the call (never a failure of the provider)
    ├── Excluded           the file is excluded from any model
    ├── QuotaExceeded      the feature's quota is spent
    ├── RateLimitSkip      the rate limit or concurrency cap is full
    ├── BreakerOpen        the provider's circuit breaker is open
    ├── EndpointRefused    host not allowed, or a key over plain HTTP to a non-loopback host
    └── StreamAborted      the stream was closed for a newer request (its text is cut)
"""

from __future__ import annotations


class LspAssistError(Exception):
    """Base of every deliberate error."""


class ConfigError(LspAssistError):
    pass


class ProviderError(LspAssistError):
    counts_as_failure = True
    http_status: int | None = None  # the HTTP status that caused it, for the audit line


class ProviderTimeout(ProviderError):
    def __init__(self, message: str, *, first_token: bool) -> None:
        super().__init__(message)
        self.first_token = first_token


class RateLimited(ProviderError):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unauthorized(ProviderError):
    counts_as_failure = False


class BadRequest(ProviderError):
    counts_as_failure = False


class Unavailable(ProviderError):
    pass


class BadResponse(ProviderError):
    pass


class PolicyError(LspAssistError):
    pass


class Excluded(PolicyError):
    pass


class QuotaExceeded(PolicyError):
    pass


class RateLimitSkip(PolicyError):
    pass


class BreakerOpen(PolicyError):
    pass


class EndpointRefused(PolicyError):
    pass


class StreamAborted(PolicyError):
    """The stream was closed (superseded, cancelled): what it produced is cut, never an answer."""
