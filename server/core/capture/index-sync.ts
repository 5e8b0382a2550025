import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../engine.js';
import { ScanFilter } from '../scan/filter.js';
import { S_IFDIR, S_IFMT } from '../scan/lstat.js';
import type { PackedEntry } from '../scan/packed.js';
import { mainReader } from '../scan/stat-check.js';
import { fromWorkspacePath } from '../workspace.js';
import type { FileState, GapReason } from '../types.js';

/**
 * Brings the snapshot index up to date for `paths` (workspace-relative) whose new state takeback
 * already knows: a file tool's result, an undo's writes. Without this the next command's scan
 * would see those paths move and blame the command (or the turn) for them. Paths the scan does
 * not cover are left out, as are workspaces with no usable snapshot. Call inside a write
 * transaction.
 */
export function syncIndex(engine: Engine, changed: { path: string; state: FileState; gap?: GapReason | undefined }[]): void {
  const { journal, root, config } = engine;
  const meta = journal.snapshot.meta();
  if (!meta || meta.status !== 'ok' || changed.length === 0) return;
  const filter = new SkipCache(root, new ScanFilter(root, config.excludeNames, meta.trackedExcluded ?? []));
  // [mode, size, ino, mtimeMs, ctimeMs]: Node's `*Ms` values, as the packed index keeps them.
  const lstat = mainReader();
  const upserts: [string, PackedEntry][] = [];
  const deletes: string[] = [];
  for (let i = 0; i < changed.length; i++) {
    const path = changed[i]!.path;
    let state = changed[i]!.state;
    if (path.startsWith('/')) continue;
    const abs = absPath(root, path);
    if (!state.exists) {
      // A folder meant to go may still be there (not empty: left in place on purpose).
      const st = abs === null ? null : lstat(abs);
      if (st && (st[0]! & S_IFMT) === S_IFDIR) state = { exists: true, type: 'dir', mode: st[0]! & 0o7777 };
    }
    if (filter.skips(path, state.exists && state.type === 'dir')) continue;
    if (!state.exists) {
      deletes.push(path);
      continue;
    }
    const st = abs === null ? null : lstat(abs);
    if (!st) {
      deletes.push(path);
      continue;
    }
    upserts.push([
      path,
      {
        name: '',
        type: state.type,
        mode: state.mode,
        size: state.type === 'file' ? state.size : 0,
        mtimeMs: st[3]!,
        ctimeMs: st[4]!,
        ino: st[2]!,
        sha256: state.type === 'file' ? state.sha256 : null,
        git: null,
        target: state.type === 'symlink' ? state.target : null,
        gap: changed[i]!.gap ?? null,
      },
    ]);
  }
  journal.snapshot.updatePacked(upserts, deletes);
}

/** An empty or `..` segment, or a leading `/`: what `fromWorkspacePath` refuses (with a NUL). */
const NOT_INSIDE = /(?:^|\/)(?:\.\.)?(?:\/|$)/;

/**
 * The absolute path of workspace path `rel` (the file `fromWorkspacePath` names, without its
 * normalizing join when `rel` is plainly inside), or null when it is not a workspace path.
 */
function absPath(root: string, rel: string): string | null {
  if (!rel.includes('\0') && !NOT_INSIDE.test(rel)) return `${root}/${rel}`;
  try {
    return fromWorkspacePath(root, rel);
  } catch {
    return null;
  }
}

type RuleChain = ReturnType<ScanFilter['chainFor']>;

/**
 * `ScanFilter.skips` for many paths, with each folder's verdict and rule chain worked out once
 * for every path under it (a path is skipped when its folder is, or when its own name is
 * excluded or ignored by the rules of the folders above it). A folder's `.gitignore` is looked
 * for with a plain existence check first: most folders have none, and a failed read costs an
 * exception.
 */
export class SkipCache {
  private readonly dirs = new Map<string, { skipped: boolean; chain: RuleChain }>();

  constructor(
    private readonly root: string,
    private readonly filter: ScanFilter,
  ) {}

  /** True when the scan would skip workspace-relative `path` (see `ScanFilter.skips`). */
  skips(path: string, isDir: boolean): boolean {
    const k = path.lastIndexOf('/');
    const d = this.dir(k < 0 ? '' : path.slice(0, k));
    return d.skipped || this.filter.isExcluded(path.slice(k + 1), path) || this.filter.ignoredIn(d.chain, path, isDir);
  }

  /** Folder `dir` ('' for the root): whether it is skipped, and the rules that apply under it. */
  private dir(dir: string): { skipped: boolean; chain: RuleChain } {
    let r = this.dirs.get(dir);
    if (r) return r;
    if (dir === '') {
      r = { skipped: false, chain: this.filter.chainFor(['']) };
    } else {
      const k = dir.lastIndexOf('/');
      const name = dir.slice(k + 1);
      const p = this.dir(k < 0 ? '' : dir.slice(0, k));
      if (p.skipped || this.filter.isExcluded(name, dir) || this.filter.ignoredIn(p.chain, dir, true)) {
        r = { skipped: true, chain: p.chain };
      } else {
        // The file the filter would read (`join` only tidies a path that is not plainly inside).
        const rules = `${dir}/.gitignore`;
        if (!existsSync(NOT_INSIDE.test(rules) ? join(this.root, rules) : `${this.root}/${rules}`)) this.filter.noRulesIn(dir);
        const ig = this.filter.rulesOf(dir);
        r = { skipped: false, chain: ig ? [...p.chain, [dir, ig]] : p.chain };
      }
    }
    this.dirs.set(dir, r);
    return r;
  }
}
