"""`[next_edit]` settings: validated like every other table, never fatal."""

from __future__ import annotations

from pathlib import Path

from lsp_assist.config.loader import ConfigLayers, config_from_dict
from lsp_assist.server import Runtime


def test_bad_values_and_unknown_keys_warn_and_keep_the_defaults() -> None:
    config, errors = config_from_dict(
        {
            "next_edit": {
                "predictor": "magic",
                "format": "diff",
                "tier": "turbo",
                "region_lines": 0,
                "confidence": "vibes",
                "colour": 1,
            }
        }
    )
    ne = config.next_edit
    assert (ne.predictor, ne.format, ne.tier, ne.region_lines) == ("rules", "zeta", "", 10)
    assert ne.confidence == "evidence"
    joined = "\n".join(errors)
    for key in ("predictor", "format", "tier", "region_lines", "confidence"):
        assert f"next_edit.{key}" in joined
    assert "next_edit.colour: unknown key (ignored)" in joined


def test_the_instruct_format_defaults_to_the_quality_tier() -> None:
    config, errors = config_from_dict({"next_edit": {"format": "instruct"}})
    assert errors == [] and config.next_edit_tier() == "quality"
    config, _ = config_from_dict({"next_edit": {"format": "sweep"}})
    assert config.next_edit_tier() == "fast"


def test_a_model_predictor_on_a_tier_without_raw_prompts_says_so_and_keeps_the_rules(tmp_path: Path) -> None:
    options = {
        "cache": {"dir": str(tmp_path / "cache")},
        "tiers": {"fast": {"provider": "offline"}},
        "next_edit": {"predictor": "model"},
    }
    rt = Runtime(ConfigLayers(init_options=options), [tmp_path])
    errors = rt.build()
    assert any("next_edit.predictor" in e and "offline" in e for e in errors)
    assert rt.next_edit.model is None and rt.next_edit.config.predictor == "model"
