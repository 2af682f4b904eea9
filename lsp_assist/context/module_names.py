"""The names a standard-library module defines, read statically: what may follow `json.`.

A module's names come from its source file under the running interpreter's stdlib (parsed
with `ast`, never imported: its top-level definitions, assignments, imports, `__all__`,
and a package's submodules). A module whose names cannot be listed completely from source
(`from _posix import *` of a compiled module, a module-level `__getattr__`) gives None:
an incomplete list would forbid names that exist. Compiled modules that ship with the
interpreter (`math`, `sys`, `itertools`: built in, or in `lib-dynload`) are CPython's own
code, so they are listed with `dir()`; nothing else is ever imported.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

STDLIB = Path(sysconfig.get_paths()["stdlib"])
MAX_SOURCE_BYTES = 2_000_000  # a larger file is not read on a request's thread
# Modules known by another name on this platform (`os.path` is `posixpath`).
ALIASES = {"os.path": os.path.__name__}
MODULE_DUNDERS = frozenset(
    {"__name__", "__file__", "__doc__", "__dict__", "__spec__", "__loader__", "__package__", "__path__"}
)


def _source_of(module: str) -> Path | None:
    base = STDLIB.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file() and path.stat().st_size <= MAX_SOURCE_BYTES:
            return path
    return None


def _compiled(module: str) -> bool:
    """A module compiled into or shipped with the interpreter (no Python source)."""
    if module in sys.builtin_module_names:
        return True
    if "." in module or module.startswith("test"):
        return False
    dynload = STDLIB / "lib-dynload"
    return dynload.is_dir() and any(dynload.glob(f"{module}.*.so"))


def _targets(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in _targets(e)]
    return []


def _top_level(tree: ast.Module, module: str, depth: int) -> set[str] | None:
    """Names bound at the top level of a module (None when they cannot all be known)."""
    names: set[str] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                return None  # names made on demand
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(n for t in node.targets for n in _targets(t))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            names.update(_targets(node.target))
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if any(a.name == "*" for a in node.names):
                star = _star(node, module, depth)
                if star is None:
                    return None
                names |= star
            names.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, (ast.If, ast.Try)):  # `if sys.platform ...`, `try: import x`
            for part in (node.body, node.orelse, *(h.body for h in getattr(node, "handlers", ()))):
                stack.extend(part)
            stack.extend(getattr(node, "finalbody", ()))
    return names


def _star(node: ast.ImportFrom, module: str, depth: int) -> frozenset[str] | None:
    if node.level:
        package = module if _source_of(module) and _is_package(module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        target = f"{package}.{node.module}" if node.module else package
    else:
        target = node.module or ""
    if depth >= 2 or not target:
        return None
    if _source_of(target) is None and not _compiled(target):
        # `from nt import *` in a Windows branch: not this platform's names.
        return frozenset() if target.split(".")[0] in sys.stdlib_module_names else None
    return _names(target, depth + 1)


def _is_package(module: str) -> bool:
    return (STDLIB.joinpath(*module.split(".")) / "__init__.py").is_file()


def _submodules(module: str) -> set[str]:
    folder = STDLIB.joinpath(*module.split("."))
    out = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    out |= {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return out


def _dir_of_compiled(module: str) -> frozenset[str] | None:
    try:
        # CPython's own compiled module: no user code runs.
        return frozenset(dir(importlib.import_module(module)))
    except Exception:  # a module missing on this platform
        return None


@lru_cache(maxsize=256)
def _names(module: str, depth: int = 0) -> frozenset[str] | None:
    path = _source_of(module)
    if path is None:
        return _dir_of_compiled(module) if _compiled(module) else None
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    names = _top_level(tree, module, depth)
    if names is None:
        return None
    if path.name == "__init__.py":
        names |= _submodules(module)
    return frozenset(names | MODULE_DUNDERS)


def module_names(module: str) -> frozenset[str] | None:
    """The names `module.` may be followed by, or None when they are not known for sure
    (not a standard-library module, or one whose names are made at run time)."""
    if not module or not all(part.isidentifier() for part in module.split(".")):
        return None
    module = ALIASES.get(module, module)
    top = module.split(".")[0]
    if top in sys.stdlib_module_names:
        return _names(module)
    return None


__all__ = ["MODULE_DUNDERS", "STDLIB", "module_names"]
