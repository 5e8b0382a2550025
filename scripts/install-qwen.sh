#!/usr/bin/env bash
# Installs the pinned Qwen Code (@qwen-code/qwen-code) into <repo>/.cache/qwen for the end-to-end tests
# (test/support/qwen.ts finds it there). Idempotent: does nothing if that version is
# already installed and runs. Needs only node (20 or newer), npm and the npm registry.
#
#   scripts/install-qwen.sh            # pinned version
#   QWEN_CODE_VERSION=x.y.z scripts/install-qwen.sh
set -euo pipefail

# shellcheck source=lib/install-npm-cli.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-npm-cli.sh"
npm_cli_setup qwen "${QWEN_CODE_VERSION:-0.24.4}"

current_version() {
  npm_cli_version_output </dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true
}

npm_cli_exit_if_installed

npm_cli_install @qwen-code/qwen-code --include=optional --engine-strict=false

npm_cli_check "$(du -sh "$PREFIX" 2>/dev/null | awk '{print $1}')"
