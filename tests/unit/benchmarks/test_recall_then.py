"""`context_recall --then`: an older commit's engine builds prompts in its own process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.recall_then import REPO, ThenEngine

TEXT = (
    "import os\n\n\ndef area(width, height):\n    scale = os.environ.get('SCALE', '1')\n"
    "    \n    return width * height * float(scale)\n"
)


def test_the_engine_of_a_commit_builds_the_prompt_of_that_commit(tmp_path: Path) -> None:
    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    then = ThenEngine("HEAD", tmp_path)
    try:
        assert (
            then.root.parent == tmp_path and (then.root / "lsp_assist" / "context" / "builder.py").is_file()
        )
        got = then.prompt("python", "/p/area.py", TEXT, 5, 4, 4000, [])
        with_tab = then.prompt(
            "python", "/p/area.py", TEXT, 5, 4, 4000, [("/p/units.py", "def to_metres(x):\n    return x\n")]
        )
    finally:
        then.close()
    assert then.proc.returncode == 0
    # The prompt of the committed engine (the working tree may hold edits): the lines
    # around the cursor on both sides, and the open tab's outline only when one is open.
    assert "def area(width, height):" in got and "return width * height" in got
    assert "to_metres" in with_tab and "to_metres" not in got


def test_a_bad_revision_is_an_error_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(subprocess.CalledProcessError):
        ThenEngine("no-such-revision-anywhere", tmp_path)
    assert list(tmp_path.iterdir()) == []
