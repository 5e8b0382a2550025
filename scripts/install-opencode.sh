#!/usr/bin/env bash
# Installs the pinned opencode (`opencode-ai`) into <repo>/.cache/opencode and the pinned Kilo
# Code CLI (`@kilocode/cli`, built on opencode, same plugin API) into <repo>/.cache/kilo, for the
# end-to-end tests (test/support/opencode.ts finds them there). Idempotent: does nothing for a CLI
# whose version is already installed and runs. Needs only node, npm and the npm registry.
#
#   scripts/install-opencode.sh            # pinned versions
#   OPENCODE_VERSION=1.x.y KILO_VERSION=7.x.y scripts/install-opencode.sh
#
# Each package is a small launcher plus one optional dependency per platform
# (`opencode-linux-x64`, `@kilocode/cli-linux-x64`) that carries the native binary; npm fetches
# only the one for this platform, so optional dependencies must not be omitted. Kilo is pinned to
# a version whose platform packages were published (7.8.1 came without them).
set -euo pipefail

here="$(dirname "${BASH_SOURCE[0]}")"

# One CLI per subshell: the shared helpers set their variables and may exit.
(
  # shellcheck source=lib/install-npm-cli.sh
  . "$here/lib/install-npm-cli.sh"
  npm_cli_setup opencode "${OPENCODE_VERSION:-1.18.33}"
  # `opencode --version` prints just the number, e.g. "1.18.33".
  current_version() { npm_cli_version_output </dev/null | tail -n 1 | awk '{print $1}'; }
  npm_cli_exit_if_installed
  npm_cli_install opencode-ai --include=optional --engine-strict=false
  npm_cli_check "$(du -sh "$PREFIX" 2>/dev/null | awk '{print $1}')"
)
(
  # shellcheck source=lib/install-npm-cli.sh
  . "$here/lib/install-npm-cli.sh"
  npm_cli_setup kilo "${KILO_VERSION:-7.7.7}"
  # `kilo --version` prints just the number, e.g. "7.7.7".
  current_version() { npm_cli_version_output </dev/null | tail -n 1 | awk '{print $1}'; }
  npm_cli_exit_if_installed
  npm_cli_install @kilocode/cli --include=optional --engine-strict=false
  npm_cli_check "$(du -sh "$PREFIX" 2>/dev/null | awk '{print $1}')"
)
