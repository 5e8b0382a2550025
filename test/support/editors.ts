// Where the real editors are, for the end-to-end tests of the editor clients.
//
// Order, per editor:
//   Neovim 0.10 / 0.12: $NVIM_0_10 / $NVIM_0_12 (taken as given), then $NVIM if it is an
//     executable whose version matches (inside Neovim's :terminal, $NVIM is the parent's RPC
//     socket, not a program: that is why it is checked), then the wrapper that
//     scripts/fetch-editors.sh writes into .cache/editors/bin/, then `nvim` on PATH if its
//     version matches.
//   Helix: $HX (taken as given), then the cache wrapper, then `hx` on PATH if it reports
//     helix 25.07 or newer (on some systems `hx` is a hex editor).
//   Vim: $VIM_BIN (taken as given; $VIM is Vim's own runtime folder), then `vim` on PATH if it
//     is Vim 9.0 or newer built with channels and jobs (the plugin's LSP channel needs both).
//   Emacs: $EMACS if it is an executable (an old Emacs sets EMACS=t in its shells), then `emacs` on PATH if it is Emacs 27 or newer.
// Answers are cached for the life of the process.

import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isExecutableFile, onPath } from './path-lookup.js';

export { onPath };

export type NvimVersion = '0.10' | '0.12';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const editorsCacheBin = path.join(repoRoot, '.cache', 'editors', 'bin');

const cache = new Map<string, string | undefined>();

function memo(key: string, find: () => string | undefined): string | undefined {
  if (!cache.has(key)) cache.set(key, find());
  return cache.get(key);
}

/** The first line that `bin --version` prints, or undefined if it does not run. */
export function versionLine(bin: string): string | undefined {
  try {
    const out = execFileSync(bin, ['--version'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return out.split('\n')[0]?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** "NVIM v0.10.4" -> [0, 10, 4]; "helix 25.07.1 (abc)" -> [25, 7, 1]. */
export function parseVersion(line: string | undefined, program: 'nvim' | 'helix'): number[] | undefined {
  if (!line) return undefined;
  const re = program === 'nvim' ? /^NVIM v(\d+)\.(\d+)\.(\d+)/ : /^helix (\d+)\.(\d+)(?:\.(\d+))?/;
  const m = re.exec(line);
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

function nvimMatches(bin: string, version: NvimVersion): boolean {
  const v = parseVersion(versionLine(bin), 'nvim');
  return v !== undefined && `${v[0]}.${v[1]}` === version;
}

function helixRecentEnough(bin: string): boolean {
  const v = parseVersion(versionLine(bin), 'helix');
  return v !== undefined && (v[0]! > 25 || (v[0] === 25 && v[1]! >= 7));
}

/** A Neovim of the given minor version, or undefined when none can be found. */
export function findNvim(version: NvimVersion): string | undefined {
  return memo(`nvim-${version}`, () => {
    const explicit = process.env[version === '0.10' ? 'NVIM_0_10' : 'NVIM_0_12'];
    if (explicit) return explicit;
    const generic = process.env.NVIM;
    if (generic && isExecutableFile(generic) && nvimMatches(generic, version)) return generic;
    const cached = path.join(editorsCacheBin, `nvim-${version}`);
    if (isExecutableFile(cached)) return cached;
    const fromPath = onPath('nvim');
    if (fromPath && nvimMatches(fromPath, version)) return fromPath;
    return undefined;
  });
}

/** Helix 25.07 or newer, or undefined when none can be found. */
export function findHelix(): string | undefined {
  return memo('hx', () => {
    const explicit = process.env.HX;
    if (explicit) return explicit;
    const cached = path.join(editorsCacheBin, 'hx');
    if (isExecutableFile(cached)) return cached;
    const fromPath = onPath('hx');
    if (fromPath && helixRecentEnough(fromPath)) return fromPath;
    return undefined;
  });
}

/** "VIM - Vi IMproved 9.0 (2022 Jun 28, …)" and its feature list -> true for a Vim 9 with channels and jobs. */
export function vimUsable(versionText: string | undefined): boolean {
  const m = /^VIM - Vi IMproved (\d+)\.(\d+)/.exec(versionText ?? '');
  return m !== null && Number(m[1]) >= 9 && /\+channel\b/.test(versionText!) && /\+job\b/.test(versionText!);
}

/** Vim 9.0 or newer with channels and jobs, or undefined when none can be found. */
export function findVim(): string | undefined {
  return memo('vim', () => {
    const explicit = process.env.VIM_BIN;
    if (explicit) return explicit;
    const fromPath = onPath('vim');
    if (!fromPath) return undefined;
    let text: string | undefined;
    try {
      text = execFileSync(fromPath, ['--version'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      return undefined;
    }
    return vimUsable(text) ? fromPath : undefined;
  });
}

/** "GNU Emacs 28.2" -> true for Emacs 27 or newer (jsonrpc.el is built in from 27). */
export function emacsUsable(line: string | undefined): boolean {
  const m = /^GNU Emacs (\d+)\./.exec(line ?? '');
  return m !== null && Number(m[1]) >= 27;
}

/** Emacs 27 or newer, or undefined when none can be found. */
export function findEmacs(): string | undefined {
  return memo('emacs', () => {
    // Only an executable: an old Emacs sets EMACS=t in the shells it runs.
    const explicit = process.env.EMACS;
    if (explicit && isExecutableFile(explicit)) return explicit;
    const fromPath = onPath('emacs');
    return fromPath && emacsUsable(versionLine(fromPath)) ? fromPath : undefined;
  });
}

/** Why an editor test is skipped: say how to get the editor. */
export function missingEditorMessage(editor: 'nvim-0.10' | 'nvim-0.12' | 'hx' | 'vim' | 'emacs'): string {
  if (editor === 'emacs') return 'Emacs 27+ not found: install it (apt-get install emacs-nox) or set EMACS';
  if (editor === 'vim') return 'Vim 9.0+ (with +channel +job) not found: install it (apt-get install vim) or set VIM_BIN';
  const env = editor === 'hx' ? 'HX' : editor === 'nvim-0.10' ? 'NVIM_0_10' : 'NVIM_0_12';
  const what = editor === 'hx' ? 'Helix 25.07+' : `Neovim ${editor.slice(5)}`;
  return `${what} not found: run scripts/fetch-editors.sh (fills .cache/editors/) or set ${env}`;
}

/**
 * An environment for a real editor under test: HOME and every XDG_* folder private to `base`, no
 * TAKEBACK_* of the caller's, and no leftovers of an editor or tmux the tests may run inside
 * (LD_LIBRARY_PATH must stay unset so children show the editor did not export one). The `node`
 * that children start is this one's. The sidecars and capture daemons the editor starts watch
 * with @parcel/watcher (`TAKEBACK_WATCHMAN=0`, as cleanEnv in ./takeback.ts): no editor test
 * starts the machine's Watchman service, which would outlive it. `extra` is laid over the result.
 */
export function privateEditorEnv(base: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['LD_LIBRARY_PATH', 'NVIM', 'NVIM_LISTEN_ADDRESS', 'NVIM_APPNAME', 'VIMRUNTIME', 'VIM', 'MYVIMRC', 'HELIX_RUNTIME', 'TMUX', 'TMUX_PANE', 'TERM']) {
    delete env[name];
  }
  for (const name of Object.keys(env)) if (name.startsWith('XDG_') || name.startsWith('TAKEBACK_')) delete env[name];
  const dirs: Record<string, string> = {
    HOME: 'home',
    XDG_CONFIG_HOME: 'config',
    XDG_DATA_HOME: 'data',
    XDG_STATE_HOME: 'state',
    XDG_CACHE_HOME: 'cache',
    XDG_RUNTIME_DIR: 'run',
    XDG_CONFIG_DIRS: 'config-dirs',
    XDG_DATA_DIRS: 'data-dirs',
  };
  for (const [name, sub] of Object.entries(dirs)) {
    const dir = path.join(base, sub);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    env[name] = dir;
  }
  env.PATH = [path.dirname(process.execPath), process.env.PATH ?? ''].join(path.delimiter);
  env.TAKEBACK_WATCHMAN = '0';
  return { ...env, ...extra };
}
