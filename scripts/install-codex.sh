#!/usr/bin/env bash
# Installs the pinned OpenAI Codex CLI into <repo>/.cache/codex for the end-to-end tests
# (test/support/codex.ts finds it there). Idempotent: does nothing if that version is
# already installed and runs. Needs only node, npm and the npm registry.
#
#   scripts/install-codex.sh            # pinned version
#   CODEX_VERSION=0.x.y scripts/install-codex.sh
#
# Size: the package is a small node launcher (bin/codex.js) plus one optional dependency per
# platform (`@openai/codex-linux-x64` = `@openai/codex@<version>-linux-x64`) that carries the
# native Rust binary; npm fetches only the one for this platform (see the fixtures README for
# the measured size and time).
set -euo pipefail

# shellcheck source=lib/install-npm-cli.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-npm-cli.sh"
npm_cli_setup codex "${CODEX_VERSION:-0.171.0}"

current_version() {
  # `codex --version` prints "codex-cli 0.171.0". Even that creates $CODEX_HOME/tmp, so it runs
  # with a throwaway CODEX_HOME, never the user's ~/.codex.
  npm_cli_version_output CODEX_HOME | awk '{print $NF}'
}

npm_cli_exit_if_installed

# The native binary comes in an optional dependency (an npm alias of a platform-tagged version
# of the same package), so optional dependencies must not be omitted (a user's omit=optional
# would leave bin/codex.js with nothing to run).
npm_cli_install @openai/codex --include=optional --engine-strict=false

if [ "$(current_version)" != "$VERSION" ]; then
  # Most likely the platform package is missing (optional deps skipped, or an unknown platform).
  # Install it explicitly by its platform-tagged version.
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) plat=linux-x64 ;;
    Linux-aarch64 | Linux-arm64) plat=linux-arm64 ;;
    Darwin-x86_64) plat=darwin-x64 ;;
    Darwin-arm64) plat=darwin-arm64 ;;
    *) plat="" ;;
  esac
  if [ -n "$plat" ]; then
    echo "installing the native binary package @openai/codex-$plat ($VERSION-$plat)"
    npm_cli_npm --engine-strict=false --force \
      "@openai/codex@$VERSION" "@openai/codex-$plat@npm:@openai/codex@$VERSION-$plat"
  fi
fi

npm_cli_check "$(du -sh "$PREFIX" 2>/dev/null | awk '{print $1}')"
