"""Each build step on its own: typed inputs in, a bundle of components out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsp_assist.composition.configuration import Resolved, resolve_configuration
from lsp_assist.composition.listeners import Listeners
from lsp_assist.composition.providers import build_providers, local_load_key
from lsp_assist.composition.teardown import retire
from lsp_assist.config.loader import ConfigLayers
from lsp_assist.governance.guard import Governance
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.offline import OfflineProvider
from lsp_assist.server import Runtime

ANTHROPIC = {"provider": "anthropic", "model": "claude-haiku-4-5", "api_key_env": "TEST_ANTHROPIC_KEY"}
OFFLINE = {"provider": "offline"}


def _resolved(**options: Any) -> Resolved:
    return resolve_configuration(ConfigLayers(init_options=options).build())


def _governance(resolved: Resolved) -> Governance:
    gov, errors = Governance.from_config(resolved.config, resolved.cache_dir, [])
    assert errors == []
    return gov


def test_a_cache_dir_that_cannot_be_made_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    resolved = _resolved(cache={"dir": str(tmp_path / "file" / "cache")})
    assert [e for e in resolved.errors if e.startswith("cache.dir: cannot create")]
    assert resolved.config.tier("fast").provider in ("local", "offline")  # "auto" resolved


def test_a_refused_endpoint_falls_back_to_the_offline_engine(monkeypatch: Any) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "test-key-not-real")
    resolved = _resolved(
        tiers={"fast": ANTHROPIC, "quality": OFFLINE, "backup": OFFLINE},
        governance={"allowed_hosts": ["api.example.com"]},
    )
    parts = build_providers(resolved, _governance(resolved), ClientPool(), lambda: [], (), Listeners())
    assert parts.providers["fast"] is parts.offline and parts.providers["quality"] is parts.offline
    assert len(parts.errors) == 1 and parts.errors[0].startswith("tiers.fast: endpoint refused")
    assert "test-key-not-real" not in parts.errors[0] and parts.loaded == []


def test_an_embedded_model_with_the_same_load_settings_is_kept_and_shared() -> None:
    local = {"provider": "local"}
    resolved = _resolved(tiers={"fast": local, "quality": local, "backup": OFFLINE})
    kept = OfflineProvider()  # stands in for the embedded model the last build loaded
    key = local_load_key(resolved.config.tier("fast"), resolved.config.local, resolved.cache_dir)
    parts = build_providers(
        resolved, _governance(resolved), ClientPool(), lambda: [], [(key, kept)], Listeners()
    )
    assert parts.providers["fast"] is kept and parts.errors == []
    if resolved.config.tier("quality").model in ("", resolved.config.tier("fast").model):
        assert parts.providers["quality"] is kept  # one model file, one copy
    assert parts.loaded[0] == (key, kept)


def test_a_rebuild_keeps_the_statistics_and_the_long_lived_parts(runtime: Runtime) -> None:
    stats, store, epoch = runtime.stats, runtime.store, runtime.policy_epoch
    runtime.layers.client = {"budget": {"total_ms": {"fast": 900}}}
    errors = runtime.build()
    assert errors == [] and stats is not None and stats.budget.total_ms["fast"] == 900
    assert runtime.stats is stats and runtime.store is store and runtime.policy_epoch is epoch
    assert runtime.errors is errors and runtime.telemetry is None  # no exporter configured


class _Closing(OfflineProvider):
    def __init__(self, closed: list[str], name: str) -> None:
        super().__init__()
        self.closed, self.label = closed, name

    async def aclose(self) -> None:
        self.closed.append(self.label)


async def test_retiring_closes_only_what_the_new_build_no_longer_uses() -> None:
    closed: list[str] = []
    kept, dropped = _Closing(closed, "kept"), _Closing(closed, "dropped")
    await retire(None, {"fast": kept, "quality": dropped}, {"fast": kept})
    assert closed == ["dropped"]
