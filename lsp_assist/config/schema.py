"""The one typed configuration schema, with defaults.

Every source (user TOML, workspace `.lsp-assist.toml`, `initializationOptions`,
`workspace/didChangeConfiguration`, the editor clients' settings) uses these key names.
The tier keys (`tiers.fast|quality|backup.*`) and `cache.dir` are a contract editor
clients rely on: rename nothing here without a migration.

Every numeric key declares its range here, next to its default (`bounded(low, high)`); the
loader refuses a value outside it, names the key, and keeps the default
(tests/unit/config/test_bounds.py fails for a numeric key without one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_MS_10_MIN = 600_000  # the longest timeout or deadline that is not a typo


def bounded(low: float, high: float) -> dict[str, float]:
    """Field metadata: the range `config.loader.build_dataclass` accepts (both ends included).
    On a table of numbers (budget.*) it applies to each entry."""
    return {"min": low, "max": high}


@dataclass
class TierConfig:
    """One model tier. `provider` picks the API family module in `lsp_assist.providers`."""

    provider: str = (
        "offline"  # auto | offline | local | openai (| ollama | llamacpp | anthropic | mistral later)
    )
    api: str = "completions"  # completions (FIM: prompt + suffix) | chat (instruction)
    base_url: str = ""  # as OpenAI clients take it, e.g. "http://127.0.0.1:8080/v1"
    model: str = ""  # model name sent to the API; for `local`: "gemma3-270m", "smollm2" or a GGUF path
    api_key_env: str = ""  # NAME of the environment variable that holds the key, never the key
    max_tokens: int = field(default=48, metadata=bounded(1, 8192))
    temperature: float = field(default=0.1, metadata=bounded(0.0, 2.0))
    first_token_timeout_ms: int = field(default=2500, metadata=bounded(1, _MS_10_MIN))
    total_timeout_ms: int = field(default=6000, metadata=bounded(1, _MS_10_MIN))
    fim_template: str = "auto"  # auto | qwen | starcoder | codellama | deepseek | codestral | plain | none
    # The prompt budget in characters (about 3.5 characters a token).
    context_chars: int = field(default=4000, metadata=bounded(100, 1_000_000))
    # auto: "stable" (KV-cache-friendly, context/layout.py) on the in-process embedded model,
    # else "trimmed" (the syntax-aware selection). Or set "stable" | "trimmed".
    prompt_layout: str = "auto"
    # When the first line is not complete this long after the request arrived, answer with
    # the text so far if it ends at a code-like boundary and keep going (0: off; "auto" tiers
    # on the embedded model get local.answer_budget_ms).
    answer_budget_ms: int = field(default=0, metadata=bounded(0, 60_000))
    enabled: bool = True


def _default_tiers() -> dict[str, TierConfig]:
    return {
        # "auto": the embedded local model when the `local` extra is installed, else offline.
        "fast": TierConfig(provider="auto"),
        "quality": TierConfig(provider="auto", max_tokens=160, context_chars=8000, total_timeout_ms=20000),
        "backup": TierConfig(provider="offline"),
    }


@dataclass
class CacheConfig:
    dir: str = ""  # default: $LSP_ASSIST_CACHE_DIR, else the platform user cache dir
    enabled: bool = True
    memory_entries: int = field(default=4096, metadata=bounded(0, 1_000_000))
    disk_size_mb: int = field(default=256, metadata=bounded(1, 1024 * 1024))
    ttl_s: int = field(default=7 * 24 * 3600, metadata=bounded(1, 366 * 24 * 3600))


@dataclass
class CompletionConfig:
    """The request path: deadlines, debounce, enrichment, prefetch."""

    # Every request is answered by then, possibly empty.
    deadline_ms: int = field(default=8000, metadata=bounded(50, _MS_10_MIN))
    # The debounce (pipeline/scheduler.py: none after a pause; within a typing burst a little
    # more than the user's keystroke gap, from min to max). A key left unset takes the
    # default of the fast tier's provider kind (DEBOUNCE_DEFAULTS there, chosen from the
    # burst curve in docs/latency.md); a value set here wins.
    debounce_min_ms: int | None = field(default=None, metadata=bounded(0, 2000))  # least wait in a burst
    debounce_max_ms: int | None = field(default=None, metadata=bounded(0, 2000))  # most wait in a burst
    debounce_word_triggers: bool | None = None  # in a burst, no wait after . ( space newline
    enrichment: bool = True  # continue in the background to a multi-line suggestion
    grow: bool = True  # the ghost text grows line by line while the model streams (suggestionReady)
    enrichment_max_tokens: int = field(default=96, metadata=bounded(1, 8192))
    enrichment_timeout_ms: int = field(default=8000, metadata=bounded(1, _MS_10_MIN))
    prefetch: bool = True
    prefetch_max_tokens: int = field(default=32, metadata=bounded(1, 8192))
    # Larger documents get offline suggestions only.
    max_document_bytes: int = field(default=2_000_000, metadata=bounded(0, 1 << 30))
    languages_disabled: list[str] = field(default_factory=list)
    # Items an Invoked request returns to cycle through (Automatic: 1), and how long it
    # waits for the fuller answer.
    invoked_choices: int = field(default=3, metadata=bounded(1, 10))
    invoked_choices_wait_ms: int = field(default=1500, metadata=bounded(0, 60_000))
    # A second model call per Invoked request, sampled at this temperature, as one more
    # choice; 0 = off (the default: it costs a call, quota and tokens on every Alt+\).
    invoked_sample_temperature: float = field(default=0.0, metadata=bounded(0.0, 2.0))


@dataclass
class LocalConfig:
    """The embedded model: llama.cpp in this process (or a managed server on 127.0.0.1)."""

    # auto: each role's model from what is installed and its measured speed here
    # (providers/roles.py) | gemma3-270m | smollm2 | qwen2.5-coder-1.5b | a path to any GGUF file
    model: str = "auto"
    backend: str = "inprocess"  # inprocess (KV-cache reuse, default) | server (llama-cpp-python child)
    n_ctx: int = field(default=2048, metadata=bounded(256, 131_072))
    # Generation threads; 0: the idle cores where measured faster, else 1 (typing_threads).
    threads: int = field(default=0, metadata=bounded(0, 256))
    # Prompt-reading threads; 0: all cores up to 4, fewer when busy.
    batch_threads: int = field(default=0, metadata=bounded(0, 256))
    # Prompt-lookup speculation; 0 = off (measured slower: docs/design.md).
    draft_tokens: int = field(default=0, metadata=bounded(0, 64))
    # After `x.` only names `x` has (when known): docs/member-constraint.md.
    constrain_members: bool = True
    # Where the user stopped inside a token, the model spells it again: docs/model-roles.md.
    token_healing: bool = True
    # Tiers on the embedded model answer a partial line by then, counted from the request's
    # arrival; with the wait for a word's end (~1 token) the answer is shown by ~200 ms.
    answer_budget_ms: int = field(default=180, metadata=bounded(0, 60_000))
    # After a jump, the uncached part of a completion's prompt is cut to what the model reads
    # in this long (speed learned at runtime); the rest is read in the background. 0: always
    # read all. Escalations and next edits always read all (nothing refines them).
    prompt_budget_ms: int = field(default=200, metadata=bounded(0, 60_000))
    # A second, stronger model that rewrites a completion's answer once the user rests
    # (`refine_rest_ms`): "auto" = the strongest installed model when the typing model is
    # local and weaker (qwen2.5-coder-1.5b with the extra `local-coder`), "" = none; a name
    # or GGUF path as for `model`. docs/embedded-latency.md.
    refine_model: str = "auto"
    refine_rest_ms: int = field(default=300, metadata=bounded(0, 60_000))
    startup_timeout_s: float = field(default=120.0, metadata=bounded(1.0, 3600.0))
    # Defaults for tiers served by the embedded model (a tier's own smaller budget wins).
    context_chars: int = field(default=1500, metadata=bounded(100, 1_000_000))
    first_token_timeout_ms: int = field(default=4000, metadata=bounded(1, _MS_10_MIN))
    total_timeout_ms: int = field(default=8000, metadata=bounded(1, _MS_10_MIN))
    # 0: keep it running while the server runs.
    idle_shutdown_s: float = field(default=0.0, metadata=bounded(0.0, 7 * 24 * 3600.0))


@dataclass
class BudgetConfig:
    """The latency budget: a total per tier and the share each stage may take."""

    total_ms: dict[str, int] = field(
        default_factory=lambda: {"fast": 1500, "quality": 8000, "backup": 2500},
        metadata=bounded(1, _MS_10_MIN),
    )
    shares: dict[str, float] = field(
        metadata=bounded(0.0, 1.0),
        default_factory=lambda: {
            "debounce": 0.10,
            "queue": 0.10,
            "context": 0.05,
            "connect": 0.10,
            "ttft": 0.60,
            "postprocess": 0.02,
        },
    )


@dataclass
class WorkspaceConfig:
    """The workspace index (cross-file definitions of files that are not open) and warmup."""

    index: bool = True  # build the index in the background after `initialized`
    # Files per root of the in-memory index (`lsp-assist context`); the server's on-disk index
    # is bounded by `max_total_bytes` and `index_time_budget_s` instead.
    max_files: int = field(default=20_000, metadata=bounded(1, 10_000_000))
    max_file_bytes: int = field(default=1_000_000, metadata=bounded(1, 1 << 30))  # larger files are skipped
    # The scan stops cleanly after this long.
    scan_time_budget_s: float = field(default=60.0, metadata=bounded(0.1, 86_400.0))
    # Bytes of source one build indexes per root; beyond, it stops cleanly and says so.
    max_total_bytes: int = field(default=4 << 30, metadata=bounded(1, 1 << 40))
    # One build stops cleanly after this long; the next continues where it stopped.
    index_time_budget_s: float = field(default=1800.0, metadata=bounded(1.0, 86_400.0))
    # Parsing processes (0: one per core; they run at a lower priority than the server).
    index_workers: int = field(default=0, metadata=bounded(0, 64))
    precompute: bool = False  # warmup precomputes suggestions in recently changed files
    # Positions precomputed per warmup (also bounded by the warmup quota).
    precompute_limit: int = field(default=8, metadata=bounded(0, 1000))


@dataclass
class AttributionConfig:
    """What every model call says about who made it, in the forms gateways read."""

    openai_user: bool = True  # OpenAI-family bodies carry `user` (LiteLLM/OpenAI per-user spend)
    litellm: bool = False  # LiteLLM: body `metadata.tags` and the `x-litellm-tags` header
    # Extra request headers; values may use {business_line}, {feature}, {user}, {tier}, {environment}.
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class TeamConfig:
    """Running lsp-assist for a team: a shared governance store and attribution.

    Typed in full by `lsp_assist.governance.team_settings` (quota and limit tables).
    """

    store: str = ""  # "" = local store; "redis://HOST:PORT/DB" (loopback) or "rediss://..." (TLS)
    password_env: str = ""  # NAME of the environment variable holding the Redis password
    namespace: str = "lsp-assist"  # key prefix; the governance environment is appended
    on_unavailable: str = "local"  # local | open | closed: what applies while the store is down
    # One store round trip at most; then the call falls back.
    timeout_ms: int = field(default=250, metadata=bounded(1, 60_000))
    business_line: str = ""  # who pays: quotas, limits and attribution per business line
    user: str = ""  # default: $LSP_ASSIST_USER, else the login name
    quotas: dict[str, Any] = field(default_factory=dict)  # business_lines.<name> / users.<name|default>
    rate_limits: dict[str, Any] = field(default_factory=dict)  # same shape, rpm + max_concurrent
    attribution: AttributionConfig = field(default_factory=AttributionConfig)


@dataclass
class TelemetryConfig:
    """OpenTelemetry export (extra `otel`): traces and GenAI metrics over OTLP/HTTP."""

    otlp_endpoint: str = ""  # e.g. "http://127.0.0.1:4318"; empty = no export
    service_name: str = "lsp-assist"
    headers_env: str = ""  # NAME of an env var with "k=v,k2=v2" headers (collector auth)
    export_interval_ms: int = field(default=10000, metadata=bounded(100, 3_600_000))  # metrics


@dataclass
class NextEditConfig:
    """Next-edit suggestions (`textDocument/copilotInlineEdit`, docs/next-edit.md)."""

    enabled: bool = True
    # rules: the rule predictor only (no model, milliseconds) | model: a model only |
    # both: the rules first, the model when the rules have nothing to propose.
    predictor: str = "rules"
    # With confidence = "evidence": the rule predictor shows a place only at or above this
    # confidence (nextedit/evidence.py; 0.8 was set on the benchmark's tuning half). Lower:
    # more proposals, more false alarms. The learned confidence has its own threshold.
    min_confidence: float = field(default=0.8, metadata=bounded(0.0, 3.0))
    # How the rule predictor weighs a place on weak evidence: evidence (the hand-set weights
    # of nextedit/evidence.py, gated by min_confidence) | learned (a logistic regression
    # fitted on the benchmark's tuning half, nextedit/confidence_table.py, with its own
    # threshold; not the default: it did not lower false alarms on the validation half).
    confidence: str = "evidence"
    # The model's prompt format: zeta (editable region + cursor marker) | sweep (original /
    # current / updated windows) | instruct (an instruction for chat models).
    format: str = "zeta"
    # The tier whose provider serves the model predictor; "" = "fast" for zeta and sweep
    # (small next-edit models), "quality" for instruct (chat models).
    tier: str = ""
    # History entries (unified diffs) a model prompt carries.
    prompt_edits: int = field(default=8, metadata=bounded(0, 25))
    # Lines of the editable region above and below the cursor (sweep: the window is 2n+1).
    region_lines: int = field(default=10, metadata=bounded(1, 200))
    max_tokens: int = field(default=512, metadata=bounded(16, 8192))
    timeout_ms: int = field(default=5000, metadata=bounded(1, _MS_10_MIN))


NEXT_EDIT_PREDICTORS = ("rules", "model", "both")
NEXT_EDIT_FORMATS = ("zeta", "sweep", "instruct")
NEXT_EDIT_CONFIDENCES = ("evidence", "learned")


@dataclass
class Config:
    tiers: dict[str, TierConfig] = field(default_factory=_default_tiers)
    cache: CacheConfig = field(default_factory=CacheConfig)
    completion: CompletionConfig = field(default_factory=CompletionConfig)
    local: LocalConfig = field(default_factory=LocalConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    workspace: WorkspaceConfig = field(default_factory=WorkspaceConfig)
    # Governance settings are a free-form table here and typed in lsp_assist.governance.settings,
    # so that module owns its schema (policy locking, quotas, audit...).
    governance: dict[str, object] = field(default_factory=dict)
    team: TeamConfig = field(default_factory=TeamConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    next_edit: NextEditConfig = field(default_factory=NextEditConfig)
    log_level: str = "info"
    log_file: str = ""

    def tier(self, name: str) -> TierConfig:
        return self.tiers.get(name) or TierConfig()

    def next_edit_tier(self) -> str:
        """The tier the next-edit model predictor calls."""
        if self.next_edit.tier:
            return self.next_edit.tier
        return "quality" if self.next_edit.format == "instruct" else "fast"


TIER_NAMES = ("fast", "quality", "backup")
