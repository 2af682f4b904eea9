"""`ModelLoader`: loads the embedded typing model, and indexes its vocabulary.

Loading starts at `initialize` (`start_loading`, from `Runtime.warm`), never on a
keystroke: while it runs `available_now()` is False and the pipeline answers from the
offline engine at once instead of waiting; `lsp-assist complete`/`demo` await `ready()`.
The load reports `LoadEvent`s (stage, percent) for `$/progress` and the CLI's stderr.
The engine is built on the worker thread, the only one that touches it afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_assist.context.templates import is_fim_model, resolve_template
from lsp_assist.errors import Unavailable
from lsp_assist.providers.base import LoadEvent
from lsp_assist.providers.local_rates import RatesKeeper
from lsp_assist.providers.local_shared import CutPrompts, LocalSettings
from lsp_assist.providers.local_worker import ModelWorker
from lsp_assist.providers.models import INSTALL_HINT, resolve_model
from lsp_assist.providers.token_healing import HealIndex

log = logging.getLogger("lsp_assist.providers.local")

RETRY_LOAD_AFTER_S = 30.0
VOCAB_SLICE = 8192  # tokens whose text one worker-thread step reads (member constraint)


def index_for_healing(engine: Any) -> asyncio.Task[Any]:
    """Build `engine`'s token-healing index (`token_healing.HealIndex`) in a thread after its
    load: ~0.3 s of Python in slices that leave the event loop its turns; it never calls
    llama.cpp. Until then the engine answers without healing."""

    def build() -> None:
        engine.heal_index = HealIndex(engine.vocab_pieces)

    task = asyncio.get_running_loop().create_task(asyncio.to_thread(build))
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    _INDEXING.add(task)
    task.add_done_callback(_INDEXING.discard)
    return task


# The index builds running (a task nobody awaits is kept here, not collected midway).
_INDEXING: set[asyncio.Task[Any]] = set()


class ModelLoader:
    """The typing model's engine, file and template once loaded (see module docstring).
    `on_loaded` runs after a successful load (the refine model's turn)."""

    def __init__(
        self,
        settings: LocalSettings,
        worker: ModelWorker,
        rates: RatesKeeper,
        cuts: CutPrompts,
        on_loaded: Callable[[], None],
    ) -> None:
        self._settings = settings
        self._worker = worker
        self._rates = rates
        self._cuts = cuts
        self._on_loaded = on_loaded
        self.engine: Any = None
        self.template = "none"
        self.path: Path | None = None
        self._load: asyncio.Task[Any] | None = None
        self._failed_at = 0.0
        self._error: BaseException | None = None
        self.on_progress: Callable[[LoadEvent], None] | None = None
        self.load_s: float = 0.0
        self.tries: Any = None  # member_constraint.TrieCache once the vocabulary is read
        self._vocab_task: asyncio.Task[None] | None = None
        self._heal_task: asyncio.Task[Any] | None = None

    @property
    def path_name(self) -> str:
        return self.path.name if self.path is not None else self._settings.model_name

    def available_now(self) -> bool:
        """True when a stream would start generating at once. Starts (or, after a failure
        and a pause, retries) the load when it is not running; never waits."""
        if self.engine is not None:
            return True
        pause_over = time.monotonic() - self._failed_at > RETRY_LOAD_AFTER_S
        if self._load is None or (self._load.done() and pause_over):
            self.start_loading()
        return False

    def start_loading(self) -> asyncio.Task[Any]:
        """Begin loading in the background (idempotent while a load runs)."""
        if self._load is None or (self._load.done() and self.engine is None):
            self._load = asyncio.get_running_loop().create_task(self._do_load())
            self._load.add_done_callback(lambda t: t.cancelled() or t.exception())
        return self._load

    async def ready(self) -> None:
        """Wait until the model is loaded; raises Unavailable if it cannot be."""
        if self.engine is not None:
            return
        task = self._load if self._load is not None and not self._load.done() else self.start_loading()
        await asyncio.shield(task)
        if self.engine is None:
            raise Unavailable(str(self._error or "the local model did not load"))

    async def members_ready(self) -> bool:
        """Wait until the member constraint can apply (the vocabulary indexed after the
        load, ~2 s); False when it is switched off or the model is not loaded."""
        task = self._vocab_task
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
        return self.tries is not None

    async def settled(self) -> None:
        """Wait until what the answers use after the load is built: the healing index and
        the member names' vocabulary (a second or two after the load)."""
        await self.members_ready()
        task = self._heal_task
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)

    async def wait_load(self) -> None:
        """Let a load still running finish (before closing)."""
        if self._load is not None and not self._load.done():
            with contextlib.suppress(BaseException):
                await self._load

    async def stop_vocabulary(self) -> None:
        if self._vocab_task is not None:
            self._vocab_task.cancel()
            with contextlib.suppress(BaseException):
                await self._vocab_task

    def detach(self) -> Any:
        """The engine, no longer in use (to close on the worker thread); a later
        `start_loading` loads it again."""
        self.tries = None
        engine, self.engine = self.engine, None
        return engine

    def forget_load(self) -> None:
        self._load = None

    def _report(self, event: LoadEvent) -> None:
        listener = self.on_progress
        if listener is not None:
            try:
                listener(event)
            except Exception as exc:  # a progress listener never breaks the load
                log.debug("progress listener failed: %s", exc)

    async def _read_vocabulary(self, engine: Any) -> None:
        """Index the model's vocabulary for the member constraint, in slices on the worker
        thread between requests (a request waits for one slice at most, ~50 ms)."""
        from lsp_assist.providers.member_constraint import TrieCache, Vocabulary

        loop = asyncio.get_running_loop()
        pieces: list[bytes] = []
        for start in range(0, engine.n_vocab, VOCAB_SLICE):
            executor = self._worker.executor
            if self.engine is not engine or executor is None:
                return
            pieces += await loop.run_in_executor(executor, engine.pieces, start, start + VOCAB_SLICE)
        vocab = await asyncio.to_thread(Vocabulary, pieces)  # control tokens have empty text
        if self.engine is engine:
            self.tries = TrieCache(vocab)

    async def _do_load(self) -> None:
        t0 = time.perf_counter()
        self._report(LoadEvent("loading the local model", 0))
        try:
            await self._load_engine()
            self._error = None
            if self._settings.local.constrain_members:
                self._vocab_task = asyncio.get_running_loop().create_task(self._read_vocabulary(self.engine))
                self._vocab_task.add_done_callback(lambda t: t.cancelled() or t.exception())
            if self._settings.local.token_healing:
                self._heal_task = index_for_healing(self.engine)
            self.load_s = time.perf_counter() - t0
            assert self.path is not None
            gen, batch = self._settings.threads()
            log.info(
                "local model %s loaded in %.1f s (%d generation / %d prompt threads)",
                self.path.name,
                self.load_s,
                gen,
                batch,
            )
            self._report(LoadEvent(f"local model ready ({self.load_s:.1f} s)", 100, done=True))
            self._on_loaded()
        except Exception as exc:
            if not isinstance(exc, Unavailable):
                exc = Unavailable(f"the local model did not load: {exc}")
            self._error = exc
            self._failed_at = time.monotonic()
            log.warning("%s", self._error)
            self._report(LoadEvent("the local model did not load", None, done=True, error=str(self._error)))

    async def _load_engine(self) -> None:
        """Find the model file and build its engine on the worker thread."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise Unavailable(f"the local model needs llama_cpp: {INSTALL_HINT}")
        self._report(LoadEvent("verifying the model file", 10))
        path = await asyncio.to_thread(resolve_model, self._settings.model_name, self._settings.cache_dir)
        self.path = path
        self.template = "none"
        if is_fim_model(path.name):
            self.template = resolve_template("auto", path.name, "none")
        self._report(LoadEvent("reading the model weights", 40))
        executor = self._worker.start()
        gen, batch = self._settings.threads()
        n_ctx = self._settings.local.n_ctx
        from lsp_assist.providers.llama_engine import LlamaEngine

        engine = await asyncio.get_running_loop().run_in_executor(
            executor, lambda: LlamaEngine(path, n_ctx=n_ctx, threads=gen, batch_threads=batch)
        )
        self._cuts.line_enders = frozenset(int(t) for t in engine.line_enders)
        self.engine = engine
        self._rates.note_loaded(self._settings.model_name, path, engine)
