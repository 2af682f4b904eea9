"""`StreamRegistry`: the streams still running, by what finds them."""

from __future__ import annotations

from lsp_assist.domain import PromptContext
from lsp_assist.pipeline.inflight import Anchor, InflightStream
from lsp_assist.pipeline.stream_registry import StreamRegistry, is_guess, slot_of

URI = "file:///a.py"


def _flight(provider: object, *, speculative: bool = False) -> InflightStream:
    flight = InflightStream(
        anchor=Anchor(URI, 1, 0, "", ""),
        tier="fast",
        context=PromptContext(language="python", path="/a.py", prefix="x", suffix=""),
    )
    flight.provider = provider
    flight.speculative = speculative
    return flight


async def test_a_new_live_stream_aborts_the_one_it_replaces() -> None:
    registry = StreamRegistry()
    provider = object()
    old, new = _flight(provider), _flight(provider)
    registry.add(old, "k1", URI)
    registry.add(new, "k2", URI)
    assert old.aborted and registry.aborted == 1
    assert registry.live[URI] is new
    assert set(registry.on_slot(provider)) == {old, new}  # neither has ended yet


async def test_a_speculative_stream_is_found_by_its_key_until_dropped() -> None:
    registry = StreamRegistry()
    guess = _flight(object(), speculative=True)
    registry.add(guess, "key", None)
    assert registry.speculative["key"] is guess and is_guess(guess)
    assert URI not in registry.live  # not attachable
    registry.ended(guess, URI)
    assert guess not in registry.active and registry.speculative["key"] is guess
    registry.drop_speculative("key", guess)
    assert "key" not in registry.speculative


def test_a_view_queues_on_its_owners_slot() -> None:
    class Owner:
        pass

    class View:
        def __init__(self, slot: object) -> None:
            self.slot = slot

    owner = Owner()
    assert slot_of(View(owner)) is owner
    assert slot_of(owner) is owner
