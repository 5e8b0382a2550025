#!/usr/bin/env bash
# Installs the pinned Gemini CLI into <repo>/.cache/gemini for the end-to-end tests
# (test/support/gemini.ts finds it there). Idempotent: does nothing if that version is
# already installed and runs. Needs only node (20 or newer), npm and the npm registry.
#
#   scripts/install-gemini.sh            # pinned version
#   GEMINI_CLI_VERSION=0.6x.y scripts/install-gemini.sh
set -euo pipefail

VERSION="${GEMINI_CLI_VERSION:-0.61.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.cache/gemini"
BIN="$PREFIX/node_modules/.bin/gemini"

current_version() {
  # `gemini --version` prints just the number, e.g. "0.61.0" (about a second: it loads the bundle).
  # A private HOME keeps it from reading or creating the user's ~/.gemini.
  [ -x "$BIN" ] || return 0
  local home
  home="$(mktemp -d "${TMPDIR:-/tmp}/takeback-gemini-version-XXXXXX")"
  HOME="$home" "$BIN" --version 2>/dev/null </dev/null | tail -n 1 | awk '{print $1}' || true
  rm -rf "$home"
}

if [ "$(current_version)" = "$VERSION" ]; then
  echo "gemini $VERSION already installed in $PREFIX"
  exit 0
fi

mkdir -p "$PREFIX"
# A package.json of its own keeps npm from treating the project as the install root.
[ -f "$PREFIX/package.json" ] || echo '{"name":"takeback-gemini-cache","private":true}' >"$PREFIX/package.json"

echo "installing @google/gemini-cli@$VERSION into $PREFIX"
# "engines" says node >= 20. Optional dependencies (native helpers such as node-pty) are
# kept; the CLI falls back when one fails to build.
npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --loglevel=error \
  --include=optional --engine-strict=false \
  "@google/gemini-cli@$VERSION"

got="$(current_version)"
if [ "$got" != "$VERSION" ]; then
  echo "install-gemini: expected gemini $VERSION, got '${got:-nothing}'" >&2
  exit 1
fi
echo "gemini $got installed: $BIN"
