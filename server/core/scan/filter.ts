import { existsSync, lstatSync, readFileSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { Config } from '../config.js';

/** A rule file's stat in one string: when it moves, the rules may have. */
export function ruleStamp(st: Stats): string {
  return `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
}

/**
 * How the sync cookies of a watcher begin (scan/watcher.ts): `<prefix><pid>-<n>`, an empty file made
 * at the root of a workspace without a `.git` folder and removed as soon as the watcher hears it.
 */
export const WATCH_COOKIE_PREFIX = '.takeback-watch-cookie-';

/** takeback's cookie (above), or Watchman's (`.watchman-cookie-<host>-<pid>-<n>`, at a root it watches without a `.git`: scan/watchman.ts). */
const WATCH_COOKIE_NAME = /^\.(?:takeback-watch-cookie|watchman-cookie-[^/]+)-\d+-\d+$/;

/** True when workspace-relative `rel` is named as a watcher's sync cookie is (takeback's `<prefix><pid>-<n>` or Watchman's, at the root). */
export function isWatchCookie(rel: string): boolean {
  return WATCH_COOKIE_NAME.test(rel);
}

/**
 * True when workspace-relative `rel` is a watcher's sync cookie as a scan sees it: so named, and
 * an empty regular file (as every cookie is). A walk that lists the root mid-sync would otherwise
 * record it. A person's file of that name with bytes in it, or a link or folder, is theirs and
 * scanned as any other; only an empty one is left out, as a cookie would be.
 */
export function isWatchCookieFile(root: string, rel: string): boolean {
  if (!isWatchCookie(rel)) return false;
  try {
    const st = lstatSync(join(root, rel));
    return st.isFile() && st.size === 0;
  } catch {
    // Gone (a cookie removed once heard): nothing to record either way.
    return true;
  }
}

/** The file at the root of the git folder whose rules apply like a root `.gitignore`. */
export const INFO_EXCLUDE = '.git/info/exclude';

/**
 * Which of the absolute `paths` (real paths, as {@link Config.excludePaths}) lie inside workspace
 * `root` (a real path), as workspace-relative paths with `/` separators; the root itself is not
 * one of them.
 */
export function excludedIn(root: string, paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const r = relative(root, p);
    if (r === '' || r === '..' || r.startsWith(`..${sep}`) || isAbsolute(r)) continue;
    out.push(sep === '/' ? r : r.split(sep).join('/'));
  }
  return out;
}

/**
 * How many paths one folder's {@link FolderRules} test before their `ignore` instance is made
 * anew. The package keeps the verdict of every path it tests (and of each folder above it) for as
 * long as the instance lives, so a walk of a million files under a root `.gitignore` would hold a
 * million verdicts; renewed, the cache stays under this many paths, for one parse of the rules
 * per this many tests.
 */
export const RULES_CACHE_BOUND = 16_384;

/** A verdict of the rules on one path, as `Ignore.test` gives it. */
export type RulesVerdict = { ignored: boolean; unignored: boolean };

/** Tests the children of one folder by name (`isDir`: a folder, matched with git's trailing `/`). */
export type ChildTester = (name: string, isDir: boolean) => RulesVerdict;

/**
 * Which lines of rule texts match by a path's last segment alone, and how deep the others reach.
 * A pattern with no slash but a trailing one matches the last segment at any depth; one with a
 * slash at its start or in its middle is anchored to the rules' folder and, without `**`, matches
 * paths of exactly as many segments as it has (a `*` or `?` never crosses a slash). `basename`:
 * the texts' lines of the first kind, in their order; `depth`: the most segments a line of the
 * second kind has (0: none), Infinity when a line is not read here with certainty (a `**`, a
 * bracket, an escape, a carriage return, a byte order mark): then every path is matched whole.
 */
export function ruleDepths(texts: readonly string[]): { basename: string[]; depth: number } {
  const basename: string[] = [];
  let depth = 0;
  for (const text of texts) {
    if (text.charCodeAt(0) === 0xfeff) return { basename: [], depth: Infinity };
    for (const line of text.split('\n')) {
      // A comment is one whatever it holds (git's own exclude file comments out `*.[oa]`).
      if (line.startsWith('#')) continue;
      if (/[\r\\[]|\*\*/.test(line)) return { basename: [], depth: Infinity };
      let body = line.replace(/ +$/, '');
      if (body === '') continue;
      if (body.startsWith('!')) body = body.slice(1);
      if (body.endsWith('/')) body = body.slice(0, -1);
      if (body === '') return { basename: [], depth: Infinity };
      if (!body.includes('/')) {
        basename.push(line);
        continue;
      }
      const segments = (body.startsWith('/') ? body.slice(1) : body).split('/');
      if (segments.some((x) => x === '')) return { basename: [], depth: Infinity };
      depth = Math.max(depth, segments.length);
    }
  }
  return { basename, depth };
}

/**
 * One folder's rules (its `.gitignore`, at the root with `.git/info/exclude` after it), matched
 * with the `ignore` package: {@link test} answers as `Ignore.test` does (`{ ignored, unignored }`
 * for a path relative to the folder, `/`-separated, a trailing `/` for a folder).
 *
 * A walk asks about every child of a folder it lists: {@link childrenOf} answers for them with the
 * folder's own verdict taken once, and, for children deeper than any anchored line reaches
 * ({@link ruleDepths}), with only the lines that match by name, tested on the name (whose verdicts
 * repeat across folders: `index.ts`, `*.log`). The same verdict as {@link test} on the whole path:
 * a child of an ignored folder is ignored by it, and an anchored line cannot match a path of
 * another depth.
 */
export class FolderRules {
  private ig: Ignore;
  private tests = 0;
  /** The lines that match by name alone, as one text (null: none), and their instance. */
  private readonly baseText: string | null;
  private base: Ignore | null;
  private baseTests = 0;
  /** The most segments an anchored line has (Infinity: every path is matched whole). */
  private readonly depth: number;

  /** `texts`: the rule files' contents, in the order git reads them. */
  constructor(private readonly texts: readonly string[]) {
    this.ig = FolderRules.compile(texts);
    const d = ruleDepths(texts);
    this.depth = d.depth;
    this.baseText = d.basename.length > 0 ? d.basename.join('\n') : null;
    this.base = this.baseText === null ? null : FolderRules.compile([this.baseText]);
  }

  /** One `ignore` instance of `texts`, each added whole (an array's items would be taken as single patterns). */
  private static compile(texts: readonly string[]): Ignore {
    const ig = ignore();
    for (const t of texts) ig.add(t);
    return ig;
  }

  /** The verdict of these rules on `path` (relative to their folder). Throws as `Ignore.test` does on a path that is not relative. */
  test(path: string): RulesVerdict {
    if (++this.tests > RULES_CACHE_BOUND) {
      this.ig = FolderRules.compile(this.texts);
      this.tests = 1;
    }
    return this.ig.test(path);
  }

  /**
   * The verdicts of the lines that match by name alone, by name: of files and of folders (the
   * `ignore` package's own, kept here where a walk asks again for the names that repeat across
   * folders: `index.ts`, `mod0`), at most {@link RULES_CACHE_BOUND} of each.
   */
  private readonly named = [new Map<string, RulesVerdict>(), new Map<string, RulesVerdict>()];

  /** The verdict of the lines that match by name alone on `name` (`isDir`: a folder, tested with a trailing `/`). */
  private testName(name: string, isDir: boolean): RulesVerdict {
    if (!this.base) return NO_VERDICT;
    const known = this.named[isDir ? 1 : 0]!;
    let v = known.get(name);
    if (v) return v;
    if (++this.baseTests > RULES_CACHE_BOUND) {
      this.base = FolderRules.compile([this.baseText!]);
      this.baseTests = 1;
    }
    v = this.base.test(isDir ? `${name}/` : name);
    if (known.size >= RULES_CACHE_BOUND) known.clear();
    known.set(name, v);
    return v;
  }

  /**
   * The verdicts on the children of folder `sub` (relative to these rules' folder, '' for the
   * folder itself), each as {@link test} gives on `sub/name` (`name/` for a folder). `how`: its
   * {@link byName}, when the caller has it.
   */
  childrenOf(sub: string, how: RulesVerdict | 'name' | null = this.byName(sub)): ChildTester {
    const prefix = sub === '' ? '' : `${sub}/`;
    if (how === null) return (name, isDir) => this.test(isDir ? `${prefix}${name}/` : `${prefix}${name}`);
    if (how !== 'name') return () => how;
    return (name, isDir) => this.testName(name, isDir);
  }

  /**
   * How {@link childrenOf} answers for the children of folder `sub`: null when by their whole
   * paths (an anchored line reaches that deep), the folder's own verdict when it is ignored
   * (every child has it), else 'name' (by the name alone: the same verdict for a name in every
   * such folder). `ownIgnored`: whether these rules ignore `sub` itself, when the caller knows
   * (their verdict on it as a child of its folder); else they are asked.
   */
  byName(sub: string, ownIgnored?: boolean): RulesVerdict | 'name' | null {
    let childDepth = 1;
    for (let i = sub.indexOf('/'); i >= 0; i = sub.indexOf('/', i + 1)) childDepth++;
    if (sub !== '') childDepth++;
    if (childDepth <= this.depth) return null;
    if (sub === '' || ownIgnored === false) return 'name';
    if (ownIgnored === true) return IGNORED;
    const own = this.test(`${sub}/`);
    return own.ignored ? own : 'name';
  }
}

const NO_VERDICT: RulesVerdict = Object.freeze({ ignored: false, unignored: false });
const IGNORED: RulesVerdict = Object.freeze({ ignored: true, unignored: false });

/** What a walk asks of the rules about the children of one folder (see {@link ScanFilter.childRules}). */
export interface ChildRules {
  /** True when the child `name` is ignored (`isDir`: a folder). */
  ignored(name: string, isDir: boolean): boolean;
  /**
   * For a child folder `name` the rules keep: whether each rule file of the chain ignores it
   * itself, in the chain's order — what {@link ScanFilter.childRules} takes as `own` when that
   * folder's children are asked about.
   */
  ownOf(name: string): readonly boolean[];
  /**
   * Where the verdicts are by a child's name alone: {@link ignored}'s, kept by a walk's ids of
   * names, shared by every folder with the same rule files and verdicts of their own (null where
   * an anchored line reaches this deep: a child is asked by its whole path).
   */
  readonly byId: IdVerdicts | null;
}

/**
 * Verdicts of the rules on names, by the ids a walk gives names (listing.ts): two a name, as a
 * file (`2 * id`) and as a folder (`2 * id + 1`), each 0 (not asked yet), 1 (kept) or 2 (ignored).
 */
export class IdVerdicts {
  private v = new Uint8Array(256);

  /** The verdicts, room made for ids below `n` (a new array when it grows: take it again after). */
  fit(n: number): Uint8Array {
    if (this.v.length < 2 * n) {
      const v = new Uint8Array(Math.max(2 * n, 2 * this.v.length));
      v.set(this.v);
      this.v = v;
    }
    return this.v;
  }
}

const NOT_IGNORED_BY_ONE: readonly boolean[] = Object.freeze([false]);
const NONE: readonly boolean[] = Object.freeze([]);

/**
 * Which workspace paths the command scan looks at. A path is skipped when one of its segments is
 * an excluded name (`.git`, `node_modules`, build output: see `config.ts`) — unless git tracks
 * files in that folder (version control folders are skipped always) — or when the
 * `.gitignore` files on its way (and `.git/info/exclude`) ignore it. Rules are read from each
 * folder's `.gitignore` once per filter and matched with the `ignore` package (git's rules);
 * a deeper file's `!negation` can take back a shallower rule, as in git. The journal's home, when
 * it lies inside the workspace, is skipped always, with everything under it (`excludePaths`).
 */
export class ScanFilter {
  private readonly excluded: Set<string>;
  private readonly tracked: Set<string>;
  /** Workspace-relative paths skipped always (the journal's home inside the workspace). */
  readonly excludedPaths: readonly string[];
  private readonly rules = new Map<string, FolderRules | null>();
  /** The rule files read so far (workspace-relative) and their {@link ruleStamp}s. */
  readonly sources = new Map<string, string>();

  /**
   * `excludeNames`: folder names always skipped; `trackedExcluded`: folders of those names that
   * hold files git tracks (workspace-relative: `dist`, `pkg/build`), which are scanned after all
   * (see `trackedExcludedDirs` in git-index.ts); `excludePaths`: absolute real paths skipped
   * always ({@link Config.excludePaths}), of which those inside `root` apply.
   */
  constructor(
    private readonly root: string,
    excludeNames: string[],
    trackedExcluded: readonly string[] = [],
    excludePaths: readonly string[] = [],
  ) {
    this.excluded = new Set(excludeNames);
    this.tracked = new Set(trackedExcluded);
    this.excludedPaths = excludedIn(root, excludePaths);
  }

  /**
   * True when the entry `name` at workspace-relative `rel` is skipped for its name (and git tracks
   * nothing in it), is one of the paths skipped always, or is a watcher's sync cookie ({@link isWatchCookieFile}).
   */
  isExcluded(name: string, rel: string): boolean {
    return (this.excluded.has(name) && !this.tracked.has(rel)) || (this.excludedPaths.length > 0 && this.excludedPaths.includes(rel)) || (rel === name && isWatchCookieFile(this.root, name));
  }

  /** True when `name` is one of the excluded names (a folder of that name is skipped unless git tracks files in it: {@link isExcluded}). */
  isExcludedName(name: string): boolean {
    return this.excluded.has(name);
  }

  /**
   * {@link isExcluded} for the children of folder `dir` (workspace-relative, '' for the root), by
   * name: a child's path is made only for a name that is excluded, to ask whether git tracks
   * files in it. Null where only an excluded name can exclude a child (not the root, no path
   * skipped always in it): then a child is excluded when {@link isExcludedName} and
   * {@link isExcluded} say so.
   */
  excludedChildren(dir: string): ((name: string) => boolean) | null {
    const prefix = dir === '' ? '' : `${dir}/`;
    const { excluded, tracked } = this;
    let paths: Set<string> | null = null;
    for (const p of this.excludedPaths) {
      if (p.startsWith(prefix) && !p.includes('/', prefix.length)) (paths ??= new Set()).add(p.slice(prefix.length));
    }
    const root = dir === '' ? this.root : null;
    if (paths === null && root === null) return null;
    return (name) => (excluded.has(name) && !tracked.has(prefix + name)) || (paths !== null && paths.has(name)) || (root !== null && isWatchCookieFile(root, name));
  }

  /** Records that folder `dir` (not the root) has no `.gitignore`, as its listing showed. */
  noRulesIn(dir: string): void {
    if (dir !== '' && !this.rules.has(dir)) this.rules.set(dir, null);
  }

  /** The rules of folder `dir` (workspace-relative, '' for the root), or null when it has none. */
  rulesOf(dir: string): FolderRules | null {
    const known = this.rules.get(dir);
    if (known !== undefined) return known;
    const texts: string[] = [];
    const files = dir === '' ? ['.gitignore', INFO_EXCLUDE] : ['.gitignore'];
    for (const f of files) {
      const file = dir === '' ? f : `${dir}/${f}`;
      try {
        const text = readFileSync(join(this.root, file), 'utf8');
        this.sources.set(file, ruleStamp(lstatSync(join(this.root, file))));
        texts.push(text);
      } catch {
        continue;
      }
    }
    const r = texts.length > 0 ? new FolderRules(texts) : null;
    this.rules.set(dir, r);
    return r;
  }

  /**
   * True when workspace-relative `rel` is ignored by the `.gitignore` rules of the folders above
   * it (`parents`: those folders, outermost first, '' being the root). `isDir` adds git's
   * trailing slash so folder-only patterns (`build/`) apply.
   */
  ignoredBy(rel: string, isDir: boolean, parents: string[]): boolean {
    return this.ignoredIn(this.chainFor(parents), rel, isDir);
  }

  /**
   * The rules that apply under folder `dir` (workspace-relative; `ancestors`: it and the folders
   * above it, outermost first), as `[folder, rules]` pairs: only folders that have rules. Empty
   * when no `.gitignore` is on the way, and then nothing under `dir` need be matched at all.
   */
  chainFor(ancestors: string[]): [string, FolderRules][] {
    const out: [string, FolderRules][] = [];
    for (const d of ancestors) {
      const ig = this.rulesOf(d);
      if (ig) out.push([d, ig]);
    }
    return out;
  }

  /** {@link ignoredBy} with the rules of the folders on the way already gathered ({@link chainFor}). */
  ignoredIn(chain: [string, FolderRules][], rel: string, isDir: boolean): boolean {
    let ignored = false;
    for (const [dir, ig] of chain) {
      const sub = dir === '' ? rel : rel.slice(dir.length + 1);
      const r = ig.test(isDir ? `${sub}/` : sub);
      if (r.ignored) ignored = true;
      else if (r.unignored) ignored = false;
    }
    return ignored;
  }

  /**
   * The testers of the children of folder `dir` (workspace-relative) under `chain` (its
   * {@link chainFor}), for {@link ignoredChild}: the folder's part of each path worked out once.
   */
  childTesters(chain: [string, FolderRules][], dir: string): ChildTester[] {
    return chain.map(([d, ig]) => ig.childrenOf(d === dir ? '' : d === '' ? dir : dir.slice(d.length + 1)));
  }

  /** The {@link childRules} of folders whose rule files all answer by name alone, by those files' folders and how each answers (their verdicts kept by name). */
  private readonly byNameRules = new Map<string, ChildRules>();

  /**
   * The rules' verdicts on the children of folder `dir` under `chain` (its {@link chainFor}), as
   * {@link ignoredChild} gives them. `own[i]`: whether the rule file `chain[i]` (of a folder above
   * `dir`) ignores `dir` itself, when the caller knows it (the {@link ChildRules.ownOf} of `dir`
   * from its folder's listing); else each is asked. Where every rule file on the way answers by a
   * child's name alone (no anchored line reaches that deep), the verdict on a name is the same in
   * every folder the same rule files and verdicts of their own apply to, and is kept for them by
   * name (at most {@link RULES_CACHE_BOUND} names of each kind).
   */
  childRules(chain: [string, FolderRules][], dir: string, own?: readonly boolean[]): ChildRules {
    const hows: (RulesVerdict | 'name' | null)[] = new Array(chain.length);
    let key: string | null = '';
    for (let i = 0; i < chain.length; i++) {
      const [d, ig] = chain[i]!;
      const how = ig.byName(d === dir ? '' : d === '' ? dir : dir.slice(d.length + 1), own?.[i]);
      hows[i] = how;
      if (how === null) key = null;
      else if (key !== null) key += how === 'name' ? `${d}\0n\0` : `${d}\0${how.ignored ? 1 : 0}\0`;
    }
    // Answering by name alone, the same rule files answer alike in every folder: made once.
    const known = key === null ? undefined : this.byNameRules.get(key);
    if (known) return known;
    const testers: ChildTester[] = chain.map(([d, ig], i) => ig.childrenOf(d === dir ? '' : d === '' ? dir : dir.slice(d.length + 1), hows[i]));
    // A folder kept under one rule file is not ignored by it; under more, each is asked.
    const ownOf = (name: string): readonly boolean[] =>
      testers.length === 0 ? NONE : testers.length === 1 ? NOT_IGNORED_BY_ONE : testers.map((t) => t(name, true).ignored);
    if (key === null) return { ignored: (name, isDir) => this.ignoredChild(testers, name, isDir), ownOf, byId: null };
    const files = new Map<string, boolean>();
    const folders = new Map<string, boolean>();
    const made: ChildRules = {
      ignored: (name, isDir) => {
        const seen = isDir ? folders : files;
        let v = seen.get(name);
        if (v === undefined) {
          v = this.ignoredChild(testers, name, isDir);
          if (seen.size >= RULES_CACHE_BOUND) seen.clear();
          seen.set(name, v);
        }
        return v;
      },
      ownOf,
      byId: new IdVerdicts(),
    };
    if (this.byNameRules.size >= 1024) this.byNameRules.clear();
    this.byNameRules.set(key, made);
    return made;
  }


  /** {@link ignoredIn} for the child `name` of the folder whose {@link childTesters} `testers` are. */
  ignoredChild(testers: ChildTester[], name: string, isDir: boolean): boolean {
    let ignored = false;
    for (let i = 0; i < testers.length; i++) {
      const r = testers[i]!(name, isDir);
      if (r.ignored) ignored = true;
      else if (r.unignored) ignored = false;
    }
    return ignored;
  }

  /**
   * True when the scan would skip `rel` (any of its folders excluded or ignored, or itself). Each
   * folder's verdict and the rules under it are worked out once per filter, for every path asked
   * about below it (syncIndex asks about hundreds at once).
   */
  skips(rel: string, isDir: boolean): boolean {
    const k = rel.lastIndexOf('/');
    const d = this.folder(k < 0 ? '' : rel.slice(0, k));
    return d.skipped || this.isExcluded(rel.slice(k + 1), rel) || this.ignoredIn(d.chain, rel, isDir);
  }

  private readonly folders = new Map<string, { skipped: boolean; chain: [string, FolderRules][] }>();

  /** Folder `dir` ('' for the root): whether the scan skips it, and the rules that apply under it. */
  private folder(dir: string): { skipped: boolean; chain: [string, FolderRules][] } {
    let r = this.folders.get(dir);
    if (r) return r;
    if (dir === '') {
      r = { skipped: false, chain: this.chainFor(['']) };
    } else {
      const k = dir.lastIndexOf('/');
      const p = this.folder(k < 0 ? '' : dir.slice(0, k));
      if (p.skipped || this.isExcluded(dir.slice(k + 1), dir) || this.ignoredIn(p.chain, dir, true)) {
        r = { skipped: true, chain: p.chain };
      } else {
        // Most folders have no .gitignore: looked for first, as a failed read costs an exception.
        if (!existsSync(join(this.root, dir, '.gitignore'))) this.noRulesIn(dir);
        const ig = this.rulesOf(dir);
        r = { skipped: false, chain: ig ? [...p.chain, [dir, ig]] : p.chain };
      }
    }
    this.folders.set(dir, r);
    return r;
  }
}
