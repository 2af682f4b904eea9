"""Builds the team governance from `[team]` and the admin policy; kept apart so that
`guard.py` imports redis (the `team` extra) only when a store is configured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lsp_assist.config.schema import TeamConfig
from lsp_assist.governance.settings import GovernanceSettings
from lsp_assist.governance.team_settings import parse_team

if TYPE_CHECKING:
    from lsp_assist.governance.team import TeamGovernance


def build_team(
    cfg: TeamConfig,
    governance: GovernanceSettings,
    policy: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[TeamGovernance | None, list[str]]:
    """The team governance, or None (local limits) with the reason among the errors.
    `policy`: the admin policy's `[team]` table (`Policy.team`)."""
    settings, errors = parse_team(cfg, policy, environ)
    if not settings.shared:
        return None, errors
    try:
        from lsp_assist.governance.team import TeamGovernance
    except ImportError:
        errors.append("team.store: the redis client is not installed (pip install 'lsp-assist[team]'); "
                      "local limits apply")  # fmt: skip
        return None, errors
    return TeamGovernance(settings, governance, environ=environ), errors


__all__ = ["build_team"]
