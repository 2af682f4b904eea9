"""The usage report as a reader sees it: `lsp-assist usage --html` rendered in headless
Chromium (puppeteer-core, offline: any request but the file itself is refused). No text is
clipped (chart content inside its SVG box, no cell or heading cut, no table that needs
scrolling at 1280 px), every figure in the page's tables equals `lsp-assist usage --json`'s,
and a chart with nothing to draw is a sentence saying why. Screenshots go to the test's tmp
dir (and to $LSP_ASSIST_E2E_SHOTS when set)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_assist.telemetry.usage import CHECKPOINTS, format_figure
from lsp_assist.telemetry.usage_html import call_figure
from tests.data.usage_audit import PRICES_TOML, write_audit
from tests.e2e.conftest import ROOT, isolated_env
from tests.editors import vscode_real

pytestmark = [pytest.mark.vscode, pytest.mark.timeout(300)]

DRIVER = Path(__file__).with_name("render_report.js")


@pytest.fixture(scope="module")
def puppeteer_dir() -> Path:
    """The folder whose node_modules holds puppeteer-core (editors/vscode/e2e/setup.sh's)."""
    if shutil.which("node") is None:
        pytest.skip("node not found")
    base = Path(os.environ.get("LSP_ASSIST_E2E_DIR", Path.home() / ".cache" / "lsp-assist-e2e"))
    driver = base / "driver"
    if not (driver / "node_modules" / "puppeteer-core").is_dir() or not Path(vscode_real.CHROMIUM).exists():
        try:
            driver = vscode_real.ensure_installed() / "driver"
        except vscode_real.Unavailable as exc:
            pytest.skip(f"headless Chromium unavailable: {exc}")
    return driver


def usage(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "lsp_assist", "usage", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    return out


def render(driver: Path, page: Path, shot: Path) -> dict[str, Any]:
    spec = {"driverDir": str(driver), "chromium": vscode_real.CHROMIUM, "file": str(page), "shot": str(shot)}
    proc = subprocess.run(
        ["node", str(DRIVER), json.dumps(spec)], capture_output=True, text=True, timeout=180, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["errors"] == [], result["errors"]
    assert result["requests"] == [], "the page asked for something besides itself (not offline)"
    keep = os.environ.get("LSP_ASSIST_E2E_SHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    return result


def expected_figures(data: dict[str, Any]) -> dict[str, str]:
    """Every table cell the page should have, printed as the page prints it, from the JSON."""
    out: dict[str, str] = {}
    for dim, groups in data["by"].items():
        rows = [("(all)", data["overall"])] if dim == "feature" else []
        rows += sorted(groups.items())
        for name, g in rows:
            s = dict(g["suggestions"])
            for cp in CHECKPOINTS:
                s[f"retained_{cp}"] = s["retained_chars"][cp]
            for key, value in s.items():
                if not isinstance(value, dict):
                    out[f"{dim}|{name}|{key}"] = format_figure(key, value)
            if g["requests"]:
                calls = {k: g[k] for k in ("requests", "error_rate", "fallback_rate", "prompt_tokens")}
                calls.update(completion_tokens=g["completion_tokens"], cost=g["cost"])
                for q in ("p50", "p95"):
                    calls[f"ttft_{q}"] = g["ttft_ms"][q]
                    calls[f"total_{q}"] = g["total_ms"][q]
                out.update({f"{dim}|{name}|{k}": call_figure(k, v) for k, v in calls.items()})
    for name, row in data["suggestion_kinds"].items():
        out.update({f"suggestion|{name}|{k}": format_figure(k, v) for k, v in row.items()})
    return out


def test_the_report_is_readable_and_its_figures_are_the_json(tmp_path: Path, puppeteer_dir: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    write_audit(audit)
    env = isolated_env(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(PRICES_TOML, encoding="utf-8")
    env["LSP_ASSIST_CONFIG"] = str(config)
    page = tmp_path / "usage.html"
    data = json.loads(usage(["--audit", str(audit), "--json"], env).stdout)
    usage(["--audit", str(audit), "--html", str(page)], env)
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html and "<link" not in html and "<img" not in html

    seen = render(puppeteer_dir, page, tmp_path / "usage-report.png")
    assert seen["clipped"] == [], seen["clipped"]
    assert seen["empty"] == []  # every chart has data here
    assert seen["charts"] == [
        "Accepted characters and what is still there",
        "Acceptance and retention by model",
        "Time to first token",
        "End-to-end",
        "Estimated cost per feature per day",
    ]
    assert seen["tables"] == 9
    expected = expected_figures(data)
    keys = _ACCEPTANCE_KEYS | _CALL_KEYS | {"dismissed"}
    wanted = {
        k: v
        for k, v in expected.items()
        if k.split("|")[2] in keys and (k.split("|")[2] != "dismissed" or k.startswith("suggestion|"))
    }
    assert len(wanted) > 200
    assert seen["figures"] == wanted
    assert seen["figures"]["feature|(all)|acceptance_rate"] == format_figure(
        "acceptance_rate", data["overall"]["suggestions"]["acceptance_rate"]
    )


def test_empty_charts_are_sentences_that_say_why(tmp_path: Path, puppeteer_dir: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    write_audit(audit, calls=40)
    # Model calls only, no prices and no editor events.
    rows = [line for line in audit.read_text().splitlines() if '"event"' not in line]
    audit.write_text("\n".join(rows) + "\n")
    env = isolated_env(tmp_path)
    page = tmp_path / "usage.html"
    usage(["--audit", str(audit), "--html", str(page)], env)
    seen = render(puppeteer_dir, page, tmp_path / "usage-report-empty.png")
    assert seen["clipped"] == [], seen["clipped"]
    assert seen["charts"] == ["Time to first token", "End-to-end"]
    assert any(
        s.startswith("No cost chart: no model called in this period has a price") for s in seen["empty"]
    )
    assert any(
        s.startswith("No acceptance figures: no editor reported suggestion events") for s in seen["empty"]
    )
    assert seen["tables"] == 4  # model calls only: a sentence instead of the suggestion tables


_ACCEPTANCE_KEYS = {
    "shown",
    "accepted",
    "acceptance_rate",
    "accepted_chars",
    "retained_30s",
    "retained_2m",
    "retained_10m",
    "accepted_chars_per_call",
    "retained_chars_per_call",
    "accepted_chars_per_1k_prompt_tokens",
    "retained_chars_per_1k_prompt_tokens",
    "cost_per_retained_char",
}
_CALL_KEYS = {
    "requests",
    "error_rate",
    "fallback_rate",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "ttft_p50",
    "ttft_p95",
    "total_p50",
    "total_p95",
}
