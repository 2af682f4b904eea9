"""Per-folder policy: each workspace folder's files answer to that folder's own layer.

A file is governed by the configuration layers of the workspace folder that contains it
(the innermost one when folders nest): the user layer, the folder's `.lsp-assist.toml`,
then the editor's settings (`config.loader.ConfigLayers.folder_layers`), with the admin
policy on top, which nothing below it can loosen (`policy.apply_policy`). A file outside
every folder gets the user, editor and admin layers only. What a folder's layer decides
per file is the data boundary (`governance.exclude`, `governance.respect_gitignore`); the
rest of the configuration is one for the whole server.

`folder_rules` turns the layers into the boundary's `FolderRules`; `governed_by` says in
words which layer governs a path (for `lsp-assist doctor` and `lsp-assist context`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lsp_assist.config.loader import FOLDER_KEYS, FolderLayer
from lsp_assist.governance.boundaries import DataBoundary, FolderRules
from lsp_assist.governance.policy import Policy, apply_policy, load_policy
from lsp_assist.governance.settings import parse_settings

_FOLDER_PREFIXES = tuple(f"governance.{key}" for key in FOLDER_KEYS)


def folder_rules(
    layers: Mapping[str, FolderLayer], policy: Policy | None, errors: list[str] | None = None
) -> dict[str, FolderRules]:
    """Each folder's boundary rules: its layer's settings with the admin policy on top. A
    bad value keeps its default; the folder keys' errors are added to `errors` (the other
    keys' were reported by the server-wide build)."""
    out: dict[str, FolderRules] = {}
    for root, layer in layers.items():
        settings, found = parse_settings(layer.table)
        settings, _locked = apply_policy(settings, policy)
        out[root] = FolderRules(tuple(settings.exclude), settings.respect_gitignore, layer.source)
        if errors is not None:
            for error in found:
                named = f"{layer.source or root}: {error}"
                if error.startswith(_FOLDER_PREFIXES) and named not in errors:
                    errors.append(named)
    return out


def governed_by(boundary: DataBoundary, path: str) -> str:
    """Which layer governs `path`, in words (never file content)."""
    root = boundary.governing_root(path)
    if root is None:
        return "no workspace folder: the user, editor and admin layers only"
    rules = boundary.rules_for(root)
    own = rules.source or "no .lsp-assist.toml"
    return f"workspace folder {root} ({own}), over the user layer, with the editor and admin layers on top"


def boundary_for(
    governance: Mapping[str, object], layers: Mapping[str, FolderLayer], roots: Sequence[str]
) -> DataBoundary:
    """The data boundary a server with these workspace folders would apply (for the CLI,
    which builds no server): the server-wide settings and each folder's, under the policy."""
    policy, _errors = load_policy()
    settings, _ = parse_settings(governance)
    settings, _locked = apply_policy(settings, policy)
    boundary = DataBoundary(roots, exclude=settings.exclude, respect_gitignore=settings.respect_gitignore)
    boundary.set_folders(folder_rules(layers, policy))
    return boundary
