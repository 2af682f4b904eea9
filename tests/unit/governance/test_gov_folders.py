"""Per-folder policy: each workspace folder's files answer to that folder's own layer, with
the user layer below and the editor's and the admin's on top; a file outside every folder
to the user, editor and admin layers only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_assist.config.loader import ConfigLayers, FolderLayer
from lsp_assist.governance.boundaries import DataBoundary
from lsp_assist.governance.folders import folder_rules, governed_by
from lsp_assist.governance.policy import parse_policy
from lsp_assist.server import Runtime


def _boundary(tmp_path: Path, layers: dict[str, FolderLayer], base: tuple[str, ...] = ()) -> DataBoundary:
    boundary = DataBoundary(list(layers), exclude=base)
    boundary.set_folders(folder_rules(layers, None))
    return boundary


def test_each_folder_excludes_its_own_files_only(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    boundary = _boundary(
        tmp_path,
        {a: FolderLayer({"exclude": ["private/**"]}, "a.toml"), b: FolderLayer({"exclude": ["internal/**"]})},
        base=("*.sql",),
    )
    assert boundary.excluded(f"{a}/private/k.py") is not None
    assert boundary.excluded(f"{a}/internal/n.py") is None  # b's exclusion stays in b
    assert boundary.excluded(f"{b}/internal/k.py") is not None
    assert boundary.excluded(f"{b}/private/n.py") is None
    # A folder's rules are what the layers gave it; outside every folder, the base only.
    assert boundary.excluded(f"{tmp_path}/elsewhere/private/k.py") is None
    assert boundary.excluded(f"{tmp_path}/elsewhere/q.sql") is not None
    assert "a.toml" in (boundary.excluded(f"{a}/private/k.py") or "")


def test_the_innermost_folder_governs_nested_folders(tmp_path: Path) -> None:
    outer, inner = str(tmp_path / "outer"), str(tmp_path / "outer" / "inner")
    boundary = _boundary(
        tmp_path, {outer: FolderLayer({"exclude": ["gen/**"]}), inner: FolderLayer({"exclude": ["keys/**"]})}
    )
    assert boundary.excluded(f"{outer}/gen/x.py") is not None
    assert boundary.excluded(f"{inner}/keys/x.py") is not None
    assert boundary.excluded(f"{outer}/keys/x.py") is None
    assert boundary.governing_root(f"{inner}/keys/x.py") == inner
    assert "inner" in governed_by(boundary, f"{inner}/keys/x.py")
    assert governed_by(boundary, f"{tmp_path}/x.py").startswith("no workspace folder")


def test_gitignore_is_read_only_where_the_folder_asks(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        root.mkdir()
        (root / ".gitignore").write_text("build.py\n")
    boundary = _boundary(
        tmp_path, {str(a): FolderLayer({"respect_gitignore": True}), str(b): FolderLayer({})}
    )
    assert boundary.excluded(str(a / "build.py")) is not None
    assert boundary.excluded(str(b / "build.py")) is None
    assert ".gitignore" in boundary.ignore_names


def test_the_admin_policy_stays_on_top_in_every_folder(tmp_path: Path) -> None:
    policy, errors = parse_policy({"exclude": ["*.pdf"], "respect_gitignore": True})
    assert errors == []
    a = str(tmp_path / "a")
    rules = folder_rules({a: FolderLayer({"exclude": ["x/**"], "respect_gitignore": False})}, policy)
    assert rules[a].exclude == ("x/**", "*.pdf") and rules[a].respect_gitignore


def test_the_fingerprint_follows_the_folders(tmp_path: Path) -> None:
    a = str(tmp_path / "a")
    one = _boundary(tmp_path, {a: FolderLayer({"exclude": ["x/**"]})})
    two = _boundary(tmp_path, {a: FolderLayer({"exclude": ["x/**", "y/**"]})})
    same = _boundary(tmp_path, {a: FolderLayer({"exclude": ["x/**"]})})
    assert one.fingerprint() != two.fingerprint() and one.fingerprint() == same.fingerprint()


def test_the_folder_file_is_read_for_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".lsp-assist.toml").write_text('[governance]\nexclude = ["secret/**"]\n[completion]\ngrow = true\n')
    user = tmp_path / "user.toml"
    user.write_text('[governance]\nexclude = ["*.log"]\n')
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(user))
    layers = ConfigLayers()
    layers.load_files([ws])
    assert layers.folder_layers([ws])[str(ws)].table["exclude"] == ["*.log", "secret/**"]
    assert layers.build().config.completion.grow is True  # the rest stays server-wide


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))
    offline: dict[str, Any] = {"provider": "offline"}
    options = {
        "cache": {"dir": str(tmp_path / "cache")},
        "tiers": {"fast": offline, "quality": offline, "backup": offline},
        "workspace": {"index": False},
    }
    for name, glob in (("a", "private/**"), ("c", "hidden/**")):
        (tmp_path / name).mkdir()
        (tmp_path / name / ".lsp-assist.toml").write_text(f'[governance]\nexclude = ["{glob}"]\n')
    rt = Runtime(ConfigLayers(init_options=options), [tmp_path / "a"])
    rt.build()
    return rt


def test_a_folder_added_is_governed_at_once_and_a_removed_one_no_longer(
    runtime: Runtime, tmp_path: Path
) -> None:
    gov = runtime.governance
    assert gov is not None and gov.excluded(str(tmp_path / "c" / "hidden" / "s.py")) is None
    start = runtime.policy_epoch.value
    assert runtime.change_folders([tmp_path / "c"], []) == []
    gov = runtime.governance
    assert gov is not None and gov.excluded(str(tmp_path / "c" / "hidden" / "s.py")) is not None
    assert runtime.policy_epoch.value == start + 1
    runtime.change_folders([], [tmp_path / "a"])
    gov = runtime.governance
    assert runtime.workspace_roots == [tmp_path / "c"]
    assert gov is not None and gov.excluded(str(tmp_path / "a" / "private" / "k.py")) is None
    assert runtime.policy_epoch.value == start + 2


def test_the_cli_names_the_governing_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lsp_assist.cli.context_cmd import _governance

    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "private").mkdir(parents=True)
    b.mkdir()
    (a / ".lsp-assist.toml").write_text('[governance]\nexclude = ["private/**"]\n')
    governed, excluded = _governance(a / "private" / "k.py", [a, b])
    assert str(a / ".lsp-assist.toml") in governed and excluded is not None
    governed, excluded = _governance(b / "private" / "k.py", [a, b])
    assert "no .lsp-assist.toml" in governed and excluded is None
    governed, _ = _governance(tmp_path / "x.py", [a, b])
    assert governed.startswith("no workspace folder")


def test_a_bad_folder_value_is_reported_with_its_file(tmp_path: Path) -> None:
    errors: list[str] = []
    a = str(tmp_path / "a")
    bad = FolderLayer({"exclude": "secret/**", "respect_gitignore": 3}, "a.toml")
    rules = folder_rules({a: bad}, None, errors)
    assert rules[a].exclude == () and not rules[a].respect_gitignore  # the defaults
    assert len(errors) == 2 and all(e.startswith("a.toml: governance.") for e in errors), errors
