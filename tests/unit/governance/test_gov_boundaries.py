"""Exclusion globs, .lsp-assist-ignore, .gitignore, endpoint refusal, credentials."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_assist.config.schema import TierConfig
from lsp_assist.errors import EndpointRefused
from lsp_assist.governance.boundaries import DataBoundary, check_endpoint
from lsp_assist.governance.credentials import describe_key, key_status, resolve_api_key
from lsp_assist.governance.settings import GovernanceSettings


@pytest.mark.parametrize(
    "rel",
    [
        ".env", ".env.local", "config/.env.production", "certs/server.pem", "tls/private.key", "id_rsa",
        "home/.ssh/id_ed25519.pub", "store.p12", "cert.pfx", "credentials.json", ".aws/credentials",
        ".netrc", "web/.npmrc", "vault.kdbx", "secrets.yaml", "SECRETS.YML", "Server.PEM", ".git/config",
    ],
)  # fmt: skip
def test_default_secret_globs(tmp_path: Path, rel: str) -> None:
    b = DataBoundary([str(tmp_path)])
    assert b.excluded(str(tmp_path / rel)) is not None


@pytest.mark.parametrize("rel", ["src/app.py", "README.md", "environment.py", "keys.py", "src/tokenizer.ts"])
def test_ordinary_files_allowed(tmp_path: Path, rel: str) -> None:
    assert DataBoundary([str(tmp_path)]).excluded(str(tmp_path / rel)) is None


def test_outside_workspace_still_protected_and_none_fails_closed(tmp_path: Path) -> None:
    b = DataBoundary([str(tmp_path / "ws")])
    assert b.excluded("/home/u/.ssh/id_rsa") is not None
    assert b.excluded("/home/u/.aws/credentials") is not None
    assert b.excluded("/tmp/other/main.py") is None
    assert b.excluded(None) is not None


def test_extra_exclude_globs(tmp_path: Path) -> None:
    b = DataBoundary([str(tmp_path)], exclude=["*.sql", "private/**"])
    assert b.excluded(str(tmp_path / "db" / "dump.SQL")) == "governance.exclude"
    assert b.excluded(str(tmp_path / "private" / "a" / "b.py")) is not None
    assert b.excluded(str(tmp_path / "public" / "b.py")) is None


def test_lsp_assist_ignore_nested_and_negation(tmp_path: Path) -> None:
    (tmp_path / ".lsp-assist-ignore").write_text("generated/\n*.secret.py\n")
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / ".lsp-assist-ignore").write_text("internal_*.py\n!keep.secret.py\n")
    b = DataBoundary([str(tmp_path)])
    assert b.excluded(str(tmp_path / "generated" / "x.py")) is not None
    assert b.excluded(str(tmp_path / "a.secret.py")) is not None
    assert b.excluded(str(sub / "internal_api.py")) is not None
    assert b.excluded(str(sub / "keep.secret.py")) is None  # re-included by the deeper file
    assert b.excluded(str(tmp_path / "internal_api.py")) is None  # scoped to pkg/
    # Edits are picked up (mtime change).
    (tmp_path / ".lsp-assist-ignore").write_text("generated/\n*.secret.py\nnotes.md\n")
    import os

    os.utime(tmp_path / ".lsp-assist-ignore", ns=(1, 2))
    assert b.excluded(str(tmp_path / "notes.md")) is not None


def test_gitignore_only_when_configured(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    target = str(tmp_path / "build" / "out.py")
    assert DataBoundary([str(tmp_path)]).excluded(target) is None
    b = DataBoundary([str(tmp_path)], respect_gitignore=True)
    assert b.excluded(target) == f".gitignore in {tmp_path}"
    assert b.excluded(str(tmp_path / "src" / "run.log")) is not None


def test_unreadable_ignore_file_fails_closed(tmp_path: Path) -> None:
    (tmp_path / ".lsp-assist-ignore").mkdir()  # a directory: cannot be read as a file
    b = DataBoundary([str(tmp_path)])
    reason = b.excluded(str(tmp_path / "a.py"))
    assert reason is not None and "fail closed" in reason


def test_endpoint_plain_http_with_key_refused() -> None:
    with pytest.raises(EndpointRefused, match="plain HTTP"):
        check_endpoint("http://models.example.com/v1", True, None)
    check_endpoint("http://models.example.com/v1", False, None)  # no key: allowed
    check_endpoint("http://127.0.0.1:8080/v1", True, None)  # loopback: allowed
    check_endpoint("http://localhost:8080/v1", True, None)
    check_endpoint("http://[::1]:8080/v1", True, None)
    check_endpoint("https://models.example.com/v1", True, None)


def test_endpoint_host_not_allowed() -> None:
    allowed = ("api.openai.com", "*.corp.example")
    check_endpoint("https://api.openai.com/v1", True, allowed)
    check_endpoint("https://llm.eu.corp.example/v1", True, allowed)
    check_endpoint("http://127.0.0.1:9/v1", True, allowed)  # loopback always allowed
    with pytest.raises(EndpointRefused, match="allowed_hosts") as ei:
        check_endpoint("https://user:hunter2@api.other.com/v1", True, allowed)
    assert "hunter2" not in str(ei.value)
    with pytest.raises(EndpointRefused):
        check_endpoint("https://evilcorp.example/v1", False, ("*.corp.example",))
    with pytest.raises(EndpointRefused):
        check_endpoint("https://x.com/v1", False, ())  # empty tuple: loopback only


def test_credentials_per_environment() -> None:
    tier = TierConfig(provider="openai", api_key_env="OPENAI_KEY")
    env = {"OPENAI_KEY": "dev-key-value", "OPENAI_KEY_PROD": "prod-key-value", "ACME_FAST": "mapped"}
    dev = GovernanceSettings(environment="dev")
    prod = GovernanceSettings(environment="prod")
    assert resolve_api_key("fast", tier, dev, env) == "dev-key-value"
    assert resolve_api_key("fast", tier, prod, env) == "prod-key-value"
    mapped = GovernanceSettings(environment="prod", environments={"prod": {"fast": "ACME_FAST"}})
    assert resolve_api_key("fast", tier, mapped, env) == "mapped"
    strict = GovernanceSettings(environment="test", strict_environment=True)
    assert resolve_api_key("fast", tier, strict, env) is None
    assert key_status("fast", tier, strict, env) == "missing"
    assert key_status("fast", tier, prod, env) == "set"
    assert key_status("fast", TierConfig(), prod, env) == "not needed"
    text = describe_key("fast", tier, prod, env)
    assert text == "$OPENAI_KEY_PROD: set" and "prod-key-value" not in text


def test_verdicts_are_reused_within_the_ttl_then_rechecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lsp_assist.governance.boundaries as mod

    now = [1000.0]
    monkeypatch.setattr(mod.time, "monotonic", lambda: now[0])
    b = mod.DataBoundary([str(tmp_path)], verdict_ttl_s=2.0)
    target = str(tmp_path / "notes.py")
    assert b.excluded(target) is None
    (tmp_path / ".lsp-assist-ignore").write_text("notes.py\n")
    assert b.excluded(target) is None  # the cached verdict, within the TTL
    now[0] += 2.5
    assert b.excluded(target) is not None  # re-checked after it


def test_symlinks_are_judged_by_their_target_and_their_name(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "private").mkdir(parents=True)
    (ws / ".lsp-assist-ignore").write_text("private/\n")
    (ws / ".env.production").write_text("DB_PASSWORD=hunter2hunter2\n")
    (ws / "private" / "payroll.py").write_text("SALARY = 1\n")
    (ws / "app.py").write_text("x = 1\n")
    (ws / "settings.py").symlink_to(ws / ".env.production")
    (ws / "report.py").symlink_to(ws / "private" / "payroll.py")
    (ws / "mirror").symlink_to(ws / "private", target_is_directory=True)
    (ws / ".env").symlink_to(ws / "app.py")  # an innocent target under a secret name
    (ws / "alias.py").symlink_to(ws / "app.py")
    b = DataBoundary([str(ws)])
    assert "symlink target" in (b.excluded(str(ws / "settings.py")) or "")
    assert b.excluded(str(ws / "report.py")) is not None
    assert b.excluded(str(ws / "mirror" / "payroll.py")) is not None
    assert b.excluded(str(ws / ".env")) is not None
    assert b.excluded(str(ws / "alias.py")) is None
    # Outside the workspace the target still meets the secret globs.
    home = tmp_path / "home" / ".ssh"
    home.mkdir(parents=True)
    (home / "id_rsa").write_text("k")
    (ws / "notes.txt").symlink_to(home / "id_rsa")
    assert b.excluded(str(ws / "notes.txt")) is not None


def test_a_workspace_opened_through_a_symlink_keeps_its_ignore_files(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "gen").mkdir(parents=True)
    (real / ".lsp-assist-ignore").write_text("gen/\n")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    via_link = DataBoundary([str(tmp_path / "link")])
    assert via_link.excluded(str(tmp_path / "link" / "gen" / "out.py")) is not None
    assert via_link.excluded(str(real / "gen" / "out.py")) is not None
    assert via_link.excluded(str(real / "main.py")) is None


def test_a_build_boundary_remembering_folders_gives_every_verdict_of_the_plain_one(tmp_path: Path) -> None:
    """`memo_dirs` (the index workers') finds a folder's resolved path, its place under the
    root and its ignore files once: every file still gets the plain boundary's verdict,
    through nested ignore files, negations, links to files and folders, and secret names."""
    ws = tmp_path / "ws"
    (ws / "pkg" / "deep" / "er").mkdir(parents=True)
    (ws / "private").mkdir()
    (ws / "gen").mkdir()
    (ws / ".lsp-assist-ignore").write_text("gen/\n*.secret.py\n")
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "pkg" / ".lsp-assist-ignore").write_text("internal_*.py\n!keep.secret.py\n")
    (ws / "pkg" / "deep" / ".lsp-assist-ignore").write_text("er/skip.py\n")
    (ws / "private" / ".lsp-assist-ignore").mkdir()  # unreadable: fails closed below it
    names = ["a.py", "a.secret.py", "keep.secret.py", "internal_x.py", "skip.py", ".env", "run.log", "k.pem"]
    for folder in ("", "pkg", "pkg/deep", "pkg/deep/er", "private", "gen"):
        for n in names:
            (ws / folder / n).write_text("x = 1\n")
    (ws / "alias.py").symlink_to(ws / "private" / "a.py")
    (ws / "safe.py").symlink_to(ws / "pkg" / "a.py")
    (ws / "mirror").symlink_to(ws / "pkg" / "deep", target_is_directory=True)
    extra = [str(ws / "gone.py"), str(ws / "mirror" / "er" / "skip.py")]
    paths = [*sorted(str(p) for p in ws.rglob("*")), *extra]
    for gitignore in (False, True):
        plain = DataBoundary([str(ws)], exclude=["*.sql"], respect_gitignore=gitignore)
        memo = DataBoundary([str(ws)], exclude=["*.sql"], respect_gitignore=gitignore, memo_dirs=True)
        want = [plain.excluded(p) for p in paths]
        assert [memo.excluded(p) for p in paths] == want
        assert [memo.excluded(p) for p in reversed(paths)] == want[::-1]  # answers kept, not changed
        assert sum(w is None for w in want) > 5 and sum(w is not None for w in want) > 20


def test_one_regex_for_the_default_globs_matches_what_each_glob_matches() -> None:
    """The boundary's fast path (`_any_match`) says "no default glob matches" only when
    checking every glob says so: over secret names, near misses, and every path of this
    repository, at every depth and as an absolute path."""
    import itertools
    import os

    import pathspec

    from lsp_assist.governance.boundaries import DEFAULT_SECRET_GLOBS, _any_match

    spec = pathspec.GitIgnoreSpec.from_lines(DEFAULT_SECRET_GLOBS)
    fast = _any_match(spec)
    names = [g.replace("**/", "").replace("*", "x").rstrip("/") for g in DEFAULT_SECRET_GLOBS]
    names += [".env.local", "id_rsa.pub", "a.pem.bak", "envrc", ".environment", "key", "x.keys",
              "credentialsx", ".git", ".git/config", ".ssh", ".gnupg/a/b", "secrets", "my.secret.py",
              ".aws/credentials.bak", "docker/config.json", ".docker/config.json", "tfstate"]  # fmt: skip
    dirs = ["", "src/", "a/b/c/", ".ssh/", ".aws/", ".gnupg/x/", "home/u/.kube/", ".git/"]
    repo = Path(__file__).resolve().parents[3]
    paths = [d + n.lower() for d, n in itertools.product(dirs, names)]
    for dp, ds, fs in os.walk(repo):
        ds[:] = [d for d in ds if d not in (".venv", "node_modules", "objects")]  # bounded
        paths += [os.path.relpath(os.path.join(dp, f), repo).lower() for f in fs]
    paths += ["work/main/" + p for p in paths[:2000]]
    assert any(spec.match_file(p) for p in paths) and not all(spec.match_file(p) for p in paths)
    for p in paths:
        assert bool(fast.search(p)) == spec.match_file(p), p
    negated = pathspec.GitIgnoreSpec.from_lines(["*.key", "!public.key"])
    assert _any_match(negated).search("public.key")  # a negation: every path takes the full check
