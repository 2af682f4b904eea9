"""The data boundary only grows across configuration layers: `governance.exclude` in the
editor's settings adds to the workspace folder's `.lsp-assist.toml` instead of replacing it,
which let a workspace's excluded files reach prompts as soon as the editor named an
exclusion of its own. A folder's own exclusions govern that folder's files only."""

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
    ws = _root(tmp_path, "ws", ["secret/**"])
    layers.load_files([ws])
    folder = layers.folder_layers([ws])[str(ws)]
    assert folder.table["exclude"] == ["secret/**", "vault/**", "*.sql"]
    assert folder.source == str(ws / ".lsp-assist.toml")
    # Outside every folder: the editor's exclusions only.
    assert layers.merged()["governance"]["exclude"] == ["vault/**", "*.sql"]


def test_two_roots_keep_their_own_exclusion_lists(tmp_path: Path) -> None:
    layers = ConfigLayers(init_options={"governance": {"respect_gitignore": False}})
    a, b = _root(tmp_path, "a", ["secret/**"]), _root(tmp_path, "b", ["keys/**"])
    layers.load_files([a, b])
    folders = layers.folder_layers([a, b, tmp_path / "c"])
    assert folders[str(a)].table["exclude"] == ["secret/**"]
    assert folders[str(b)].table["exclude"] == ["keys/**"]
    assert "exclude" not in folders[str(tmp_path / "c")].table and folders[str(tmp_path / "c")].source == ""
    assert "exclude" not in layers.merged()["governance"]  # never one folder's for another's files


def test_a_malformed_governance_table_does_not_break_the_merge(tmp_path: Path) -> None:
    layers = ConfigLayers(init_options={"governance": "oops"})
    layers.load_files([_root(tmp_path, "ws", ["secret/**"])])
    assert layers.merged()["governance"] == "oops"  # reported by the loader as a bad value
