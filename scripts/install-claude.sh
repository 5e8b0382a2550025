#!/usr/bin/env bash
# Installs the pinned Claude Code CLI into <repo>/.cache/claude for the end-to-end tests
# (test/support/claude.ts finds it there). Idempotent: does nothing if that version is
# already installed and runs. Needs only node, npm and the npm registry.
#
#   scripts/install-claude.sh            # pinned version
#   CLAUDE_CODE_VERSION=2.1.x scripts/install-claude.sh
set -euo pipefail

VERSION="${CLAUDE_CODE_VERSION:-2.1.332}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.cache/claude"
BIN="$PREFIX/node_modules/.bin/claude"
PKG_DIR="$PREFIX/node_modules/@anthropic-ai/claude-code"

current_version() {
  # `claude --version` prints "2.1.332 (Claude Code)"; it takes a few milliseconds.
  [ -x "$BIN" ] || return 0
  "$BIN" --version 2>/dev/null | awk '{print $1}' || true
}

if [ "$(current_version)" = "$VERSION" ]; then
  echo "claude $VERSION already installed in $PREFIX"
  exit 0
fi

mkdir -p "$PREFIX"
# A package.json of its own keeps npm from treating the project as the install root.
[ -f "$PREFIX/package.json" ] || echo '{"name":"takeback-claude-cache","private":true}' >"$PREFIX/package.json"

echo "installing @anthropic-ai/claude-code@$VERSION into $PREFIX"
# The package wants node >= 22 in its "engines" but its native binary does not need node;
# --engine-strict=false keeps a user's engine-strict setting from refusing it on node 20.
# Optional dependencies carry the platform's native binary, so they must not be omitted;
# the postinstall script links that binary over bin/claude.exe.
npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --loglevel=error \
  --include=optional --ignore-scripts=false --engine-strict=false \
  "@anthropic-ai/claude-code@$VERSION"

if [ "$(current_version)" != "$VERSION" ]; then
  # The postinstall did not run or did not finish (e.g. scripts disabled): run it ourselves.
  echo "running the package's postinstall (node install.cjs)"
  (cd "$PKG_DIR" && node install.cjs)
fi

got="$(current_version)"
if [ "$got" != "$VERSION" ]; then
  echo "install-claude: expected claude $VERSION, got '${got:-nothing}'" >&2
  exit 1
fi
echo "claude $got installed: $BIN"
