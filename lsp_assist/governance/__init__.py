"""governance: the control plane around every model call.

Data boundaries (file exclusion, endpoint allow-list), secret redaction, credentials per
environment, circuit breakers, rate limits and concurrency caps, cross-process quotas,
the audit log and the admin policy (the usage report read from the audit log lives in
`telemetry/usage.py`). The pipeline uses the facade `Governance` (guard.py); see its
docstring for the call sequence around one model call.
"""

from lsp_assist.governance.guard import Governance, Permit, default_audit_path
from lsp_assist.governance.settings import GovernanceSettings, parse_settings

__all__ = ["Governance", "GovernanceSettings", "Permit", "default_audit_path", "parse_settings"]
