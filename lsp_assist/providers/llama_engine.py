"""One llama.cpp context in this process, driven from one worker thread.

Why this exists (figures in docs/design.md, "The embedded model", and ``benchmarks/local_latency.py``):
on a laptop CPU the embedded model reads a prompt at ~300 tokens/s, so a prompt read
from scratch costs over a second, while a prompt whose start is already in the KV cache
costs only its new tokens. `LlamaEngine` keeps the tokens of the last evaluation and, for
each new prompt, keeps the longest common token prefix in the KV cache and evaluates only
the rest ("prompt tokens evaluated" in `GenerationStats`). The tokens it generated stay in
the cache too, so a user who types what was suggested costs almost nothing.

Everything here is synchronous and must run on the engine's single worker thread (the
llama.cpp context is not thread-safe). ctypes releases the GIL during each llama.cpp call,
so the asyncio loop keeps running while a batch is decoded. `Job.cancel` is checked
between prompt batches and between generated tokens: a superseded request stops within
one token (~20 ms). A background read (`prefill(abortable=True)`) is also stopped midway
through a batch, through llama.cpp's abort callback (`llama_abort.py`: read in C, not under
the GIL); the batches before it stay read.

Decoding is greedy below `GREEDY_BELOW` (deterministic answers keep the suggestion cache,
prefetch and typing-through consistent); above it, top-k sampling with temperature.
Prompt-lookup speculation (`draft_tokens`) drafts the tokens that followed the last n-gram
earlier in the context and verifies them in one batch; off by default (docs/benchmarks.md).
A job's `hint` (the answer on screen, which a rewrite replaces) is drafted the same way while
the model keeps to it: where the stronger model agrees with the line shown, it writes that
line in one pass instead of a pass per token; greedy decoding makes the text the same.
"""

from __future__ import annotations

import codecs
import contextlib
import ctypes
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from lsp_assist.providers.llama_abort import AbortWatch, CancelFlag
from lsp_assist.providers.llama_logs import llama_class
from lsp_assist.providers.token_healing import HealIndex

GREEDY_BELOW = 0.2
PROMPT_BATCH = 128  # tokens per decode call while reading a prompt: the cancel check's granularity
NGRAM_MIN = 2
NGRAM_MAX = 4
LOOKUP_WINDOW = 1024  # tokens searched back for the n-gram
# Hint tokens verified per pass: a pass of the code model costs ~0.1 s plus ~7 ms a token on
# two cores (4 tokens 0.19 s, 16 0.30 s: `local_prefill.py`), one generated token ~0.09 s.
HINT_BATCH = 16
#: Of the hint, read with the prompt's last token: the given-back tokens of a healed prompt
#: (at most 3) and one more. A rewrite whose first token leaves the line on screen then
#: read 4 tokens for nothing (~30 ms for the code model), not 16.
READ_DRAFT = 4
# Model loads one at a time: a load without weight repacking swaps llama-cpp-python's
# default model parameters for its duration (`_model_params_without_repack`).
_LOAD_LOCK = threading.Lock()


@dataclass
class GenerationStats:
    """What one generation cost; logged per request (numbers only, never text)."""

    prompt_tokens: int = 0
    reused_tokens: int = 0  # kept from the KV cache
    evaluated_tokens: int = 0  # read by the model for this request
    generated_tokens: int = 0
    prompt_ms: float = 0.0  # time to first token
    generation_ms: float = 0.0
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    cancelled: bool = False
    stop_reason: str = ""  # "eog" | "length" | "stop" | "cancel" | "consumer"


class TokenConstraint(Protocol):
    """Narrows each token choice (`providers/member_constraint.py`): `restrict` returns the
    logits to choose from (a masked copy, or the same array), `accept` sees each emitted token."""

    def restrict(self, logits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]: ...

    def accept(self, token: int) -> None: ...


@dataclass
class Job:
    """One generation request. `emit` gets each decoded text piece; returning False stops."""

    tokens: list[int]
    max_tokens: int
    temperature: float
    emit: Callable[[str], bool]
    stop: tuple[str, ...] = ()
    draft_tokens: int = 0
    # The line obviously goes on (it ends with an operator, an open bracket, `return `...):
    # the first token may not end it (a newline or end-of-text), the model's usual way of
    # saying nothing, which would show no suggestion where there is an obvious one.
    line_goes_on: bool = False
    constraint: TokenConstraint | None = None  # None: free decoding, exactly as before
    # Tokens per decode call while reading the prompt: a background job reads in small
    # batches so that a request arriving meanwhile waits ~50 ms for it, not ~400.
    prompt_batch: int = PROMPT_BATCH
    # Background work (a rewrite at rest): `cancel` also stops a prompt batch midway.
    abortable: bool = False
    # Tokens the answer is expected to start with (`hint`, module docstring); greedy only.
    hint: list[int] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=CancelFlag)  # llama.cpp reads it in C
    # A background read of the rewrite model stops after its batch once this is set (a
    # rewrite on that model takes the thread next and reads on from there, `prefill`).
    settle: threading.Event = field(default_factory=threading.Event)
    # The rewrite model's warm-up: a rewrite may wait for its batch instead of aborting it
    # (`ModelWorker.stop_background`), and the tokens it had left to read when it began.
    keeps_batch: bool = False
    todo: int = 0
    stats: GenerationStats = field(default_factory=GenerationStats)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def lookup_draft(history: Sequence[int], k: int) -> list[int]:
    """Prompt lookup: the tokens that followed the latest earlier occurrence of the last
    n-gram of `history` (longest n first), at most `k` of them."""
    if k <= 0 or len(history) < NGRAM_MIN + 1:
        return []
    lo = max(0, len(history) - LOOKUP_WINDOW)
    for n in range(NGRAM_MAX, NGRAM_MIN - 1, -1):
        if len(history) <= n:
            continue
        tail = list(history[-n:])
        # Search backwards, excluding the tail itself.
        for start in range(len(history) - n - 1, lo - 1, -1):
            if history[start] == tail[0] and list(history[start : start + n]) == tail:
                follow = list(history[start + n : start + n + k])
                if follow:
                    return follow
    return []


class StopMatcher:
    """Cuts streamed text at the first stop string, holding back a possible partial match."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.pending = ""

    def feed(self, piece: str) -> tuple[str, bool]:
        """(text safe to emit now, True when a stop string was reached)."""
        if not self.stops:
            return piece, False
        text = self.pending + piece
        cut = min((i for i in (text.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.pending = ""
            return text[:cut], True
        hold = 0
        for s in self.stops:
            for n in range(min(len(s) - 1, len(text)), 0, -1):
                if text.endswith(s[:n]):
                    hold = max(hold, n)
                    break
        self.pending = text[len(text) - hold :] if hold else ""
        return text[: len(text) - hold], False

    def flush(self) -> str:
        out, self.pending = self.pending, ""
        return out


class LlamaEngine:
    """The loaded model and its KV cache. Construct and call only on the worker thread."""

    def __init__(
        self,
        path: Path,
        *,
        n_ctx: int,
        threads: int,
        batch_threads: int,
        seed: int = 0,
        repack: bool = True,
    ) -> None:
        """`repack=False`: keep the weights in the mapped file instead of copying them into
        llama.cpp's repacked CPU layout (`use_extra_bufts`). For qwen2.5-coder-1.5b that is
        ~600 MB of private memory less per process, for ~30% slower small batches
        (docs/embedded-latency.md); the refine model loads so."""
        Llama = llama_class()  # llama.cpp's log lines to Python logging (`llama_logs.py`)

        with _LOAD_LOCK, _model_params_without_repack(not repack or amx_faults()):
            self.llm: Any = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_batch=512,
                n_threads=threads,
                n_threads_batch=batch_threads,
                seed=seed,
                verbose=False,
            )
        import llama_cpp

        self._lib: Any = llama_cpp
        self._ctx = self.llm._ctx.ctx
        self._vocab = self.llm._model.vocab
        self._n_vocab = int(self.llm.n_vocab())
        self.n_ctx = int(self.llm.n_ctx())
        self._batch = self._lib.llama_batch_init(512, 0, 1)
        self._tokens: list[int] = []  # what is in the KV cache, position by position
        self._abort = AbortWatch(self._lib, self._ctx)  # `prefill(abortable=True)`
        self._rng = np.random.default_rng(seed)
        self.threads = threads
        self.batch_threads = batch_threads
        self._marker_patterns: dict[tuple[str, ...], re.Pattern[str]] = {}
        self._marker_ids: dict[str, int | None] = {}
        self.vocab_pieces = [self._piece(i) for i in range(self._n_vocab)]  # each token's text
        self.line_enders = _line_enders(self.vocab_pieces, self._is_eog)
        self.heal_index: HealIndex | None = None  # built after the load: `local_loader.index_for_healing`

    # -- small helpers ---------------------------------------------------------------------

    def tokenize(self, text: str, markers: tuple[str, ...] = ()) -> list[int]:
        """The prompt's tokens. `markers`: the FIM template's control strings
        (`templates.MARKERS`), each read as its one special token where the model has it; the
        text between them is read as text, so code never turns into control tokens, except
        a literal marker string, which is read as the marker."""
        if not markers:
            return list(self.llm.tokenize(text.encode("utf-8", "surrogatepass"), add_bos=True, special=False))
        pattern = self._marker_patterns.get(markers)
        if pattern is None:
            pattern = re.compile("(" + "|".join(re.escape(m) for m in markers) + ")")
            self._marker_patterns[markers] = pattern
        out = list(self.llm.tokenize(b"", add_bos=True, special=False))
        for piece in pattern.split(text):
            if not piece:
                continue
            marker = self._marker_id(piece) if piece in markers else None
            if marker is not None:
                out.append(marker)
            else:
                out.extend(
                    self.llm.tokenize(piece.encode("utf-8", "surrogatepass"), add_bos=False, special=False)
                )
        return out

    def continuation(self, text: str) -> list[int]:
        """The tokens of `text` written after a prompt: no BOS, no control tokens."""
        return list(self.llm.tokenize(text.encode("utf-8", "surrogatepass"), add_bos=False, special=False))

    def _marker_id(self, marker: str) -> int | None:
        """The special token `marker` names, or None when the vocabulary has no such token."""
        if marker not in self._marker_ids:
            ids = list(self.llm.tokenize(marker.encode("utf-8"), add_bos=False, special=True))
            self._marker_ids[marker] = ids[0] if len(ids) == 1 else None
        return self._marker_ids[marker]

    def set_threads(self, threads: int, batch_threads: int) -> None:
        self._lib.llama_set_n_threads(self._ctx, threads, batch_threads)
        self.threads, self.batch_threads = threads, batch_threads

    @property
    def n_vocab(self) -> int:
        return self._n_vocab

    def pieces(self, start: int, stop: int) -> list[bytes]:
        """The text of tokens `start` to `stop`, in id order (the member constraint's vocabulary)."""
        return self.vocab_pieces[start:stop]

    def is_eog(self, token: int) -> bool:
        return self._is_eog(token)

    def _is_eog(self, token: int) -> bool:
        return bool(self._lib.llama_vocab_is_eog(self._vocab, token))

    def _piece(self, token: int) -> bytes:
        buf = ctypes.create_string_buffer(64)
        n = self._lib.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = self._lib.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, False)
        return bytes(buf.raw[:n])

    def _logits(self, i: int) -> np.ndarray[Any, Any]:
        ptr = self._lib.llama_get_logits_ith(self._ctx, i)
        return np.ctypeslib.as_array(ptr, shape=(self._n_vocab,))

    def _choose(
        self,
        i: int,
        temperature: float,
        *,
        exclude: np.ndarray[Any, Any] | None = None,
        constraint: TokenConstraint | None = None,
    ) -> int:
        return _pick(self._logits(i), temperature, self._rng, exclude, constraint)

    def _decode(self, tokens: Sequence[int], logits_from: int) -> bool:
        """Decode `tokens` at the end of the cache; logits for positions >= `logits_from`.
        False when a background read's cancel stopped it midway (`prefill`): none of
        `tokens` is then in the cache."""
        b = self._batch
        n_past = len(self._tokens)
        b.n_tokens = len(tokens)
        for i, tok in enumerate(tokens):
            b.token[i] = tok
            b.pos[i] = n_past + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = i >= logits_from
        rc = self._lib.llama_decode(self._ctx, b)
        if rc == 2 and self._abort.aborting():
            # Aborted: drop whatever of this batch reached the cache; what was read before
            # it stays, and `_tokens` says so.
            mem = self._lib.llama_get_memory(self._ctx)
            self._lib.llama_memory_seq_rm(mem, 0, n_past, -1)
            return False
        if rc != 0:
            self.reset()
            raise RuntimeError(f"llama_decode returned {rc}")
        self._tokens.extend(tokens)
        return True

    def decode_timed(self, tokens: Sequence[int]) -> None:
        """Decode `tokens` after the cache, logits for the last one only: one decode call, as
        a request's prompt batch or a generated token costs (`model_rates.measure`)."""
        self._decode(tokens, logits_from=len(tokens) - 1)

    def _truncate(self, keep: int) -> None:
        """Drop cache positions >= keep."""
        if keep < len(self._tokens):
            mem = self._lib.llama_get_memory(self._ctx)
            self._lib.llama_memory_seq_rm(mem, 0, keep, -1)
            del self._tokens[keep:]

    def reset(self) -> None:
        mem = self._lib.llama_get_memory(self._ctx)
        self._lib.llama_memory_clear(mem, True)
        self._tokens = []

    @property
    def cached_tokens(self) -> list[int]:
        return list(self._tokens)

    # -- the job -------------------------------------------------------------------------------

    def prefill(
        self,
        tokens: list[int],
        cancel: threading.Event,
        batch: int = PROMPT_BATCH,
        *,
        abortable: bool = False,
        settle: threading.Event | None = None,
    ) -> int:
        """Bring the cache to `tokens` minus its last token, reusing the common prefix.
        Returns how many tokens were evaluated (a background prefill calls this alone).
        `cancel` stops the read between two batches; what was read stays in the cache, so
        a later read of the same prompt reads only the rest. `abortable` (a background
        read): `cancel` also stops a batch midway (read again later); `settle` never does."""
        # The last prompt token is always decoded by `run`: its logits give the first token.
        keep = min(common_prefix(self._tokens, tokens), len(tokens) - 1)
        self._truncate(keep)
        done = 0
        rest = tokens[keep:-1]
        with self._abort.watching(cancel if abortable and rest else None):
            for i in range(0, len(rest), batch):
                chunk = rest[i : i + batch]
                stop = cancel.is_set() or (settle is not None and settle.is_set())
                if stop or not self._decode(chunk, logits_from=len(chunk)):
                    break
                done += len(chunk)
        return done

    def run(self, job: Job) -> GenerationStats:
        st = job.stats
        if job.cancel.is_set():  # superseded while it waited for the thread: leave the cache
            st.cancelled, st.stop_reason = True, "cancel"
            return st
        t0 = time.perf_counter()
        read = self._read_prompt(job)
        if read is None:
            return st
        st.prompt_ms = (time.perf_counter() - t0) * 1000.0
        t1 = time.perf_counter()
        self._generate(job, *read)
        st.generation_ms = (time.perf_counter() - t1) * 1000.0
        return st

    def _read_prompt(self, job: Job) -> tuple[int, list[int]] | None:
        """Read the job's prompt (what the cache lacks of it) and choose the first token, the
        start of the job's hint drafted after it in the same decode (returned beside it, for
        `_keep_drafted`); None when the job was cancelled meanwhile."""
        st = job.stats
        tokens = job.tokens
        room = self.n_ctx - job.max_tokens - 4
        if len(tokens) > room:  # keep the BOS and the end nearest the cursor
            tokens = tokens[:1] + tokens[len(tokens) - room + 1 :]
        st.prompt_tokens = len(tokens)
        st.reused_tokens = min(common_prefix(self._tokens, tokens), len(tokens) - 1)
        evaluated = self.prefill(tokens, job.cancel, batch=job.prompt_batch, abortable=job.abortable)
        if job.cancel.is_set():
            st.evaluated_tokens = evaluated
            st.cancelled, st.stop_reason = True, "cancel"
            return None
        # The hint read with the prompt's last token: a healed prompt's given-back token
        # (`token_healing`), which the model mostly writes again, then costs no decode call
        # of its own (a generated token's: ~20-40 ms for Gemma on one core).
        greedy = job.temperature < GREEDY_BELOW
        drafted = job.hint[: min(READ_DRAFT, job.max_tokens - 1)] if greedy else []
        self._decode([tokens[-1], *drafted], logits_from=0)
        # The drafted ones count as read: `prompt_ms` holds their time (the read rate).
        st.evaluated_tokens = evaluated + 1 + len(drafted)
        st.drafted_tokens += len(drafted)
        enders = self.line_enders if job.line_goes_on else None
        return self._choose(0, job.temperature, exclude=enders, constraint=job.constraint), drafted

    def _generate(self, job: Job, first: int, drafted: list[int]) -> None:
        """Generate from the chosen first token `first` until `give` says to stop, `drafted`
        (decoded after the prompt) kept while the model agrees; then decoding drafted tokens
        (the job's `hint` while the model keeps to it, else `lookup_draft`) in one batch
        when speculating."""
        st = job.stats
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        stopper = StopMatcher(job.stop)
        give = _giver(job, self._is_eog, self._piece, decoder, stopper)
        speculate = job.draft_tokens > 0 and job.temperature < GREEDY_BELOW
        pending, alive = self._keep_drafted(job, give, first, drafted)
        # The hint's tokens not yet written, while what was written is its start.
        follow = _still_ahead(job.hint, len(drafted), st.accepted_tokens, pending) if drafted else []
        while alive and give(pending):
            ahead = follow[:HINT_BATCH]
            draft = ahead or (lookup_draft([*self._tokens, pending], job.draft_tokens) if speculate else [])
            draft = draft[: max(0, job.max_tokens - st.generated_tokens - 1)]
            self._decode([pending, *draft], logits_from=0)
            st.drafted_tokens += len(draft)
            chosen = self._choose(0, job.temperature, constraint=job.constraint)
            kept = st.accepted_tokens
            pending, alive = self._keep_drafted(job, give, chosen, draft)
            follow = _still_ahead(follow, len(draft), st.accepted_tokens - kept, pending)
        tail = stopper.flush() + decoder.decode(b"", final=True)
        if tail and st.stop_reason not in ("stop", "consumer", "cancel"):
            job.emit(tail)

    def _keep_drafted(
        self, job: Job, give: Callable[[int], bool], chosen: int, draft: list[int]
    ) -> tuple[int, bool]:
        """`draft` was decoded after the last token in the cache but itself: give its tokens
        while each is what the model chose at the one before (`chosen` at the first), drop
        the rest from the cache. The next token to decode, and whether generation goes on."""
        accepted = 0
        alive = True
        for j, d in enumerate(draft):
            if chosen != d:
                break
            accepted += 1
            if not give(d):
                alive = False
                break
            chosen = self._choose(j + 1, job.temperature, constraint=job.constraint)
        job.stats.accepted_tokens += accepted
        # Rejected drafts leave the cache; accepted ones stay.
        self._truncate(len(self._tokens) - len(draft) + accepted)
        return chosen, alive

    def close(self) -> None:
        batch, self._batch = self._batch, None
        if batch is not None:
            self._lib.llama_batch_free(batch)
        llm, self.llm = self.llm, None
        if llm is not None:
            llm.close()


def _pick(
    logits: np.ndarray[Any, Any],
    temperature: float,
    rng: np.random.Generator,
    exclude: np.ndarray[Any, Any] | None,
    constraint: TokenConstraint | None,
) -> int:
    """The next token from a position's `logits`: greedy below GREEDY_BELOW, else sampled
    from the 40 likeliest; `constraint` and `exclude` first take tokens out."""
    if constraint is not None:
        logits = constraint.restrict(logits)
    if exclude is not None and len(exclude):
        logits = logits.copy()
        logits[exclude] = -np.inf
    if temperature < GREEDY_BELOW:
        return int(np.argmax(logits))
    top = np.argpartition(logits, -40)[-40:]
    z = logits[top].astype(np.float64) / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    return int(top[rng.choice(len(top), p=p)])


def _line_enders(pieces: Sequence[bytes], is_eog: Callable[[int], bool]) -> np.ndarray[Any, Any]:
    """The tokens that end a line or the text (32 of Gemma 3's 262k contain a newline)."""
    return np.array([i for i, piece in enumerate(pieces) if b"\n" in piece or is_eog(i)], dtype=np.int64)


def _still_ahead(follow: list[int], drafted: int, accepted: int, chosen: int) -> list[int]:
    """The hint's tokens still ahead (`Job.hint`) once `accepted` of the `drafted` ones were
    kept and `chosen` came next: none once the model left the hint."""
    rest = follow[accepted:] if follow and accepted == drafted else []
    return rest[1:] if rest and rest[0] == chosen else []


def _giver(
    job: Job,
    is_eog: Callable[[int], bool],
    piece: Callable[[int], bytes],
    decoder: codecs.IncrementalDecoder,
    stopper: StopMatcher,
) -> Callable[[int], bool]:
    """`give(token)`: emit one generated token of `job`; False when generation must end."""
    st = job.stats

    def give(token: int) -> bool:
        if is_eog(token):
            st.stop_reason = "eog"
            return False
        st.generated_tokens += 1
        if job.constraint is not None:
            job.constraint.accept(token)
        text, stopped = stopper.feed(decoder.decode(piece(token)))
        if text and not job.emit(text):
            st.cancelled = job.cancel.is_set()
            st.stop_reason = "cancel" if st.cancelled else "consumer"
            return False
        if stopped:
            st.stop_reason = "stop"
            return False
        if job.cancel.is_set():
            st.cancelled, st.stop_reason = True, "cancel"
            return False
        if st.generated_tokens >= job.max_tokens:
            st.stop_reason = "length"
            return False
        return True

    return give


def line_goes_on(line_prefix: str) -> bool:
    """True when the typed part of a line cannot be its end (Python and C-like syntax)."""
    text = line_prefix.rstrip()
    if not text:
        return False
    if text[-1] in "=([{,+-*/%<>&|.~^@":
        return True
    last = text.split()[-1]
    return line_prefix.endswith(" ") and last in _GOES_ON


_GOES_ON = frozenset(
    "return in not and or if elif while import from yield await lambda assert del raise is with for".split()
)


__all__ = [
    "GREEDY_BELOW",
    "GenerationStats",
    "Job",
    "LlamaEngine",
    "StopMatcher",
    "TokenConstraint",
    "common_prefix",
    "line_goes_on",
    "lookup_draft",
]


def amx_faults() -> bool:
    """True where llama.cpp's extra buffer types must stay off: the CPU reports AMX, and a
    natively built llama.cpp then repacks weights for AMX tiles, whose first instruction
    (`ldtilecfg`) faults in VMs that do not pass AMX through (SIGSEGV on the first decode,
    seen with llama-cpp-python 0.3.36). `LSP_ASSIST_EXTRA_BUFTS=1` keeps them on."""
    if os.environ.get("LSP_ASSIST_EXTRA_BUFTS") == "1":
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            return any(line.startswith("flags") and " amx_tile" in line for line in fh)
    except OSError:
        return False


@contextlib.contextmanager
def _model_params_without_repack(active: bool) -> Iterator[None]:
    """While active, llama-cpp-python's `Llama` gets default model parameters with
    `use_extra_bufts` off (it has no argument for it). Call under `_LOAD_LOCK`."""
    if not active:
        yield
        return
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params

    def without_repack() -> Any:
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = without_repack
    try:
        yield
    finally:
        lib.llama_model_default_params = original
