"""The model benchmark's pieces that need no model: its corpora, conditions and scoring."""

from __future__ import annotations

import pytest

from benchmarks.context_model import SHAPES, Tally, runtime_config
from benchmarks.context_recall import corpus_loaders, load_go, load_stdlib
from lsp_assist.config.loader import config_from_dict


def test_corpus_specs_map_to_their_loaders_in_order() -> None:
    got = corpus_loaders(["go", "stdlib", "npm:express@4.21.2"])
    assert list(got) == ["go", "stdlib", "npm:express@4.21.2"]
    assert got["go"] is load_go and got["stdlib"] is load_stdlib
    with pytest.raises(SystemExit, match="unknown corpus"):
        corpus_loaders(["npm"])  # a kind without its argument


def test_a_suggestion_scores_exact_match_and_the_names_it_writes() -> None:
    t = Tally()
    t.add("  x = tasks.current_task(loop)", "x = tasks.current_task(loop)  ", {"current_task", "tasks"}, 5.0)
    t.add("x = futures.wrap(loop)", "x = tasks.current_task(loop)", {"current_task", "tasks"}, 7.0)
    t.add("", "x = tasks.current_task(loop)", {"current_task"}, 1.0)
    assert t.exact == 1
    assert t.written == [1.0, 0.0, 0.0]
    assert t.empty == 1


def test_each_shape_is_a_valid_config_of_the_embedded_model_at_its_prompt_size() -> None:
    for shape, (layout, chars) in SHAPES.items():
        config, errors = config_from_dict(runtime_config("gemma3-270m", layout, chars))
        assert errors == [], shape  # no unknown key or bad value silently dropped
        fast = config.tier("fast")
        assert (fast.provider, fast.context_chars, fast.prompt_layout) == ("local", chars, layout)
        assert config.local.model == "gemma3-270m" and not config.cache.enabled
