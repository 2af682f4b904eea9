#!/bin/sh
# Usage: lsp-assist bench --server "base=sh benchmarks/bench_checkout.sh {base_url} {home} /path/to/checkout"
# (PYTHON: the interpreter with the dependencies). Two checkouts in one run, same settings.
# lsp-assist at another checkout ($3), configured as lsp-assist bench's own recipe does.
base_url="$1"; home="$2"; tree="$3"
cat > "$home/config.toml" <<TOML
[tiers.fast]
provider = "openai"
api = "completions"
base_url = "$base_url"
model = "bench-loopback"
first_token_timeout_ms = 5000
total_timeout_ms = 10000

[tiers.quality]
provider = "offline"

[tiers.backup]
provider = "offline"

[completion]
debounce_min_ms = 0
debounce_max_ms = 0
invoked_choices = 1
prefetch_max_tokens = 31
TOML
export LSP_ASSIST_CONFIG="$home/config.toml" LSP_ASSIST_CACHE_DIR="$home/cache" LSP_ASSIST_POLICY="$home/no-policy.toml" LSP_ASSIST_LOG_LEVEL=warning PYTHONPATH="$tree"
cd "$tree" && exec "${PYTHON:-python3}" -m lsp_assist serve
