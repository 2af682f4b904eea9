"""Settings parsing (errors name the key) and the admin policy (cannot be loosened)."""

from __future__ import annotations

from pathlib import Path

from lsp_assist.config.schema import TeamConfig
from lsp_assist.governance.policy import apply_policy, load_policy, parse_policy, stricter_limits
from lsp_assist.governance.settings import QuotaLimit, RateLimit, parse_settings
from lsp_assist.governance.team_settings import parse_team


def test_parse_full_settings() -> None:
    raw = {
        "environment": "prod",
        "allowed_hosts": ["API.openai.com"],
        "exclude": ["*.sql"],
        "respect_gitignore": True,
        "audit": {"enabled": True, "path": "/tmp/a.jsonl", "max_bytes": 4096, "backups": 2},
        "quotas": {"completion": {"requests_per_day": 10}, "tiers": {"quality": {"tokens_per_day": 500}}},
        "rate_limits": {"openai": {"requests_per_minute": 60, "max_concurrent": 2}},
        "breaker": {"failure_threshold": 3, "cooldown_s": 5},
        "hedging": {"enabled": True, "max_extra": 1},
        "prices": {"gpt-4o-mini": {"prompt_per_1k": 0.00015, "completion_per_1k": 0.0006}},
        "tiers_allowed": ["fast"],
        "environments": {"prod": {"fast": "ACME_FAST_KEY"}},
    }
    s, errors = parse_settings(raw, environ={})
    assert errors == []
    assert s.environment == "prod"
    assert s.allowed_hosts == ("api.openai.com",)
    assert s.quotas.features["completion"] == QuotaLimit(requests_per_day=10)
    assert s.quotas.tiers["quality"].tokens_per_day == 500
    assert s.rate_limit_for("openai") == RateLimit(60.0, 2)
    assert s.rate_limit_for("other") == RateLimit()
    assert s.breaker.failure_threshold == 3 and s.breaker.cooldown_s == 5
    assert s.prices["gpt-4o-mini"].completion_per_1k == 0.0006
    assert s.environments["prod"]["fast"] == "ACME_FAST_KEY"


def test_rate_limit_tables_match_the_provider_key_by_each_documented_name() -> None:
    # Limits are looked up with the key `Components.provider_key` builds, name:host:model;
    # a table may be named after the provider, the tier, "default" or that full key.
    table = {
        "openai": {"requests_per_minute": 60},
        "quality": {"requests_per_minute": 30},
        "default": {"requests_per_minute": 10},
        "mistral:codestral.mistral.ai:codestral-latest": {"requests_per_minute": 5},
        "mistral": {"requests_per_minute": 50},
    }
    s, errors = parse_settings({"rate_limits": table}, environ={})
    assert errors == []
    assert s.rate_limit_for("openai:api.openai.com:gpt-4o-mini", "quality").requests_per_minute == 60
    assert s.rate_limit_for("ollama:127.0.0.1:qwen2.5-coder:1.5b", "quality").requests_per_minute == 30
    assert s.rate_limit_for("ollama:127.0.0.1:qwen2.5-coder:1.5b", "fast").requests_per_minute == 10
    assert s.rate_limit_for("mistral:codestral.mistral.ai:codestral-latest").requests_per_minute == 5
    assert s.rate_limit_for("mistral:codestral.mistral.ai:other").requests_per_minute == 50
    assert parse_settings({}, environ={})[0].rate_limit_for("openai:h:m", "fast") == RateLimit()


def test_errors_name_the_key_and_unknown_keys_are_reported() -> None:
    raw = {
        "quotas": {"completion": {"requests_per_day": "many"}, "bogus": {}},
        "breaker": {"error_rate": 3},
        "colour": "blue",
        "environment": "staging",
        "environments": {"prod": {"fast": "sk-proj-AbC123dEf456GhI789jKl012MnO345"}},
    }
    s, errors = parse_settings(raw, environ={})
    assert "governance.quotas.completion.requests_per_day: expected an integer" in errors
    assert any(e.startswith("governance.quotas.bogus:") for e in errors)
    assert any(e.startswith("governance.breaker.error_rate:") for e in errors)
    assert any(e.startswith("governance.colour: unknown key") for e in errors)
    assert any(e.startswith("governance.environment:") for e in errors)
    assert any(e.startswith("governance.environments.prod.fast:") for e in errors)
    assert not any("AbC123" in e for e in errors)  # a pasted key is never echoed
    assert s.quotas.features["completion"].requests_per_day is None
    assert s.environment == "dev"


def test_environment_from_env_var() -> None:
    s, _ = parse_settings({}, environ={"LSP_ASSIST_ENVIRONMENT": "test"})
    assert s.environment == "test"


def test_policy_cannot_be_loosened() -> None:
    user, _ = parse_settings(
        {
            "allowed_hosts": ["api.openai.com", "evil.example"],
            "exclude": ["*.sql"],
            "audit": {"enabled": False},
            "quotas": {"completion": {"requests_per_day": 10_000}, "escalation": {"requests_per_day": 5}},
            "tiers_allowed": ["fast", "quality"],
        },
        environ={},
    )
    policy, perrs = parse_policy(
        {
            "governance": {
                "allowed_hosts": ["api.openai.com", "*.corp.example"],
                "exclude": ["*.pdf"],
                "audit": {"enabled": True},
                "quotas": {"completion": {"requests_per_day": 100}, "escalation": {"requests_per_day": 50}},
                "tiers_allowed": ["fast", "backup"],
            }
        }
    )
    assert perrs == []
    s, locked = apply_policy(user, policy)
    assert s.allowed_hosts == ("api.openai.com",)
    assert set(s.exclude) == {"*.sql", "*.pdf"}
    assert s.audit.enabled is True
    assert s.quotas.features["completion"].requests_per_day == 100
    assert s.quotas.features["escalation"].requests_per_day == 5  # user's stricter value stays
    assert s.tiers_allowed == ("fast",)
    assert {
        "governance.allowed_hosts",
        "governance.exclude",
        "governance.audit.enabled",
        "governance.quotas.completion.requests_per_day",
        "governance.tiers_allowed",
    } <= locked


def test_policy_applies_to_users_who_set_nothing() -> None:
    user, _ = parse_settings({}, environ={})
    policy, _ = parse_policy({"allowed_hosts": ["api.openai.com"], "tiers_allowed": ["fast"]})
    s, _ = apply_policy(user, policy)
    assert s.allowed_hosts == ("api.openai.com",)
    assert s.tiers_allowed == ("fast",)


def test_load_policy_files_merge_stricter(tmp_path: Path) -> None:
    a = tmp_path / "system.toml"
    b = tmp_path / "env.toml"
    a.write_text('allowed_hosts = ["api.openai.com", "x.corp"]\n[quotas.completion]\nrequests_per_day = 50\n')
    b.write_text(
        '[governance]\nallowed_hosts = ["x.corp"]\n[governance.quotas.completion]\nrequests_per_day = 80\n'
    )
    policy, errors = load_policy([a, b, tmp_path / "missing.toml"])
    assert errors == [] and policy is not None
    assert policy.settings.allowed_hosts == ("x.corp",)
    assert policy.settings.quotas.features["completion"].requests_per_day == 50
    bad = tmp_path / "bad.toml"
    bad.write_text("allowed_hosts = [")
    _, errors = load_policy([bad])
    assert errors and "invalid TOML" in errors[0]


def test_zero_values_are_kept_not_replaced_by_defaults() -> None:
    s, errors = parse_settings(
        {
            "breaker": {"error_rate": 0, "window_s": 0, "cooldown_s": 0},
            "hedging": {"enabled": True, "max_extra": 0},
            "audit": {"backups": 0},
            "quotas": {"completion": {"requests_per_day": 0}},
        },
        environ={},
    )
    assert errors == []
    assert s.breaker.error_rate == 0.0 and s.breaker.window_s == 0.0 and s.breaker.cooldown_s == 0.0
    assert s.hedging.max_extra == 0 and s.audit.backups == 0
    assert s.quotas.features["completion"].requests_per_day == 0


def test_a_rate_or_cap_below_one_is_refused_where_any_limit_is_read() -> None:
    # Below one request a minute the token buckets (burst = rate) admit nothing, and both
    # limiters read 0 as "no limit": so such a value is reported, in [governance], in the
    # policy and in [team] alike, and the limit stays unset (unlimited).
    bad = {"x": {"requests_per_minute": 0, "max_concurrent": 0}, "y": {"requests_per_minute": 0.5}}
    s, errors = parse_settings({"rate_limits": bad}, environ={})
    assert s.rate_limit_for("x") == RateLimit() and s.rate_limit_for("y") == RateLimit()
    assert errors == [
        "governance.rate_limits.x.requests_per_minute: expected a number >= 1; using the default",
        "governance.rate_limits.x.max_concurrent: expected a number >= 1; using the default",
        "governance.rate_limits.y.requests_per_minute: expected a number >= 1; using the default",
    ]
    _, perrs = parse_policy({"rate_limits": bad}, "p.toml")
    assert perrs == [f"p.toml: {e}" for e in errors]
    team, terrs = parse_team(TeamConfig(rate_limits={"users": bad}), environ={})
    assert team.limits.user_rates == {"x": RateLimit(), "y": RateLimit()}
    assert terrs == [e.replace("governance.rate_limits.", "team.rate_limits.users.") for e in errors]
    ok, errors = parse_settings({"rate_limits": {"x": {"requests_per_minute": 1.5}}}, environ={})
    assert errors == [] and ok.rate_limit_for("x") == RateLimit(requests_per_minute=1.5)


def test_team_and_governance_limits_share_one_reader() -> None:
    quotas = {"requests_per_day": -1, "tokens_per_day": 0, "per_hour": 3}
    s, errors = parse_settings({"quotas": {"tiers": {"fast": quotas}}}, environ={})
    team, terrs = parse_team(TeamConfig(quotas={"business_lines": {"fast": quotas}}), environ={})
    assert team.limits.business_lines["fast"] == s.quotas.tiers["fast"] == QuotaLimit(tokens_per_day=0)
    assert terrs == [e.replace("governance.quotas.tiers.", "team.quotas.business_lines.") for e in errors]
    assert len(errors) == 2  # the negative count and the unknown key


def test_policy_and_user_limits_combine_field_by_field() -> None:
    mine = {"a": RateLimit(10.0, None), "b": RateLimit(5.0, 2)}
    theirs = {"a": RateLimit(20.0, 3), "c": RateLimit(None, 1)}
    assert stricter_limits(mine, theirs) == {
        "a": RateLimit(10.0, 3),
        "b": RateLimit(5.0, 2),
        "c": RateLimit(None, 1),
    }
    quotas = stricter_limits({"q": QuotaLimit(100, None)}, {"q": QuotaLimit(None, 0)})
    assert quotas == {"q": QuotaLimit(100, 0)}


def test_the_policy_files_team_table_is_read_with_the_policy(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text('[governance]\nexclude = ["*.sql"]\n[team]\non_unavailable = "closed"\nbusiness_line = "x"')
    b.write_text('respect_gitignore = true\n[team]\nbusiness_line = "payments"\n[team.quotas.users.default]\n'
                 "requests_per_day = 5")  # fmt: skip
    policy, errors = load_policy([a, b])
    assert errors == [] and policy is not None  # [team] is not an unknown governance key
    assert policy.team == {
        "on_unavailable": "closed",
        "business_line": "payments",
        "quotas": {"users": {"default": {"requests_per_day": 5}}},
    }
    team, terrs = parse_team(TeamConfig(), policy.team, environ={})
    assert terrs == [] and team.on_unavailable == "closed" and team.business_line == "payments"
    assert team.limits.quota_for_user("anyone") == QuotaLimit(requests_per_day=5)
    assert "team" not in policy.keys and policy.settings.respect_gitignore


def test_out_of_range_values_keep_their_default_and_name_the_key() -> None:
    s, errors = parse_settings(
        {"breaker": {"min_calls": 0, "window_s": -1}, "rate_limits": {"x": {"max_concurrent": 0}}},
        environ={},
    )
    assert s.breaker.min_calls == 10 and s.breaker.window_s == 60.0
    assert s.rate_limit_for("x").max_concurrent is None
    assert {e.split(":")[0] for e in errors} == {
        "governance.breaker.min_calls",
        "governance.breaker.window_s",
        "governance.rate_limits.x.max_concurrent",
    }


def test_settings_go_through_the_config_loader() -> None:
    # One parser: governance tables are built by config.loader.build_dataclass.
    import lsp_assist.governance.settings as settings_module
    from lsp_assist.config.loader import build_dataclass

    assert settings_module.build_dataclass is build_dataclass
    assert not hasattr(settings_module, "_int") and not hasattr(settings_module, "_float")
