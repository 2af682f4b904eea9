"""The data boundary only grows across configuration layers: `governance.exclude` in the
editor's settings adds to the workspace's `.lsp-assist.toml` (and one root's to another's)
instead of replacing it, which let a workspace's excluded files reach prompts as soon as the
editor named an exclusion of its own."""

from __future__ import annotations

from pathlib import Path

from lsp_assist.config.loader import ConfigLayers


def _root(tmp_path: Path, name: str, globs: list[str]) -> Path:
    root = tmp_path / name
    root.mkdir()
    quoted = ", ".join(f'"{g}"' for g in globs)
    (root / ".lsp-assist.toml").write_text(f"[governance]\nexclude = [{quoted}]\n")
    return root


def test_editor_exclusions_add_to_the_workspace_file(tmp_path: Path) -> None:
    layers = ConfigLayers(init_options={"governance": {"exclude": ["vault/**"]}})
    layers.client = {"governance": {"exclude": ["*.sql", "vault/**"]}}
    layers.load_files([_root(tmp_path, "ws", ["secret/**"])])
    assert layers.merged()["governance"]["exclude"] == ["secret/**", "vault/**", "*.sql"]


def test_two_roots_keep_both_exclusion_lists(tmp_path: Path) -> None:
    layers = ConfigLayers()
    layers.load_files([_root(tmp_path, "a", ["secret/**"]), _root(tmp_path, "b", ["keys/**"])])
    assert layers.merged()["governance"]["exclude"] == ["secret/**", "keys/**"]


def test_a_malformed_governance_table_does_not_break_the_merge(tmp_path: Path) -> None:
    layers = ConfigLayers(init_options={"governance": "oops"})
    layers.load_files([_root(tmp_path, "ws", ["secret/**"])])
    assert layers.merged()["governance"] == "oops"  # reported by the loader as a bad value
