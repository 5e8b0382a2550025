#!/usr/bin/env bash
# Installs the pinned GitHub Copilot CLI (@github/copilot) into <repo>/.cache/copilot for the end-to-end tests
# (test/support/copilot.ts finds it there). Idempotent: does nothing if that version is
# already installed and runs. Needs only node (20 or newer), npm and the npm registry.
#
#   scripts/install-copilot.sh            # pinned version
#   COPILOT_VERSION=x.y.z scripts/install-copilot.sh
set -euo pipefail

# shellcheck source=lib/install-npm-cli.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-npm-cli.sh"
npm_cli_setup copilot "${COPILOT_VERSION:-1.0.102}"

current_version() {
  npm_cli_version_output </dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true
}

npm_cli_exit_if_installed

npm_cli_install @github/copilot --include=optional --engine-strict=false

npm_cli_check "$(du -sh "$PREFIX" 2>/dev/null | awk '{print $1}')"
