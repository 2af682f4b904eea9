"""The rates follow what the model's own reads show (`RatesKeeper.observe_read`): a model
never measured stops using the prior, and a busy machine's slower reads shrink the
rewrite's batches and prompt; the prompt's size (`shape_of`) moves only out of a band, so a
wobbling rate does not change its shape between the warm-up and the rest."""

from __future__ import annotations

from pathlib import Path

from lsp_assist.config.schema import LocalConfig
from lsp_assist.providers.local_rates import SHAPE_BAND, RatesKeeper
from lsp_assist.providers.local_shared import LocalSettings
from lsp_assist.providers.local_worker import ModelWorker
from lsp_assist.providers.model_rates import ModelRates
from lsp_assist.providers.rewrite_prompt import rewrite_chars

CODER = "qwen2.5-coder-1.5b"
MEASURED = ModelRates(gen_tps=11.0, compute_tps=110.0, measured=True)


def _keeper(tmp_path: Path) -> RatesKeeper:
    settings = LocalSettings(LocalConfig(), tmp_path, "gemma3-270m")
    keeper = RatesKeeper(settings, ModelWorker(), lambda _engine: True)
    keeper.rates[CODER] = MEASURED
    return keeper


def _read(rates: ModelRates, compute_tps: float, tokens: int = 64, batch: int = 32) -> float:
    """Seconds a read takes on a machine whose arithmetic rate is `compute_tps`."""
    return ModelRates(rates.gen_tps, compute_tps).read_s(tokens, batch)


def test_reads_at_half_the_measured_rate_shrink_the_batches_and_the_prompt(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    before = keeper.of(CODER)
    for _ in range(6):
        keeper.observe_read(CODER, 64, _read(MEASURED, 55.0), 32)
    after, shape = keeper.of(CODER), keeper.shape_of(CODER)
    assert 50.0 < after.compute_tps < 70.0  # near what the reads showed
    assert after.gen_tps == MEASURED.gen_tps  # writes are not read from reads
    assert after.batch_for(0.7) < before.batch_for(0.7)  # a key throws less away
    assert after.read_s(64, 32) > before.read_s(64, 32)  # the rest's read costs what it does
    assert shape.compute_tps < MEASURED.compute_tps / SHAPE_BAND  # out of the band: moved
    assert rewrite_chars(shape.prompt_tps) < rewrite_chars(MEASURED.prompt_tps)


def test_a_wobbling_rate_moves_the_batches_but_not_the_prompts_size(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    for tps in (100.0, 80.0, 95.0, 130.0, 85.0):
        keeper.observe_read(CODER, 64, _read(MEASURED, tps), 32)
        assert keeper.shape_of(CODER) == MEASURED  # inside the band: the same shape
    assert keeper.of(CODER).compute_tps != MEASURED.compute_tps  # the batches follow
    # On a loaded machine the reads showed 16-33 tokens/s from one read to the next: once
    # moved, the shape holds through such a wobble.
    for _ in range(20):  # the smoothed rate settles near 24
        keeper.observe_read(CODER, 64, _read(MEASURED, 24.0), 32)
    moved = keeper.shape_of(CODER)
    for tps in (16.0, 33.0, 20.0, 31.0, 18.0, 33.0):
        keeper.observe_read(CODER, 64, _read(MEASURED, tps), 32)
        assert keeper.shape_of(CODER) == moved


def test_a_model_never_measured_leaves_the_prior(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    del keeper.rates[CODER]
    prior = keeper.of(CODER)
    keeper.observe_read(CODER, 48, _read(prior, prior.compute_tps / 2.5, tokens=48), 32)
    assert keeper.of(CODER).compute_tps < prior.compute_tps / 1.5
    assert keeper.shape_of(CODER).compute_tps < prior.compute_tps / 1.5


def test_short_reads_and_impossible_timings_teach_nothing(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    keeper.observe_read(CODER, 4, 5.0, 32)  # a few tokens: mostly the pass
    keeper.observe_read(CODER, 64, 0.0, 32)
    keeper.observe_read(CODER, 64, 0.01, 32)  # faster than the passes alone
    assert keeper.of(CODER) == MEASURED and keeper.shape_of(CODER) == MEASURED
