import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';

/**
 * Which workspace paths the command scan looks at. A path is skipped when one of its segments is
 * an always-excluded name (`.git`, `node_modules`, build output: see `config.ts`) or when the
 * `.gitignore` files on its way (and `.git/info/exclude`) ignore it. Rules are read from each
 * folder's `.gitignore` once per filter and matched with the `ignore` package (git's rules);
 * a deeper file's `!negation` can take back a shallower rule, as in git.
 */
export class ScanFilter {
  private readonly excluded: Set<string>;
  private readonly rules = new Map<string, Ignore | null>();

  constructor(
    private readonly root: string,
    excludeNames: string[],
  ) {
    this.excluded = new Set(excludeNames);
  }

  /** True when `name` (one path segment) is always skipped. */
  isExcludedName(name: string): boolean {
    return this.excluded.has(name);
  }

  /** The rules of folder `dir` (workspace-relative, '' for the root), or null when it has none. */
  rulesOf(dir: string): Ignore | null {
    let r = this.rules.get(dir);
    if (r !== undefined) return r;
    r = null;
    const files = dir === '' ? ['.gitignore', join('.git', 'info', 'exclude')] : ['.gitignore'];
    for (const f of files) {
      let text: string;
      try {
        text = readFileSync(join(this.root, dir, f), 'utf8');
      } catch {
        continue;
      }
      r ??= ignore();
      r.add(text);
    }
    this.rules.set(dir, r);
    return r;
  }

  /**
   * True when workspace-relative `rel` is ignored by the `.gitignore` rules of the folders above
   * it (`parents`: those folders, outermost first, '' being the root). `isDir` adds git's
   * trailing slash so folder-only patterns (`build/`) apply.
   */
  ignoredBy(rel: string, isDir: boolean, parents: string[]): boolean {
    let ignored = false;
    for (const dir of parents) {
      const ig = this.rulesOf(dir);
      if (!ig) continue;
      const sub = dir === '' ? rel : rel.slice(dir.length + 1);
      const r = ig.test(isDir ? `${sub}/` : sub);
      if (r.ignored) ignored = true;
      else if (r.unignored) ignored = false;
    }
    return ignored;
  }

  /** True when the scan would skip `rel` (any of its folders excluded or ignored, or itself). */
  skips(rel: string, isDir: boolean): boolean {
    const segs = rel.split('/');
    const parents: string[] = [''];
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i]!;
      if (this.isExcludedName(seg)) return true;
      const sub = segs.slice(0, i + 1).join('/');
      const last = i === segs.length - 1;
      if (this.ignoredBy(sub, last ? isDir : true, parents.slice())) return true;
      parents.push(sub);
    }
    return false;
  }
}
