"""The VS Code extension's settings (editors/vscode/package.json) say what the server accepts.

Every `lspAssist.<section>.<key>` setting that is a number of the configuration schema
carries the schema's bounds as `minimum`/`maximum` (VS Code then refuses an out-of-range
value in the settings editor instead of the server logging it later), and a default, when
the setting states one, equal to the schema's.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from lsp_assist.config.schema import Config, TierConfig

PACKAGE = Path(__file__).resolve().parents[3] / "editors" / "vscode" / "package.json"


def _field(key: str) -> tuple[dataclasses.Field[Any], Any] | None:
    """The schema field a dotted setting key names, with the default instance holding it."""
    defaults = Config()
    parts = key.split(".")
    if parts[0] == "tiers" and len(parts) == 3:
        owner: Any = defaults.tiers.get(parts[1], TierConfig())
    elif len(parts) == 2:
        owner = getattr(defaults, parts[0], None)
    else:
        return None
    if owner is None or not dataclasses.is_dataclass(owner):
        return None
    fields = {f.name: f for f in dataclasses.fields(owner)}
    name = parts[-1]
    return (fields[name], owner) if name in fields else None


def _numeric_settings() -> list[tuple[str, dict[str, Any], dataclasses.Field[Any], Any]]:
    props = json.loads(PACKAGE.read_text())["contributes"]["configuration"]["properties"]
    out = []
    for full, spec in props.items():
        key = full.removeprefix("lspAssist.")
        if spec.get("type") not in ("integer", "number"):
            continue
        found = _field(key)
        if found is not None:
            out.append((key, spec, *found))
    return out


def test_the_numbers_vscode_offers_are_the_schemas_ranges() -> None:
    settings = _numeric_settings()
    assert len(settings) > 20  # the walk found the settings (not an empty, passing loop)
    wrong = []
    for key, spec, field, _owner in settings:
        bounds = field.metadata
        if "min" in bounds and spec.get("minimum") != bounds["min"]:
            wrong.append(f"{key}: minimum {spec.get('minimum')} != {bounds['min']}")
        if "max" in bounds and spec.get("maximum") != bounds["max"]:
            wrong.append(f"{key}: maximum {spec.get('maximum')} != {bounds['max']}")
    assert wrong == []


def test_the_defaults_vscode_shows_are_the_servers() -> None:
    wrong = []
    for key, spec, field, owner in _numeric_settings():
        if "default" in spec and spec["default"] != getattr(owner, field.name):
            wrong.append(f"{key}: default {spec['default']} != {getattr(owner, field.name)}")
    assert wrong == []
