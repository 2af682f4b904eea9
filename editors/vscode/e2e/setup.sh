#!/usr/bin/env bash
# Installs what the real-VS-Code test needs (tests/editors/test_vscode_real.py): code-server
# 4.100.3 (VS Code 1.100.3 on Node 20), puppeteer-core, and Debian's Chromium.
#
# Everything comes from the npm registry and Debian packages (no binary downloads):
# `npm install code-server` alone fails here (its postinstall downloads ripgrep and needs
# Node 24), so the tarball is unpacked and its native modules rebuilt against Node's headers
# from /usr/include/node, with Debian's rg in place of the downloaded one.
# The result is cached in $LSP_ASSIST_E2E_DIR (default ~/.cache/lsp-assist-e2e, outside the
# repository) and a stamp file makes repeated runs return at once.
# Prints the install directory on its last line; exits non-zero with a reason otherwise.
set -euo pipefail

VERSION=4.100.3
PUPPETEER=24.43.1
DIR="${LSP_ASSIST_E2E_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lsp-assist-e2e}"
STAMP="$DIR/.ready-$VERSION-$PUPPETEER"
if [ -f "$STAMP" ]; then
  echo "$DIR"
  exit 0
fi

log() { echo "[vscode-e2e setup] $*" >&2; }

# Debian packages: headers for the native modules, ripgrep, and the browser.
PKGS="libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev pkg-config ripgrep chromium"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    # apt-get may be locked by another install for a while: retry a few times.
    for attempt in 1 2 3 4 5 6; do
      if apt-get install -y -q $missing >&2; then break; fi
      [ "$attempt" = 1 ] && apt-get update -q >&2 || true
      [ "$attempt" = 6 ] && { log "apt-get install failed"; exit 3; }
      sleep 10
    done
  else
    log "missing Debian packages:$missing (not root: install them first)"
    exit 3
  fi
fi
command -v node >/dev/null && command -v npm >/dev/null || { log "node/npm not found"; exit 3; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || {
  log "code-server $VERSION needs Node 20+ (found $(node --version))"
  exit 3
}

mkdir -p "$DIR"
cd "$DIR"
rm -rf code-server driver package
export npm_config_nodedir=/usr          # Node headers from /usr/include/node, no download
export npm_config_unsafe_perm=true      # postinstall scripts as root
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

log "unpacking code-server $VERSION"
tarball=$(npm pack "code-server@$VERSION" --silent | tail -1)
tar xzf "$tarball"
rm -f "$tarball"
mv package code-server

cd "$DIR/code-server"
log "code-server dependencies"
npm install --omit=dev --ignore-scripts >&2
npm rebuild argon2 >&2

cd "$DIR/code-server/lib/vscode"
log "VS Code dependencies (native modules are rebuilt; about a minute)"
npm install --omit=dev --ignore-scripts >&2
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
# node-pty's compile_commands step fails harmlessly; the modules that matter are built.
npm rebuild --foreground-scripts >&2 || log "npm rebuild reported errors (node-pty's compile_commands step is expected)"
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sfn code-linux.sh code-server)
(cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --ignore-scripts >&2)

log "puppeteer-core $PUPPETEER"
mkdir -p "$DIR/driver"
cd "$DIR/driver"
echo '{"name": "lsp-assist-vscode-e2e-driver", "private": true}' > package.json
# No browser download: the test uses Debian's /usr/bin/chromium.
PUPPETEER_SKIP_DOWNLOAD=1 npm install --ignore-scripts "puppeteer-core@$PUPPETEER" >&2

test -f "$DIR/code-server/out/node/entry.js" || { log "code-server entry.js missing"; exit 4; }
touch "$STAMP"
echo "$DIR"
