"""Each role's model from injected rates: a slow machine, a fast one, a remote fast tier,
explicit configuration, nothing installed. No model is loaded."""

from __future__ import annotations

import dataclasses

from lsp_assist.config.schema import Config, LocalConfig, NextEditConfig, TierConfig
from lsp_assist.providers.model_rates import ModelRates, prior_rates
from lsp_assist.providers.roles import TYPING_BUDGET_S, TYPING_TOLERANCE, Candidate, apply, assign

GEMMA, CODER = "gemma3-270m", "qwen2.5-coder-1.5b"


def _cands(gemma: ModelRates, coder: ModelRates) -> list[Candidate]:
    return [Candidate(CODER, 1_117_320_768, 1540.0, coder), Candidate(GEMMA, 253_113_024, 270.0, gemma)]


# These two cores, measured: Gemma writes 53 tokens/s and reads ~660, the coder 14 and ~108.
SLOW = _cands(ModelRates(53.0, 660.0, measured=True), ModelRates(14.0, 108.0, measured=True))
# A laptop with a GPU through llama.cpp: the coder writes 90 tokens/s and reads 3,000.
FAST = _cands(ModelRates(300.0, 9000.0, measured=True), ModelRates(90.0, 3000.0, measured=True))


def _config(**tiers: TierConfig) -> Config:
    cfg = Config()
    cfg.tiers = {**cfg.tiers, **tiers}
    return cfg


def test_slow_machine_types_with_gemma_and_rewrites_and_escalates_with_the_coder() -> None:
    roles = assign(_config(), SLOW)
    assert (roles.typing.where, roles.typing.model) == ("local", GEMMA)
    assert roles.typing.predicted_s is not None and roles.typing.predicted_s <= TYPING_BUDGET_S
    assert "too slow" in roles.typing.reason and CODER in roles.typing.reason
    assert (roles.rewrite.where, roles.rewrite.model) == ("local", CODER)
    assert (roles.quality.where, roles.quality.model) == ("local", CODER)
    cfg = apply(_config(), roles)
    assert cfg.tier("fast").provider == "local" and cfg.tier("fast").model == GEMMA
    assert cfg.tier("quality").provider == "local" and cfg.tier("quality").model == CODER
    assert cfg.local.model == GEMMA and cfg.local.refine_model == CODER


def test_fast_machine_types_with_the_coder_and_needs_no_rewrite() -> None:
    roles = assign(_config(), FAST)
    assert roles.typing.model == CODER
    assert roles.rewrite.where == "none" and "stronger" in roles.rewrite.reason
    assert roles.quality.model == CODER  # never weaker than typing
    cfg = apply(_config(), roles)
    assert cfg.local.model == CODER and cfg.local.refine_model == ""


def test_unmeasured_models_use_the_prior_and_say_so() -> None:
    cands = _cands(prior_rates(253_113_024, 2), prior_rates(1_117_320_768, 2))
    roles = assign(_config(), cands)
    assert roles.typing.model == GEMMA and "estimated" in roles.typing.reason


def test_remote_fast_tier_escalates_to_itself_and_loads_no_local_model() -> None:
    remote = TierConfig(provider="openai", base_url="http://127.0.0.1:9/v1", model="team-coder")
    base = _config(fast=remote)
    roles = assign(base, SLOW)
    assert roles.typing.where == "remote"
    assert roles.rewrite.where == "none"
    assert (roles.quality.where, roles.quality.model) == ("remote", "team-coder")
    cfg = apply(base, roles)
    quality = cfg.tier("quality")
    # The team's endpoint, with the quality tier's own budgets (longer answers).
    assert quality.provider == "openai" and quality.base_url == remote.base_url
    assert quality.max_tokens == base.tier("quality").max_tokens != remote.max_tokens
    assert all(t.provider != "local" for t in cfg.tiers.values())
    assert cfg.local.refine_model == ""


def test_explicit_configuration_wins() -> None:
    base = _config(quality=TierConfig(provider="local", model="smollm2"))
    base.local = dataclasses.replace(LocalConfig(), model=GEMMA, refine_model="")
    roles = assign(base, FAST)  # the coder would type here, but the user named Gemma
    assert roles.typing.model == GEMMA and "configured" in roles.typing.reason
    assert roles.rewrite.where == "none"
    assert roles.quality.model == "smollm2" and "tiers.quality" in roles.quality.reason
    cfg = apply(base, roles)
    assert cfg.tier("quality").model == "smollm2" and cfg.local.model == GEMMA


def test_remote_quality_tier_configured_with_a_local_typing_model() -> None:
    base = _config(quality=TierConfig(provider="openai", base_url="http://127.0.0.1:9/v1", model="big"))
    roles = assign(base, SLOW)
    assert roles.typing.model == GEMMA and roles.rewrite.model == CODER
    assert (roles.quality.where, roles.quality.model) == ("remote", "big")


def test_nothing_installed_falls_to_the_offline_engine() -> None:
    roles = assign(_config(), [])
    assert roles.typing.where == "offline" and "install" in roles.typing.reason
    assert roles.rewrite.where == "none"
    cfg = apply(_config(), roles)
    assert cfg.tier("fast").provider == "offline"


def test_next_edits_get_the_tier_their_format_needs() -> None:
    cfg = _config()
    cfg.next_edit = NextEditConfig(predictor="model", format="instruct")
    roles = assign(cfg, SLOW)
    assert roles.next_edit.model == CODER and "instruct" in roles.next_edit.reason
    cfg.next_edit = NextEditConfig(predictor="model", format="zeta")
    assert assign(cfg, SLOW).next_edit.model == GEMMA
    cfg.next_edit = NextEditConfig()
    assert assign(cfg, SLOW).next_edit.where == "none"


def test_every_role_line_says_why() -> None:
    for cands in (SLOW, FAST, []):
        for line in assign(_config(), cands).lines():
            role, _, why = line.partition(": ")
            assert role in ("typing", "rewrite", "quality", "next edit") and why.count(": ") >= 1


def test_a_slightly_slow_measurement_keeps_the_stronger_typing_model() -> None:
    # Gemma measured a little over the budget (within the cost model's error), SmolLM2 well
    # within it: Gemma still types. Far over it, the fastest model types.
    smol = Candidate("smollm2", 106_000_000, 135.0, ModelRates(44.0, 290.0, measured=True))
    slow_gemma = Candidate(GEMMA, 253_113_024, 270.0, ModelRates(19.0, 700.0, measured=True))
    assert TYPING_BUDGET_S < slow_gemma.typing_s() <= TYPING_BUDGET_S * TYPING_TOLERANCE
    assert smol.typing_s() <= TYPING_BUDGET_S
    assert assign(_config(), [SLOW[0], slow_gemma, smol]).typing.model == GEMMA
    very_slow = Candidate(GEMMA, 253_113_024, 270.0, ModelRates(10.0, 300.0, measured=True))
    roles = assign(_config(), [SLOW[0], very_slow, smol])
    assert roles.typing.model == "smollm2"
    crawl = _cands(ModelRates(5.0, 100.0, measured=True), ModelRates(2.0, 30.0, measured=True))
    roles = assign(_config(), crawl)
    assert roles.typing.model == GEMMA and "the fastest" in roles.typing.reason


def test_an_escalation_on_the_rewrite_model_is_predicted_from_the_rewrites_prompt() -> None:
    """The code model both rewrites and escalates: its escalation reads the rewrite's prompt
    (what it reads in 2 s, at least ~180 tokens), not the 450-token quality window."""
    from lsp_assist.providers.rewrite_prompt import rewrite_tokens
    from lsp_assist.providers.roles import QUALITY_READ

    roles = assign(_config(), SLOW)
    coder = next(c for c in SLOW if c.name == CODER)
    assert roles.rewrite.model == roles.quality.model == CODER
    assert rewrite_tokens(coder.rates.prompt_tps) < QUALITY_READ
    assert roles.quality.predicted_s == coder.quality_s(rewrites=True) < coder.quality_s()
    # With no rewrite model (configured off), the escalation reads the whole window.
    cfg = _config()
    cfg.local = dataclasses.replace(cfg.local, refine_model="")
    assert assign(cfg, SLOW).quality.predicted_s == coder.quality_s()
