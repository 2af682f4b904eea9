"""`RefineModel`: the embedded provider's second, stronger engine (`local.refine_model`).

It shares the typing model's worker thread and is loaded after it, once the typing model
has idled a while (a key typed during its ~1.5 s load would wait for it), or at once when an
escalation the user waits for asks (`ready(urgent=True)`). Rewrites after a rest and the
quality tier's escalations run on it once it is there (`local_stream.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from lsp_assist.providers.local_loader import index_for_healing
from lsp_assist.providers.local_rates import MEASURE_IDLE_S, MEASURE_TRIES, RatesKeeper
from lsp_assist.providers.local_shared import LocalSettings
from lsp_assist.providers.local_worker import ModelWorker
from lsp_assist.providers.member_constraint import member_tries
from lsp_assist.providers.refine_model import load_refiner, refine_model_name


class RefineModel:
    """The refine model's engine, template and load (see module docstring);
    `main_loaded()` tells whether the typing model is still loaded."""

    def __init__(
        self,
        settings: LocalSettings,
        worker: ModelWorker,
        rates: RatesKeeper,
        main_loaded: Callable[[], bool],
    ) -> None:
        self._settings = settings
        self._worker = worker
        self._rates = rates
        self._main_loaded = main_loaded
        self.name = refine_model_name(settings.local, settings.model_name)
        self.engine: Any = None
        self.template = "none"
        self.line_enders: frozenset[int] = frozenset()  # its tokens a cut prompt may end at
        self.tries: Any = None  # member_constraint.TrieCache over its vocabulary, once read
        self._task: asyncio.Task[None] | None = None
        self._wanted = asyncio.Event()  # an escalation waits: load without idling first
        self.runs = 0  # refinements the refine model ran (tests, stats)

    @property
    def rest_s(self) -> float | None:
        """How long the user rests after an answer before the refine model rewrites it; None
        while there is no refine model."""
        return self._settings.local.refine_rest_ms / 1000.0 if self.engine is not None else None

    def start(self) -> None:
        """Begin the load in the background, after the typing model's (once)."""
        if self.name and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._load())
            self._task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def ready(self, urgent: bool = False) -> bool:
        """Wait for the refine model's load; True when it is in use. `urgent` (an escalation
        the user waits for) starts the load now instead of at the next idle spell."""
        if urgent:
            self._wanted.set()
        task = self._task
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
        return self.engine is not None

    async def stop_loading(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None

    def detach(self) -> Any:
        """The engine, no longer in use (to close on the worker thread)."""
        engine, self.engine = self.engine, None
        return engine

    async def _load(self) -> None:
        """Load the refine model (`refine_model.load_refiner`); a failure is logged once and
        completions go on without it."""
        await self._wait_for_idle()
        executor = self._worker.executor
        if executor is None:
            return
        local = self._settings.local
        loaded = await load_refiner(
            self.name, self._settings.cache_dir, local.n_ctx, self._settings.threads(), executor
        )
        if loaded is None:
            return
        if not self._main_loaded() or self._worker.executor is None:  # closed meanwhile
            loaded[0].close()
            return
        self.engine, self.template, path = loaded
        if self._settings.local.token_healing:
            index_for_healing(self.engine)
        if self._settings.local.constrain_members:
            # After `x.` the rewrite and an escalation name a member `x` has too: the demo's
            # rewrite wrote `self.center.distance(point)` where Point has `distance_to`.
            self.tries = await asyncio.to_thread(member_tries, self.engine.vocab_pieces)
        self.line_enders = frozenset(int(t) for t in self.engine.line_enders)
        self._rates.note_loaded(self.name, path, self.engine)

    async def _wait_for_idle(self) -> None:
        """Until the typing model has idled MEASURE_IDLE_S, or an escalation wants the model."""
        for _ in range(MEASURE_TRIES):
            if self._wanted.is_set():
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wanted.wait(), MEASURE_IDLE_S / 4)
            if self._worker.idle_for(MEASURE_IDLE_S):
                break
