"""Build step 2, governance: the data boundary, limits, credentials and audit of a build.

The previous build's governance is closed once the new one exists. The long-lived parts
(`context.py`) answer to the new boundary at once (`install_boundary`); when it differs
from the previous one, the policy epoch advances (`advance_policy`, `governance/epoch.py`):
every memory of content answers to it at its next read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lsp_assist.composition.configuration import Resolved
from lsp_assist.composition.context import ContextParts
from lsp_assist.composition.listeners import Listeners
from lsp_assist.config.loader import WORKSPACE_FILE, ConfigLayers
from lsp_assist.config.schema import Config
from lsp_assist.governance.guard import Governance
from lsp_assist.governance.team_settings import default_user
from lsp_assist.pipeline.boundary import admits
from lsp_assist.providers.attribution import Attribution, attribution_wanted


@dataclass(frozen=True)
class GovernanceParts:
    governance: Governance
    errors: list[str]
    boundary_changed: bool  # the data boundary differs from the previous build's


def build_governance(
    resolved: Resolved,
    roots: list[Path],
    layers: ConfigLayers,
    previous: Governance | None,
    listeners: Listeners,
    parts: ContextParts,
) -> GovernanceParts:
    """Governance for `resolved` over the workspace `roots` and their settings files,
    installed as the boundary of the long-lived `parts`; breaker and team-store changes go
    to `listeners`. Closes `previous`."""
    before = previous.boundary.fingerprint() if previous is not None else None
    gov, errors = Governance.from_config(
        resolved.config,
        resolved.cache_dir,
        [str(r) for r in roots],
        on_breaker_change=listeners.breaker_changed,
    )
    errors.extend(gov.govern_folders(layers.folder_layers(roots)))
    if previous is not None:
        previous.close()
    team = gov.team
    if team is not None:
        team.store.on_change = lambda up, t=team: listeners.team_store_changed(t.health_message(up), up)
    install_boundary(parts, gov)
    changed = before is not None and before != gov.boundary.fingerprint()
    if changed:
        advance_policy(parts, gov)
    return GovernanceParts(gov, errors, changed)


def install_boundary(parts: ContextParts, gov: Governance) -> None:
    """Every file the context engine records (open tabs, the workspace index, the editor's
    files) and the next-edit history passes the data boundary first; what it refuses now
    is dropped."""
    parts.context.editor_definitions.excluded = lambda path: gov.excluded(path) is not None
    parts.context.set_boundary(admits(gov))
    parts.history.excluded = lambda path: gov.excluded(path) is not None
    parts.history.refilter()


def advance_policy(parts: ContextParts, gov: Governance | None) -> None:
    """The boundary may admit less than before: the epoch advances, so every memory of
    content answers to the new boundary at its next read, and the suggestion ledger
    forgets the texts of documents it now refuses."""
    parts.policy_epoch.advance()
    if gov is None:
        return
    admit = admits(gov)
    for doc in parts.store.documents():
        if not admit(doc.path or doc.uri):
            parts.suggestions.on_close(doc.uri)


def team_attribution(config: Config, governance: Governance | None) -> Attribution | None:
    """The labels every model call carries for gateways, when `[team]` asks for them."""
    t = config.team
    team = governance.team if governance is not None else None
    business_line = team.settings.business_line if team is not None else t.business_line
    if not attribution_wanted(business_line, t.store, t.attribution):
        return None
    environment = governance.settings.environment if governance is not None else ""
    return Attribution(business_line, t.user or default_user(), environment, t.attribution)


def policy_files_changed(
    parts: ContextParts, gov: Governance | None, roots: Sequence[Path], paths: Sequence[str]
) -> bool:
    """Files changed on disk (file events, saves). An ignore file the boundary reads takes
    effect now; True when a workspace folder's settings file changed (a rebuild is due)."""
    folders = {os.path.abspath(r) for r in roots}
    if any(os.path.basename(p) == WORKSPACE_FILE and os.path.dirname(os.path.abspath(p)) in folders
           for p in paths):  # fmt: skip
        return True
    names = {os.path.basename(p) for p in paths if p}
    if gov is not None and names & set(gov.boundary.ignore_names):
        gov.boundary.refresh()
        install_boundary(parts, gov)
        advance_policy(parts, gov)
    return False
