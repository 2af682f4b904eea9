#!/bin/sh
# Installs the peer language servers benchmarks/latency.py runs next to lsp-assist, into
# benchmarks/.peers/ (gitignored; nothing of it is committed). Needs Node 18+ and npm.
#   tabby-agent 1.5.0: `node dist/cli.js --lsp --stdio`, textDocument/completion against the
#   Tabby /v1/completions API (the benchmark gives it a loopback fake Tabby endpoint).
set -eu
DIR="$(cd "$(dirname "$0")" && pwd)/.peers"
mkdir -p "$DIR"
if [ -f "$DIR/node_modules/tabby-agent/dist/cli.js" ]; then
    echo "tabby-agent already installed in $DIR"
    exit 0
fi
npm install --prefix "$DIR" --no-audit --no-fund --ignore-scripts --loglevel=error tabby-agent@1.5.0
echo "tabby-agent installed in $DIR"
