# Shared by scripts/install-claude.sh, install-codex.sh and install-gemini.sh: installs the pinned
# version of the npm package that carries an agent's CLI into <repo>/.cache/<name>, for the
# end-to-end tests (test/support/agent-bin.ts finds it there), and checks what it installed.
# Needs only node, npm and the npm registry.
#
# Source it (after `set -euo pipefail`), call npm_cli_setup, define current_version (prints the
# installed CLI's version, or nothing: it may use npm_cli_version_output), then:
#   npm_cli_exit_if_installed               # exit 0 if that version is already there and runs
#   npm_cli_install PACKAGE [NPM_OPTION...] # npm install PACKAGE@VERSION into .cache/<name>
#   npm_cli_check [DETAIL]                  # fail unless VERSION runs now; else say where it is

# npm_cli_setup NAME VERSION: sets NAME, VERSION, ROOT (the repository), PREFIX (.cache/NAME)
# and BIN (the CLI that npm links into PREFIX/node_modules/.bin).
npm_cli_setup() {
  NAME="$1"
  VERSION="$2"
  ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  PREFIX="$ROOT/.cache/$NAME"
  BIN="$PREFIX/node_modules/.bin/$NAME"
}

# npm_cli_version_output [VAR...]: what `BIN --version` prints (stderr dropped; nothing if BIN is
# missing or fails), run with a throwaway HOME, and each VAR set to it too, so that asking the
# version never reads or creates the user's own folders (e.g. ~/.codex); the folder is removed after.
npm_cli_version_output() {
  [ -x "$BIN" ] || return 0
  local home var
  local -a vars
  home="$(mktemp -d "${TMPDIR:-/tmp}/takeback-$NAME-version-XXXXXX")"
  vars=("HOME=$home")
  for var in "$@"; do vars+=("$var=$home"); done
  env "${vars[@]}" "$BIN" --version 2>/dev/null || true
  rm -rf "$home"
}

npm_cli_exit_if_installed() {
  if [ "$(current_version)" = "$VERSION" ]; then
    echo "$NAME $VERSION already installed in $PREFIX"
    exit 0
  fi
}

# npm install, quietly, into PREFIX only (the options and packages given).
npm_cli_npm() {
  npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --loglevel=error "$@"
}

npm_cli_install() {
  local package="$1"
  shift
  mkdir -p "$PREFIX"
  # A package.json of its own keeps npm from treating the project as the install root.
  [ -f "$PREFIX/package.json" ] || echo "{\"name\":\"takeback-$NAME-cache\",\"private\":true}" >"$PREFIX/package.json"
  echo "installing $package@$VERSION into $PREFIX"
  npm_cli_npm "$@" "$package@$VERSION"
}

npm_cli_check() {
  local got
  got="$(current_version)"
  if [ "$got" != "$VERSION" ]; then
    echo "install-$NAME: expected $NAME $VERSION, got '${got:-nothing}'" >&2
    exit 1
  fi
  echo "$NAME $got installed: $BIN${1:+ ($1)}"
}
