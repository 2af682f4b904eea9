"""What the embedded model's parts (`local.py`) share: its settings, and how the typing
model's prompts are cut to the jump budget (`prompt_budget.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lsp_assist.config.schema import LocalConfig
from lsp_assist.providers.local_threads import configured_threads
from lsp_assist.providers.prompt_budget import Cut, PromptBudget


@dataclass
class LocalSettings:
    """The embedded model's configuration. One object for all the parts, so that replacing
    `local` on a loaded provider (tests and benchmarks switch a setting) reaches each."""

    local: LocalConfig
    cache_dir: Path
    model_name: str  # the typing model

    def threads(self) -> tuple[int, int]:
        """(generation, most prompt threads); configured values win over the defaults."""
        return configured_threads(self.local)


@dataclass
class CutPrompts:
    """After a jump the first request reads only what fits `budget`; `seam` is where the last
    cut prompt joined (kept while typing on, so a key reads only itself); `line_enders` are
    the typing model's tokens a cut may end at."""

    budget: PromptBudget
    seam: Cut | None = None
    line_enders: frozenset[int] = field(default_factory=frozenset)
