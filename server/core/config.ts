import { readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * Limits and retention. Defaults: 5 MB per file; 10,000 files or 200 MB per workspace for
 * command capture, 200,000 files or 2 GB where a long-lived process makes the baseline in the
 * background; 30 days; 1 GB. Set them in
 * `$TAKEBACK_HOME/config.json` (same keys) or with the environment variables named below.
 */
export interface Config {
  /** Files larger than this (bytes) are not kept: a `too-large` capture gap. `TAKEBACK_MAX_FILE_BYTES`. */
  maxFileBytes: number;
  /** Past this many files a workspace keeps file-tool capture only. `TAKEBACK_MAX_WORKSPACE_FILES`. */
  maxWorkspaceFiles: number;
  /** Past this many kept bytes, likewise. `TAKEBACK_MAX_WORKSPACE_BYTES`. */
  maxWorkspaceBytes: number;
  /**
   * Where a long-lived process (the capture daemon, the sidecar) makes the workspace's baseline,
   * commands are captured up to this many files instead of `maxWorkspaceFiles`: a baseline past
   * `maxWorkspaceFiles` or `maxWorkspaceBytes` keeps the files' stats at once and their bytes in
   * the background, slice by slice. `TAKEBACK_MAX_BACKGROUND_FILES`.
   */
  maxBackgroundFiles: number;
  /** Likewise, in kept bytes, instead of `maxWorkspaceBytes`. `TAKEBACK_MAX_BACKGROUND_BYTES`. */
  maxBackgroundBytes: number;
  /** Folder names the command scan always skips, besides `.gitignore` rules. */
  excludeNames: string[];
  /**
   * Absolute real paths that no scan and no file tool capture ever look at, wherever they are:
   * the journal's home (`$TAKEBACK_HOME`), so that a home inside a workspace does not record
   * takeback's own store as the agent's changes, nor an undo delete from it. Set by
   * {@link loadConfig}, not by the config file.
   */
  excludePaths: string[];
  /** Change sets older than this many days expire (`takeback gc`, the sidecar). `TAKEBACK_RETENTION_DAYS`. */
  retentionDays: number;
  /** Past this many bytes of kept copies (all workspaces together) the oldest sets expire first. `TAKEBACK_MAX_JOURNAL_BYTES`. */
  maxJournalBytes: number;
}

/**
 * Folders skipped by name by the command scan: version control data, installed dependencies and
 * tools' caches — what a package manager or a tool makes again, never the person's work. One of
 * them that holds files git tracks (a committed `node_modules/`) is scanned after all (see
 * `ScanFilter`); version control folders never are.
 *
 * Build output (`dist/`, `build/`, `out/`, `target/`, `.next/`, `coverage/` …) is not among them:
 * outside git nothing says such a folder can be made again (a copied package's `dist/` may be all
 * there is), so it is scanned like any other; inside git, `.gitignore` decides, as for `git status`.
 */
export const DEFAULT_EXCLUDES = [
  '.git', '.hg', '.svn', '.jj',
  'node_modules', 'bower_components', '.venv', 'venv', '__pycache__', '.tox', '.mypy_cache', '.pytest_cache',
  '.turbo', '.parcel-cache', '.gradle', '.cache',
];

export const DEFAULT_CONFIG: Config = {
  maxFileBytes: 5 * 1024 * 1024,
  maxWorkspaceFiles: 10_000,
  maxWorkspaceBytes: 200 * 1024 * 1024,
  maxBackgroundFiles: 200_000,
  maxBackgroundBytes: 2 * 1024 * 1024 * 1024,
  excludeNames: DEFAULT_EXCLUDES,
  excludePaths: [],
  retentionDays: 30,
  maxJournalBytes: 1024 * 1024 * 1024,
};

export { takebackHome } from './home.js';

function envNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** The real path of `path`, or of its parent with its name when it does not exist yet (a home not made yet). */
function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(resolve(path))), basename(path));
    } catch {
      return resolve(path);
    }
  }
}

/** Reads `$TAKEBACK_HOME/config.json` (if any) over the defaults, then the environment over both. */
export function loadConfig(home: string, env: NodeJS.ProcessEnv = process.env): Config {
  let file: Partial<Config> = {};
  try {
    file = JSON.parse(readFileSync(join(home, 'config.json'), 'utf8')) as Partial<Config>;
  } catch {
    // No config file, or an unreadable one: the defaults stand.
  }
  const cfg: Config = { ...DEFAULT_CONFIG, ...file, excludePaths: [realPathOf(home)] };
  cfg.maxFileBytes = envNumber(env, 'TAKEBACK_MAX_FILE_BYTES') ?? cfg.maxFileBytes;
  cfg.maxWorkspaceFiles = envNumber(env, 'TAKEBACK_MAX_WORKSPACE_FILES') ?? cfg.maxWorkspaceFiles;
  cfg.maxWorkspaceBytes = envNumber(env, 'TAKEBACK_MAX_WORKSPACE_BYTES') ?? cfg.maxWorkspaceBytes;
  cfg.maxBackgroundFiles = envNumber(env, 'TAKEBACK_MAX_BACKGROUND_FILES') ?? cfg.maxBackgroundFiles;
  cfg.maxBackgroundBytes = envNumber(env, 'TAKEBACK_MAX_BACKGROUND_BYTES') ?? cfg.maxBackgroundBytes;
  cfg.retentionDays = envNumber(env, 'TAKEBACK_RETENTION_DAYS') ?? cfg.retentionDays;
  cfg.maxJournalBytes = envNumber(env, 'TAKEBACK_MAX_JOURNAL_BYTES') ?? cfg.maxJournalBytes;
  return cfg;
}
