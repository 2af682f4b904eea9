"""Reads configuration from every source and merges it by precedence.

Lowest to highest: built-in defaults, the user TOML file (`$LSP_ASSIST_CONFIG`, else the
platform config dir `lsp-assist/config.toml`), the workspace `.lsp-assist.toml`,
`initializationOptions`, then `workspace/didChangeConfiguration`. Every source uses the
same keys. Invalid values are reported with their dotted key and replaced by the default,
so a typo never takes the server down.

The data boundary's keys (`governance.exclude`, `governance.respect_gitignore`) are per
workspace folder: a folder's `.lsp-assist.toml` sets them for that folder's files only
(`folder_layers`, applied by `governance/folders.py`); every other key of the folders'
files is merged into the one process-wide configuration, as one workspace layer.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_assist.config.schema import (
    NEXT_EDIT_CONFIDENCES,
    NEXT_EDIT_FORMATS,
    NEXT_EDIT_PREDICTORS,
    TIER_NAMES,
    Config,
    TierConfig,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

WORKSPACE_FILE = ".lsp-assist.toml"
# Keys that must never come from a settings file: secrets live in environment variables.
_FORBIDDEN_KEYS = {"api_key", "apikey", "key", "token", "password", "secret"}


@dataclass
class LoadResult:
    config: Config
    errors: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # which files/layers contributed


def user_config_path() -> Path:
    env = os.environ.get("LSP_ASSIST_CONFIG")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("lsp-assist")) / "config.toml"


def default_cache_dir() -> Path:
    env = os.environ.get("LSP_ASSIST_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("lsp-assist"))


def resolve_cache_dir(config: Config) -> Path:
    """`cache.dir` if set, else $LSP_ASSIST_CACHE_DIR, else the platform cache dir."""
    return Path(config.cache.dir).expanduser() if config.cache.dir else default_cache_dir()


def read_toml(path: Path, errors: list[str]) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
            return data
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        errors.append(f"{path}: cannot read configuration ({exc})")
        return {}


def deep_merge(base: dict[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    """Merge `layer` over `base` (tables merge key by key, everything else replaces)."""
    out = dict(base)
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        elif isinstance(value, Mapping):
            out[key] = deep_merge({}, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def unwrap_client_settings(settings: Any) -> dict[str, Any]:
    """Accept `{"lspAssist": {...}}`, `{"lsp-assist": {...}}` or the bare dict from a client."""
    if not isinstance(settings, Mapping):
        return {}
    for wrapper in ("lspAssist", "lsp-assist", "lsp_assist"):
        inner = settings.get(wrapper)
        if isinstance(inner, Mapping):
            return dict(inner)
    return dict(settings)


_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _describe(tp: Any) -> str:
    """The expected type in words (error messages never echo the value: it may be a secret)."""
    if tp in _TYPE_WORDS:
        return _TYPE_WORDS[tp]
    origin = typing.get_origin(tp)
    if origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return f"a list of {_plural(args[0])}" if args else "a list"
    if origin is dict or (dataclasses.is_dataclass(tp) and isinstance(tp, type)):
        return "a table"
    return getattr(tp, "__name__", str(tp))


def _plural(tp: Any) -> str:
    return {str: "strings", int: "integers", float: "numbers", bool: "booleans"}.get(tp, "values")


def _coerce(value: Any, tp: Any, key: str, errors: list[str]) -> tuple[bool, Any]:
    """Return (ok, value) converting TOML/JSON values to the annotated type."""
    origin = typing.get_origin(tp)
    if tp is Any or tp is object:
        return True, value
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return True, None
        real = [a for a in args if a is not type(None)]
        if len(real) == 1:  # X | None: report X's own error
            return _coerce(value, real[0], key, errors)
        for arg in real:
            ok, out = _coerce(value, arg, key, [])
            if ok:
                return True, out
        errors.append(f"{key}: expected {' or '.join(_describe(a) for a in real)}")
        return False, None
    if tp is type(None):
        return value is None, None
    if tp is bool:
        if isinstance(value, bool):
            return True, value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return True, value
        if isinstance(value, float) and value.is_integer():
            return True, int(value)
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, float(value)
    elif tp is str:
        if isinstance(value, str):
            return True, value
    elif origin in (list, tuple):
        item_tp = typing.get_args(tp)[0]
        if isinstance(value, (list, tuple)):
            items = []
            for i, item in enumerate(value):
                ok, out = _coerce(item, item_tp, f"{key}[{i}]", errors)
                if ok:
                    items.append(out)
            return True, tuple(items) if origin is tuple else items
    elif origin is dict:
        _, val_tp = typing.get_args(tp)
        if isinstance(value, Mapping):
            out_d: dict[str, Any] = {}
            for k, v in value.items():
                ok, out = _coerce(v, val_tp, f"{key}.{k}", errors)
                if ok:
                    out_d[str(k)] = out
            return True, out_d
    elif dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if isinstance(value, Mapping):
            return True, build_dataclass(tp, value, key, errors)
    errors.append(f"{key}: expected {_describe(tp)}")
    return False, None


def _number(x: Any) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _in_bounds(value: Any, meta: Mapping[str, Any], key: str, errors: list[str]) -> bool:
    """Numeric bounds from a field's metadata (`field(metadata={"min": 1, "max": 1.0})`,
    schema.bounded). The message names the range, never the value."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return True
    low, high = meta.get("min"), meta.get("max")
    if (low is None or value >= low) and (high is None or value <= high):
        return True
    if low is not None and high is not None:
        wanted = f"from {_number(low)} to {_number(high)}"
    elif low is not None:
        wanted = f">= {_number(low)}"
    else:
        wanted = f"<= {_number(high)}"
    errors.append(f"{key}: expected a number {wanted}; using the default")
    return False


def _table_in_bounds(
    table: dict[str, Any], meta: Mapping[str, Any], key: str, default: Any, errors: list[str]
) -> dict[str, Any]:
    """A table of numbers (budget.shares): the field's bounds apply to each entry; an entry
    out of range keeps its default entry (and is dropped when the default has none)."""
    out: dict[str, Any] = {}
    for name, value in table.items():
        if _in_bounds(value, meta, f"{key}.{name}", errors):
            out[name] = value
        elif isinstance(default, Mapping) and name in default:
            out[name] = default[name]
    return out


def _field_default(f: dataclasses.Field[Any], base: Any) -> Any:
    if base is not None:
        return getattr(base, f.name)
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def build_dataclass(
    cls: type[Any], data: Mapping[str, Any], prefix: str, errors: list[str], base: Any = None
) -> Any:
    """Instantiate dataclass `cls` from `data`, reporting unknown keys and bad values.

    Every field keeps its default (`base`'s value when given, else the class default) unless
    `data` names it with a valid value (a zero is a value: nothing is replaced by the default
    because it is falsy). Bounds come from the field's metadata ("min", "max"). Frozen
    dataclasses work too (built from keywords).
    """
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key)
        dotted = f"{prefix}.{key}" if prefix else key
        if key.lower() in _FORBIDDEN_KEYS:
            errors.append(
                f"{dotted}: secrets are never read from settings; name an environment variable "
                "in api_key_env instead (value ignored)"
            )
            continue
        if key not in fields:
            errors.append(f"{dotted}: unknown key (ignored)")
            continue
        ok, out = _coerce(value, hints[key], dotted, errors)
        if not ok:
            continue
        meta = fields[key].metadata
        if isinstance(out, dict):
            values[key] = _table_in_bounds(out, meta, dotted, _field_default(fields[key], base), errors)
        elif _in_bounds(out, meta, dotted, errors):
            values[key] = out
    return cls(**values) if base is None else dataclasses.replace(base, **values)


def _build_tiers(raw: Any, errors: list[str]) -> dict[str, TierConfig]:
    tiers = Config().tiers
    if not isinstance(raw, Mapping):
        errors.append("tiers: expected a table; using the defaults")
        return tiers
    for name, value in raw.items():
        if name not in TIER_NAMES:
            errors.append(f"tiers.{name}: unknown tier (expected one of {', '.join(TIER_NAMES)}; ignored)")
            continue
        if not isinstance(value, Mapping):
            errors.append(f"tiers.{name}: expected a table; using the default")
            continue
        # That tier's own defaults (quality: max_tokens 160) stand for what the table leaves
        # out or names with a bad value.
        tiers[name] = build_dataclass(TierConfig, value, f"tiers.{name}", errors, base=tiers[name])
    return tiers


def config_from_dict(data: Mapping[str, Any]) -> tuple[Config, list[str]]:
    """Validate a merged settings dict into a Config; returns the errors found."""
    errors: list[str] = []
    tiers_raw = data.get("tiers")
    rest = {k: v for k, v in data.items() if k != "tiers"}
    config: Config = build_dataclass(Config, rest, "", errors)
    if tiers_raw is not None:
        config.tiers = _build_tiers(tiers_raw, errors)
    for name in TIER_NAMES:
        config.tiers.setdefault(name, Config().tiers[name])
    _validate(config, errors)
    return config, errors


def _validate(config: Config, errors: list[str]) -> None:
    """What field metadata cannot say (numeric ranges are checked in build_dataclass)."""
    for name, tier in config.tiers.items():
        if tier.api not in ("completions", "chat"):
            errors.append(f"tiers.{name}.api: expected 'completions' or 'chat', got {tier.api!r}")
            tier.api = "completions"
        if tier.provider == "openai" and not tier.base_url:
            errors.append(f"tiers.{name}.base_url: required for provider 'openai'")
    ne = config.next_edit
    for key, allowed in (
        ("predictor", NEXT_EDIT_PREDICTORS),
        ("format", NEXT_EDIT_FORMATS),
        ("confidence", NEXT_EDIT_CONFIDENCES),
    ):
        value = getattr(ne, key)
        if value not in allowed:
            errors.append(f"next_edit.{key}: expected one of {', '.join(allowed)}, got {value!r}")
            setattr(ne, key, allowed[0])
    if ne.tier and ne.tier not in TIER_NAMES:
        errors.append(f"next_edit.tier: expected one of {', '.join(TIER_NAMES)}, got {ne.tier!r}")
        ne.tier = ""
    if config.local.backend not in ("inprocess", "server"):
        errors.append(f"local.backend: expected 'inprocess' or 'server', got {config.local.backend!r}")
        config.local.backend = "inprocess"


# Keys whose lists add up across layers instead of the higher layer replacing them: the
# data boundary only grows (an exclusion in the editor's settings must not drop the
# workspace folder's).
UNION_KEYS: tuple[tuple[str, str], ...] = (("governance", "exclude"),)
# The data boundary's keys: a workspace folder's own file sets them for its own files only.
FOLDER_KEYS: tuple[str, ...] = ("exclude", "respect_gitignore")


@dataclass(frozen=True)
class FolderLayer:
    """The `[governance]` table that governs one workspace folder's files: the user layer,
    the folder's own `.lsp-assist.toml`, then the editor's settings (`exclude` adds up)."""

    table: Mapping[str, Any]
    source: str = ""  # the folder's settings file, "" when it has none


def _without_folder_keys(layer: Mapping[str, Any]) -> dict[str, Any]:
    """`layer` less the per-folder boundary keys (they never govern another folder)."""
    out = dict(layer)
    table = out.get("governance")
    if isinstance(table, Mapping):
        out["governance"] = {k: v for k, v in table.items() if k not in FOLDER_KEYS}
    return out


def _at(layer: Mapping[str, Any], section: str, key: str) -> Any:
    table = layer.get(section)
    return table.get(key) if isinstance(table, Mapping) else None


def _union(values: typing.Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if isinstance(value, list):
            out.extend(v for v in value if v not in out)
    return out


@dataclass
class ConfigLayers:
    """The raw layers kept separately so a later change re-merges in the right order."""

    user: dict[str, Any] = field(default_factory=dict)
    workspace: dict[str, Any] = field(default_factory=dict)  # every folder's file, boundary keys left out
    folders: dict[str, dict[str, Any]] = field(default_factory=dict)  # each folder's own file, by root
    init_options: dict[str, Any] = field(default_factory=dict)
    client: dict[str, Any] = field(default_factory=dict)
    file_errors: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def load_files(self, workspace_roots: list[Path]) -> None:
        self.file_errors = []
        self.sources = []
        path = user_config_path()
        self.user = read_toml(path, self.file_errors)
        if self.user:
            self.sources.append(str(path))
        self.workspace = {}
        self.folders = {}
        for root in workspace_roots:
            wpath = root / WORKSPACE_FILE
            layer = read_toml(wpath, self.file_errors)
            if layer:
                self.folders[os.path.abspath(root)] = layer
                self.workspace = deep_merge(self.workspace, _without_folder_keys(layer))
                self.sources.append(str(wpath))

    def folder_layers(self, workspace_roots: list[Path]) -> dict[str, FolderLayer]:
        """Per workspace folder (absolute path), the `[governance]` table its files answer
        to; the admin policy is applied on top by `governance/folders.py`."""
        out: dict[str, FolderLayer] = {}
        for root in workspace_roots:
            key = os.path.abspath(root)
            own = self.folders.get(key, {})
            layers = (self.user, own, self.init_options, self.client)
            table: dict[str, Any] = {}
            for layer in layers:
                section = layer.get("governance")
                if isinstance(section, Mapping):
                    table = deep_merge(table, section)
            union = _union(_at(layer, "governance", "exclude") for layer in layers)
            if union:
                table["exclude"] = union
            out[key] = FolderLayer(table, str(Path(key) / WORKSPACE_FILE) if own else "")
        return out

    def merged(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        layers = (self.user, self.workspace, self.init_options, self.client)
        for layer in layers:
            data = deep_merge(data, layer)
        for section, key in UNION_KEYS:
            union = _union(_at(layer, section, key) for layer in layers)
            if union and isinstance(data.setdefault(section, {}), dict):
                data[section][key] = union
        return data

    def build(self) -> LoadResult:
        config, errors = config_from_dict(self.merged())
        return LoadResult(config=config, errors=[*self.file_errors, *errors], sources=list(self.sources))


def load_config(
    workspace_roots: list[Path] | None = None,
    init_options: Mapping[str, Any] | None = None,
) -> LoadResult:
    """Load every layer (for the CLI; the server keeps a ConfigLayers to re-merge on change)."""
    layers = ConfigLayers(init_options=unwrap_client_settings(init_options or {}))
    layers.load_files(workspace_roots or [])
    return layers.build()
