"""Every numeric configuration key is range-checked by the one loader.

Bounds are declared once, next to the field (`field(metadata=bounded(low, high))`); a value
outside them is reported by its dotted key and the default is kept. The walk over the
schema below finds every numeric key, so a new key without bounds fails here.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Iterator
from typing import Any

import pytest

from lsp_assist.config.loader import config_from_dict
from lsp_assist.config.schema import Config
from lsp_assist.governance.settings import GovernanceSettings

NUMBERS = (int, float)


@dataclasses.dataclass
class Key:
    dotted: str  # "tiers.quality.max_tokens", "budget.shares.ttft"
    field: dataclasses.Field[Any]
    tp: type
    default: Any


def _numeric(tp: Any) -> type | None:
    """int or float, also as `X | None`."""
    if tp in NUMBERS:
        return typing.cast(type, tp)
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if len(args) == 1 and args[0] in NUMBERS and type(None) in typing.get_args(tp):
        return typing.cast(type, args[0])
    return None


def numeric_keys(obj: Any, prefix: str = "") -> Iterator[Key]:
    """Every numeric key under the dataclass instance `obj`, with its default there.

    Tables of dataclasses (the tiers) are walked per entry, with that entry's own defaults
    (tiers.quality.max_tokens is 160, not TierConfig's 48); tables of numbers (budget.*) are
    checked per entry.
    """
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        dotted = f"{prefix}{f.name}"
        tp = hints[f.name]
        value = getattr(obj, f.name)
        if (num := _numeric(tp)) is not None:
            yield Key(dotted, f, num, value)
        elif dataclasses.is_dataclass(value):
            yield from numeric_keys(value, dotted + ".")
        elif typing.get_origin(tp) is dict:
            item_tp = typing.get_args(tp)[1]
            if (num := _numeric(item_tp)) is not None:
                for name, item in value.items():
                    yield Key(f"{dotted}.{name}", f, num, item)
            elif dataclasses.is_dataclass(item_tp):
                # An empty table (governance.rate_limits) is walked as one default entry.
                for name, item in value.items() or [("<name>", item_tp())]:
                    yield from numeric_keys(item, f"{dotted}.{name}.")
        elif typing.get_origin(tp) in (list, tuple):
            assert _numeric(typing.get_args(tp)[0]) is None, (
                f"{dotted}: a list of numbers has no bounds check"
            )


CONFIG_KEYS = list(numeric_keys(Config()))
IDS = [k.dotted for k in CONFIG_KEYS]


def settings(dotted: str, value: Any) -> dict[str, Any]:
    """{"a": {"b": value}} for "a.b"."""
    out: dict[str, Any] = {}
    node = out
    *parents, leaf = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    return out


def lookup(config: Config, dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        node = node[part] if isinstance(node, dict) else getattr(node, part)
    return node


def test_the_walk_finds_the_keys_the_issue_names() -> None:
    found = set(IDS)
    for key in (
        "completion.deadline_ms",
        "completion.debounce_min_ms",
        "completion.invoked_choices",
        "completion.invoked_sample_temperature",
        "tiers.fast.temperature",
        "tiers.quality.total_timeout_ms",
        "local.n_ctx",
        "budget.shares.ttft",
        "team.timeout_ms",
    ):
        assert key in found, key
    assert len(found) > 40


@pytest.mark.parametrize("key", CONFIG_KEYS, ids=IDS)
def test_every_numeric_key_declares_both_bounds(key: Key) -> None:
    low, high = key.field.metadata.get("min"), key.field.metadata.get("max")
    assert low is not None and high is not None, f"{key.dotted}: declare bounds (schema.bounded)"
    # None: unset, another setting decides (completion.debounce_*: the fast tier's provider).
    in_range = key.default is None or low <= key.default <= high
    assert in_range, f"{key.dotted}: the default is outside its own bounds"


@pytest.mark.parametrize("key", CONFIG_KEYS, ids=IDS)
def test_out_of_range_values_are_reported_by_key_and_keep_the_default(key: Key) -> None:
    low, high = key.field.metadata.get("min"), key.field.metadata.get("max")
    assert low is not None and high is not None, key.dotted
    step = 1 if key.tp is int else 0.5
    for bad in (low - step, high + step, -(10**12), 10**12):
        if low <= bad <= high:
            continue
        config, errors = config_from_dict(settings(key.dotted, bad))
        named = [e for e in errors if e.startswith(f"{key.dotted}:")]
        assert named, (key.dotted, bad, errors)
        numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", named[0])]
        assert float(bad) not in numbers, named[0]  # the range is named, never the value
        assert lookup(config, key.dotted) == key.default, (key.dotted, bad)


@pytest.mark.parametrize("key", CONFIG_KEYS, ids=IDS)
def test_values_at_the_bounds_are_accepted(key: Key) -> None:
    for edge in (key.field.metadata.get("min"), key.field.metadata.get("max")):
        if edge is None:
            continue
        value = key.tp(edge)
        config, errors = config_from_dict(settings(key.dotted, value))
        assert not [e for e in errors if e.startswith(f"{key.dotted}:")], errors
        assert lookup(config, key.dotted) == value


@pytest.mark.parametrize(
    ("dotted", "bad"),
    [
        ("completion.deadline_ms", -500),
        ("completion.debounce_min_ms", -1),
        ("completion.debounce_max_ms", -90),
        ("completion.invoked_choices", 0),
        ("completion.invoked_choices", 10**6),
        ("completion.enrichment_timeout_ms", -1),
        ("completion.invoked_sample_temperature", 7.5),
        ("tiers.fast.temperature", -0.1),
        ("tiers.quality.first_token_timeout_ms", -1),
        ("tiers.backup.max_tokens", 0),
    ],
)
def test_the_issue_s_values_are_refused(dotted: str, bad: float) -> None:
    """Issue 23: `completion.deadline_ms = -500` was accepted silently, and every request
    came back empty."""
    default = lookup(Config(), dotted)
    config, errors = config_from_dict(settings(dotted, bad))
    assert any(e.startswith(f"{dotted}:") for e in errors), errors
    assert lookup(config, dotted) == default


def test_a_bad_entry_of_a_numbers_table_keeps_its_default_and_the_rest() -> None:
    config, errors = config_from_dict({"budget": {"shares": {"ttft": 3.0, "queue": 0.2}}})
    assert any(e.startswith("budget.shares.ttft:") for e in errors), errors
    assert config.budget.shares["ttft"] == Config().budget.shares["ttft"]
    assert config.budget.shares["queue"] == 0.2


def _governance_keys() -> list[Key]:
    return list(numeric_keys(GovernanceSettings(), "governance."))


@pytest.mark.parametrize("key", _governance_keys(), ids=[k.dotted for k in _governance_keys()])
def test_governance_numeric_keys_have_a_lower_bound(key: Key) -> None:
    """governance.* is typed by governance/settings.py through the same loader; its limits
    are open-ended upwards (a quota may be any size) but never negative."""
    assert key.field.metadata.get("min") is not None, key.dotted
