#!/usr/bin/env bash
# Installs the pinned Cline CLI (cline) into <repo>/.cache/cline for the end-to-end tests
# (test/support/cline.ts finds it there). Idempotent: does nothing if that version is
# already installed and runs. Needs only node (20 or newer), npm and the npm registry.
#
#   scripts/install-cline.sh            # pinned version
#   CLINE_VERSION=x.y.z scripts/install-cline.sh
set -euo pipefail

# shellcheck source=lib/install-npm-cli.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-npm-cli.sh"
npm_cli_setup cline "${CLINE_VERSION:-3.0.65}"

current_version() {
  npm_cli_version_output </dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true
}

npm_cli_exit_if_installed

npm_cli_install cline --include=optional --engine-strict=false

npm_cli_check "$(du -sh "$PREFIX" 2>/dev/null | awk '{print $1}')"
