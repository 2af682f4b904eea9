"""The cost model of a local model's reads and writes, and the per-machine rates file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_assist.providers.model_rates import (
    MAX_BATCH,
    MIN_BATCH,
    RATES_FILE,
    ModelRates,
    RatesCache,
    model_id,
    prior_rates,
    rates_key,
)

CODER = ModelRates(14.0, 108.0, measured=True)  # two cores, measured


def test_small_batches_pay_a_pass_over_the_weights_each() -> None:
    # 48 tokens in batches of 4: 12 passes; in one batch: one pass. Same arithmetic.
    assert abs(CODER.read_s(48, 4) - CODER.read_s(48, 48) - 11 / 14.0) < 1e-9
    assert CODER.write_s(10) == pytest.approx(10 / 14.0) and CODER.read_s(0) == 0.0


def test_batch_for_fits_the_budget_within_bounds() -> None:
    b = CODER.batch_for(0.2)
    assert MIN_BATCH <= b <= MAX_BATCH
    assert CODER.read_s(b, b) <= 0.2 + 1e-9 or b == MIN_BATCH
    assert CODER.read_s(b + 1, b + 1) > 0.2 or b == MAX_BATCH
    assert ModelRates(1e6, 1e9).batch_for(0.2) == MAX_BATCH
    assert ModelRates(1.0, 1.0).batch_for(0.2) == MIN_BATCH


def test_prior_orders_models_by_size() -> None:
    small, big = prior_rates(253_113_024, 2), prior_rates(1_117_320_768, 2)
    assert small.gen_tps > big.gen_tps and small.compute_tps > big.compute_tps
    assert not small.measured
    # Within ~25% of the measured coder on two cores.
    assert 0.75 < big.gen_tps / CODER.gen_tps < 1.25


def test_rates_file_round_trip_keeps_the_faster_figures(tmp_path: Path) -> None:
    cache = RatesCache(tmp_path)
    key = rates_key(model_id("qwen-coder"), 2)
    assert "qwen2.5-coder-1.5b:2:" in key and cache.get(key) is None
    cache.put(key, ModelRates(10.0, 120.0, measured=True))
    cache.put(key, ModelRates(14.0, 100.0, measured=True))  # a busier moment for the reads
    got = cache.get(key)
    assert got == ModelRates(14.0, 120.0, measured=True)
    assert RatesCache(tmp_path).get(key) == got  # another process reads the same file


def test_a_broken_rates_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / RATES_FILE).write_text("{not json", encoding="utf-8")
    cache = RatesCache(tmp_path)
    assert cache.get("x") is None
    (tmp_path / RATES_FILE).write_text(json.dumps({"x": {"gen_tps": -1, "compute_tps": "nan"}}))
    assert cache.get("x") is None
    cache.put("y", ModelRates(5.0, 50.0, measured=True))  # rewritten whole, readable again
    assert cache.get("y") is not None


def test_gguf_files_are_told_apart_by_size() -> None:
    assert model_id("~/m/model.gguf", 10) != model_id("/other/model.gguf", 11)
    assert model_id("~/m/model.gguf", 10) == model_id("/other/model.gguf", 10)


def test_writes_at_rest_use_every_core_and_are_kept(tmp_path: Path) -> None:
    rates = ModelRates(5.4, 140.0, measured=True, rest_gen_tps=10.5)
    assert rates.write_s(10, rest=True) == pytest.approx(10 / 10.5)
    assert rates.write_s(10) == pytest.approx(10 / 5.4)
    assert ModelRates(5.4, 140.0).write_s(10, rest=True) == pytest.approx(10 / 5.4)  # unknown: as typing
    cache = RatesCache(tmp_path)
    cache.put("k", rates)
    assert cache.get("k") == rates
