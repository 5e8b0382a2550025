#!/usr/bin/env bash
# Installs the pinned Gemini CLI into <repo>/.cache/gemini for the end-to-end tests
# (test/support/gemini.ts finds it there). Idempotent: does nothing if that version is
# already installed and runs. Needs only node (20 or newer), npm and the npm registry.
#
#   scripts/install-gemini.sh            # pinned version
#   GEMINI_CLI_VERSION=0.6x.y scripts/install-gemini.sh
set -euo pipefail

# shellcheck source=lib/install-npm-cli.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-npm-cli.sh"
npm_cli_setup gemini "${GEMINI_CLI_VERSION:-0.61.0}"

current_version() {
  # `gemini --version` prints just the number, e.g. "0.61.0" (about a second: it loads the bundle).
  # A private HOME keeps it from reading or creating the user's ~/.gemini.
  npm_cli_version_output </dev/null | tail -n 1 | awk '{print $1}'
}

npm_cli_exit_if_installed

# "engines" says node >= 20. Optional dependencies (native helpers such as node-pty) are
# kept; the CLI falls back when one fails to build.
npm_cli_install @google/gemini-cli --include=optional --engine-strict=false

npm_cli_check
