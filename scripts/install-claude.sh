#!/usr/bin/env bash
# Installs the pinned Claude Code CLI into <repo>/.cache/claude for the end-to-end tests
# (test/support/claude.ts finds it there). Idempotent: does nothing if that version is
# already installed and runs. Needs only node, npm and the npm registry.
#
#   scripts/install-claude.sh            # pinned version
#   CLAUDE_CODE_VERSION=2.1.x scripts/install-claude.sh
set -euo pipefail

# shellcheck source=lib/install-npm-cli.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-npm-cli.sh"
npm_cli_setup claude "${CLAUDE_CODE_VERSION:-2.1.332}"
PKG_DIR="$PREFIX/node_modules/@anthropic-ai/claude-code"

current_version() {
  # `claude --version` prints "2.1.332 (Claude Code)"; it takes a few milliseconds.
  [ -x "$BIN" ] || return 0
  "$BIN" --version 2>/dev/null | awk '{print $1}' || true
}

npm_cli_exit_if_installed

# The package wants node >= 22 in its "engines" but its native binary does not need node;
# --engine-strict=false keeps a user's engine-strict setting from refusing it on node 20.
# Optional dependencies carry the platform's native binary, so they must not be omitted;
# the postinstall script links that binary over bin/claude.exe.
npm_cli_install @anthropic-ai/claude-code --include=optional --ignore-scripts=false --engine-strict=false

if [ "$(current_version)" != "$VERSION" ]; then
  # The postinstall did not run or did not finish (e.g. scripts disabled): run it ourselves.
  echo "running the package's postinstall (node install.cjs)"
  (cd "$PKG_DIR" && node install.cjs)
fi

npm_cli_check
