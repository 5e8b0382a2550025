#!/usr/bin/env bash
# Fetch the real editors that takeback's editor clients are tested against, into
# <repo>/.cache/editors/ (gitignored), without installing anything into the system:
#
#   nvim-0.10  Neovim 0.10.x from Debian trixie, with trixie's libraries
#   nvim-0.12  Neovim 0.12.x from Debian sid (forky as a fallback), with that suite's libraries
#   hx         Helix 25.07.x from Debian sid (forky as a fallback), with that suite's libraries
#
# Each editor gets its own root (<cache>/<name>/, made by `dpkg -x`), holding the editor and the
# dependency closure of its package, C library included. Wrappers in <cache>/bin/ run the binary
# through that C library's own loader (ld.so --library-path), so only the editor process uses the
# newer libraries; whatever the editor starts (node, a language server) uses the system's loader.
#
# Usage: scripts/fetch-editors.sh [--force] [nvim-0.10] [nvim-0.12] [hx]
#   no names: all three. --force: fetch again even when already fetched.
# Needs: Debian (bookworm or newer) with apt and dpkg, and the Debian mirror that apt already uses.
# Also installs tmux with apt-get when it is missing (the Helix tests drive Helix under tmux).
set -euo pipefail
# (pipefail: no pipeline below may stop reading early, like `| head -1`: SIGPIPE would fail it)

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cache="$repo/.cache/editors"

force=0
wanted=()
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    nvim-0.10 | nvim-0.12 | hx) wanted+=("$a") ;;
    -h | --help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fetch-editors: unknown argument: $a" >&2; exit 2 ;;
  esac
done
[ ${#wanted[@]} -gt 0 ] || wanted=(nvim-0.10 nvim-0.12 hx)

die() { echo "fetch-editors: $*" >&2; exit 1; }

# Editor table: package, acceptable version (shell pattern on the Debian version), suites to try
# in order, the binary inside the root (the wrapper is bin/<name>).
spec() {
  case "$1" in
    nvim-0.10) echo "neovim 0.10.* trixie usr/bin/nvim" ;;
    nvim-0.12) echo "neovim 0.12.* sid,forky usr/bin/nvim" ;;
    hx) echo "hx 25.07.* sid,forky usr/lib/hx/hx" ;;
  esac
}

case "$(dpkg --print-architecture 2>/dev/null || uname -m)" in
  amd64 | x86_64) triplet=x86_64-linux-gnu; loader=ld-linux-x86-64.so.2 ;;
  arm64 | aarch64) triplet=aarch64-linux-gnu; loader=ld-linux-aarch64.so.1 ;;
  *) die "unsupported architecture: $(uname -m)" ;;
esac
arch=$(dpkg --print-architecture)

mkdir -p "$cache/bin"
exec 9>"$cache/.lock"
flock 9 # two runs at once would extract into the same folders

# ---------------------------------------------------------------------------------------------
# tmux (system package: the Helix tests need it)
if command -v tmux >/dev/null 2>&1; then
  echo "tmux: present ($(tmux -V))"
elif [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq tmux >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null && apt-get install -y -qq tmux >/dev/null; } ||
    die "apt-get install tmux failed"
  echo "tmux: installed ($(tmux -V))"
else
  echo "tmux: missing and not root: install it with 'sudo apt-get install tmux' (Helix tests need it)"
fi

# ---------------------------------------------------------------------------------------------
# Wrappers: written (or rewritten) whenever a root is in place. They find the cache from their
# own location, so they work from any cwd and through symlinks.
write_wrapper() { # name
  local name=$1 bin libs="" d
  bin=$(spec "$name" | cut -d' ' -f4)
  for d in usr/lib/$triplet lib/$triplet; do
    [ -d "$cache/$name/$d" ] && libs="${libs:+$libs:}\$root/$d"
  done
  local out="$cache/bin/$name" tmp="$cache/bin/.$name.tmp" envline argv0
  case "$name" in
    nvim-*)
      envline="VIMRUNTIME=\$root/usr/share/nvim/runtime; export VIMRUNTIME"
      argv0=nvim ;;
    hx)
      envline="HELIX_RUNTIME=\$root/usr/lib/hx/runtime; export HELIX_RUNTIME"
      argv0=hx ;;
  esac
  cat >"$tmp" <<EOF
#!/bin/sh
# Written by scripts/fetch-editors.sh. Runs $(cat "$cache/$name/.package")
# through the loader of its own C library: --library-path applies to this process only, so the
# processes it starts use the system's loader and libraries.
self=\$(readlink -f -- "\$0")
root=\$(dirname -- "\$(dirname -- "\$self")")/$name
$envline
exec "\$root/usr/lib/$triplet/$loader" --library-path "$libs" --argv0 $argv0 "\$root/$bin" "\$@"
EOF
  chmod 755 "$tmp"
  if cmp -s "$tmp" "$out"; then rm -f "$tmp"; else mv -f "$tmp" "$out"; fi
}

fetched() { # name: is the root complete?
  local bin
  bin=$(spec "$1" | cut -d' ' -f4)
  [ -f "$cache/$1/.package" ] && [ -x "$cache/$1/$bin" ] && [ -e "$cache/$1/usr/lib/$triplet/$loader" ]
}

todo=()
for name in "${wanted[@]}"; do
  if [ $force = 0 ] && fetched "$name"; then
    write_wrapper "$name"
    echo "$name: already fetched: $(cat "$cache/$name/.package") -> .cache/editors/bin/$name ($("$cache/bin/$name" --version | sed -n 1p))"
  else
    todo+=("$name")
  fi
done
[ ${#todo[@]} -gt 0 ] || exit 0

# ---------------------------------------------------------------------------------------------
# Private apt setup: same mirror as the system's, own sources/lists/cache, no system pins.
# The mirror is read from the system's apt sources, never written into this repository.
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  # URIs of deb822 stanzas that are not the security archive.
  mirror=$(awk '
    BEGIN { RS = ""; FS = "\n" }
    {
      uris = ""; suites = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^URIs:/) { uris = $i; sub(/^URIs:[ \t]*/, "", uris) }
        if ($i ~ /^Suites:/) { suites = $i }
      }
      if (uris != "" && suites !~ /-security/ && uris ~ /\/debian\/?([ \t]|$)/) { split(uris, u, /[ \t]+/); print u[1]; exit }
    }' "$f")
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" && $0 !~ /-security/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' /etc/apt/sources.list)
fi
[ -n "$mirror" ] || die "no Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || die "missing $keyring (package debian-archive-keyring)"

aptdir="$cache/apt"
mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial"
: >"$aptdir/status"
all_suites=trixie,forky,sid
for s in all ${all_suites//,/ }; do
  suites=$s
  [ "$s" = all ] && suites=${all_suites//,/ }
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
    "$mirror" "$suites" "$keyring" >"$aptdir/$s.sources"
done
apt_opts() { # suite|all
  printf '%s\n' \
    -o "Dir::Etc::sourcelist=$aptdir/$1.sources" -o Dir::Etc::sourceparts=/dev/null \
    -o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=/dev/null \
    -o "Dir::State::Lists=$aptdir/lists" -o "Dir::State::status=$aptdir/status" \
    -o "Dir::Cache=$aptdir/cache" -o "APT::Architecture=$arch" -o "APT::Architectures=$arch" \
    -o Acquire::Languages=none -o "APT::Sandbox::User=$(id -un)"
}
mapfile -t opts < <(apt_opts all)
apt-get "${opts[@]}" -qq update >"$aptdir/update.log" 2>&1 ||
  { cat "$aptdir/update.log" >&2; die "apt-get update (private lists in $aptdir) failed"; }

# ---------------------------------------------------------------------------------------------
for name in "${todo[@]}"; do
  start=$SECONDS
  read -r pkg pattern suites bin <<<"$(spec "$name")"
  suite="" version=""
  for s in ${suites//,/ }; do
    mapfile -t opts < <(apt_opts "$s")
    v=$(apt-cache "${opts[@]}" show "$pkg" 2>/dev/null | awk '/^Version:/ && !v { v = $2 } END { print v }')
    # shellcheck disable=SC2254
    case "$v" in $pattern) suite=$s version=$v; break ;; esac
  done
  [ -n "$suite" ] || die "$name: no $pkg $pattern in suites $suites (a suite moved on? pick another suite in spec())"
  # Dependency closure of the package within that one suite (Depends and Pre-Depends only).
  mapfile -t pkgs < <(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests \
    --no-conflicts --no-breaks --no-replaces --no-enhances "$pkg" | grep -v '^[ <]' | sort -u)
  [ ${#pkgs[@]} -gt 0 ] || die "$name: could not resolve the dependencies of $pkg in $suite"

  work="$cache/.work-$name"
  rm -rf "$work" "$cache/.new-$name"
  mkdir -p "$work" "$cache/.new-$name"
  (cd "$work" && apt-get "${opts[@]}" -qq download "${pkgs[@]/%//$suite}" >"$work/download.log" 2>&1) ||
    { cat "$work/download.log" >&2; die "$name: apt-get download failed"; }
  root="$cache/.new-$name"
  for deb in "$work"/*.deb; do
    dpkg-deb -x "$deb" "$root"
    # shellcheck disable=SC2016 # dpkg-deb's own ${field} syntax
    dpkg-deb --show --showformat='${Package} ${Version}\n' "$deb" >>"$root/.packages"
  done
  sort -o "$root/.packages" "$root/.packages"
  # Not needed to run the editors: documentation, manuals, translations (messages stay English).
  rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/locale" "$root/usr/share/lintian"
  # Symlinks in the packages that point at absolute system paths: point them into the root.
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case "$target" in /*) [ -e "$root$target" ] && ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link" ;; esac
  done < <(find "$root" -type l -print0)
  if [ "$pkg" = neovim ]; then
    # Neovim looks for its bundled tree-sitter parsers in <prefix of the executable>/lib/nvim,
    # and the executable it sees is the loader (<root>/usr/lib/<triplet>/ld-linux...), so the
    # prefix is <root>/usr/lib: give it the lib/nvim it looks for there.
    mkdir -p "$root/usr/lib/lib"
    ln -sfn ../nvim "$root/usr/lib/lib/nvim"
  fi
  [ -x "$root/$bin" ] || die "$name: $bin missing after extraction"
  [ -e "$root/usr/lib/$triplet/$loader" ] || die "$name: no $loader in the extracted libc6"
  echo "$pkg $version ($suite)" >"$root/.package"
  rm -rf "${cache:?}/${name:?}" "$work"
  mv "$root" "$cache/$name"
  write_wrapper "$name"
  got=$("$cache/bin/$name" --version | sed -n 1p) || die "$name: the wrapper does not run"
  echo "$name: fetched $pkg $version from $suite ($(wc -l <"$cache/$name/.packages") packages, $(du -sh "$cache/$name" | cut -f1)) in $((SECONDS - start))s -> .cache/editors/bin/$name ($got)"
done

# The package lists are only needed to fetch again (they are refreshed then): drop them.
rm -rf "$aptdir/lists" "$aptdir/cache"
