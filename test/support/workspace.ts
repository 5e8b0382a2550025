// Scratch folders, git and the takeback command line, for the tests that drive real agent CLIs
// (test/*-harness.test.ts and test/*-e2e.test.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { BIN } from './takeback.js';
import { changedPaths, readTree, treeDiff, type Tree } from './trees.js';

/** A new temporary folder, by its real path: on macOS os.tmpdir() is behind a symlink, and the agents report real paths. */
export async function mkTemp(prefix: string): Promise<string> {
  return fs.realpathSync(await fs.promises.mkdtemp(path.join(os.tmpdir(), prefix)));
}

/**
 * The folders of one run of an agent: a workspace, the agent's private home, and a folder aside
 * (outside the workspace) for hook loggers: `takeback-<agent>-work-...`, `-home-...`, `-aside-...`.
 */
export async function runFolders(agent: string): Promise<{ work: string; home: string; aside: string }> {
  return { work: await mkTemp(`takeback-${agent}-work-`), home: await mkTemp(`takeback-${agent}-home-`), aside: await mkTemp(`takeback-${agent}-aside-`) };
}

/** The files each harness's session starts from: notes.md, f.txt, x and z. */
export function seedHarnessFiles(work: string): void {
  fs.writeFileSync(path.join(work, 'notes.md'), '# Notes\n\nThe quick brown fox.\n');
  fs.writeFileSync(path.join(work, 'f.txt'), 'a cat sat\n');
  fs.writeFileSync(path.join(work, 'x'), 'x contents\n');
  fs.writeFileSync(path.join(work, 'z'), 'z contents\n');
}

/** Removes these folders (and what is in them); undefined ones are passed over. */
export function rmAll(...dirs: (string | undefined)[]): void {
  for (const d of dirs) if (d) fs.rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

/** A global git config that does not exist: git reads nothing of the user's. */
const NO_GIT_CONFIG = path.join(os.tmpdir(), `takeback-e2e-no-gitconfig-${process.pid}`);

/** Runs git in `cwd` with a fixed identity and none of the user's or the system's config; returns stdout, throws if it fails. */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=takeback e2e', '-c', 'user.email=e2e@takeback.invalid', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args],
    { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: NO_GIT_CONFIG } },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/**
 * A scratch workspace of real source nobody here wrote: a copy of the package folder `source`
 * (out of node_modules), plus a symbolic link `link.name` -> `link.target`, committed to a new
 * git repository with `message`.
 */
export async function scratchWorkspace(prefix: string, source: string, link: { name: string; target: string }, message: string): Promise<string> {
  const work = await mkTemp(prefix);
  fs.cpSync(source, work, { recursive: true });
  fs.symlinkSync(link.target, path.join(work, link.name));
  git(work, 'init', '-q');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', message);
  return work;
}

/**
 * takeback's own installer writes the hooks: `takeback init <agent>` for each agent in `work`
 * (journal in `tbHome`; throws if one fails), then what git sees of that is committed with `message`.
 */
export function takebackInit(work: string, tbHome: string, agents: string[], message = 'takeback hooks'): void {
  for (const agent of agents) {
    const r = spawnSync(process.execPath, [BIN, 'init', agent], { cwd: work, env: { ...process.env, TAKEBACK_HOME: tbHome, NO_COLOR: '1' }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`takeback init ${agent} failed: ${r.stdout}${r.stderr}`);
  }
  git(work, 'add', '-A');
  // Claude Code's hooks go to its settings for one person, which git does not see: the commit may be empty.
  git(work, 'commit', '-q', '--allow-empty', '-m', message);
}

/**
 * Expects `hooks` (an agent's hooks settings, by event) to be exactly `expected`: each event
 * with one group, of that matcher, whose hooks `checkHooks` checks; and one command for all of
 * them, which it returns.
 */
export function expectHookGroups(hooks: Record<string, any>, expected: [string, string | undefined][], checkHooks: (hooks: any[], event: string) => void): string {
  expect(Object.keys(hooks).sort()).toEqual(expected.map(([e]) => e).sort());
  const commands = new Set<string>();
  for (const [event, matcher] of expected) {
    const groups = hooks[event];
    expect(groups, event).toHaveLength(1);
    expect(groups[0].matcher, event).toBe(matcher);
    checkHooks(groups[0].hooks, event);
    commands.add(groups[0].hooks[0].command);
  }
  expect(commands.size).toBe(1);
  return [...commands][0]!;
}

/** What one takeback command gave; `json` is stdout parsed when the command had --json. */
export interface Cli {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** How long each takeback command took. */
export type Timings = { what: string; ms: number }[];

/** Runs the takeback command line with `args` and expects the exit code `expectCode` (default 0). */
export type Tb = (args: string[], expectCode?: number) => Cli;

/**
 * What an end-to-end test uses on its workspace `ws()` and journal `tbHome()`: `tb` runs the
 * takeback command line there (timing each run into `timings`), and the checks.
 */
export function e2eHelpers(ws: () => string, tbHome: () => string, timings: Timings) {
  const tb: Tb = (args, expectCode = 0) => {
    const started = Date.now();
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ws(), env: { ...process.env, TAKEBACK_HOME: tbHome(), NO_COLOR: '1' }, encoding: 'utf8' });
    timings.push({ what: args.join(' '), ms: Date.now() - started });
    let json: any;
    if (args.includes('--json')) {
      try {
        json = JSON.parse(r.stdout);
      } catch {
        /* left undefined; the assertion below shows stdout */
      }
    }
    expect(r.status, `takeback ${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(expectCode);
    return { code: r.status, stdout: r.stdout, stderr: r.stderr, json };
  };
  /** Every change set's state ("applied", "undone", ...) by set id, from `takeback list --json`. */
  const states = () => new Map<string, string>(tb(['list', '--json']).json.sets.map((s: any) => [s.id, s.state]));
  return {
    tb,
    states,
    /** Expects the workspace on disk to be `expected`, byte for byte (the differences are the message). */
    expectTree: (expected: Tree, what: string) => expect(treeDiff(readTree(ws()), expected), what).toEqual([]),
    /** Expects every change set to be in `state`. */
    expectAllSets: (state: string) => expect([...states().values()].every((s) => s === state)).toBe(true),
    /**
     * Expects `takeback preview <selector> --json` to find no conflict and name exactly the paths
     * that differ between `before` and `now` (the workspace as it is), and to write nothing.
     */
    expectPreview: (selector: string[], before: Tree, now: Tree) => {
      const preview = tb(['preview', ...selector, '--json']).json;
      expect(preview.conflicts).toBe(0);
      expect(preview.files.map((f: any) => f.path).sort()).toEqual(changedPaths(before, now));
      expect(treeDiff(readTree(ws()), now), 'preview writes nothing').toEqual([]);
    },
    /** Expects git to see the committed tree: nothing changed since the commit. */
    expectGitClean: () => expect(git(ws(), 'status', '--porcelain'), 'git sees the committed tree').toBe(''),
  };
}

/**
 * Expects `sets` (of `list`, from `takeback list --json`) to be, one for one, of the turns and
 * sources in `expected`, all by `agent` in `session` and applied; the whole listing is the message.
 */
export function expectAppliedSets(list: any, sets: any[], agent: string, session: string | undefined, expected: { turn: string; source: object }[]): void {
  expect(
    sets.map((s: any) => ({ turn: s.turn, agent: s.agent, session: s.session, source: s.source, state: s.state })),
    JSON.stringify(list.sets, null, 1),
  ).toEqual(expected.map(({ turn, source }) => ({ turn, agent, session, source, state: 'applied' })));
}

/** Prints how many takeback commands ran, for how long in all, and the slowest, after `label` (e.g. "[claude-e2e]"). */
export function reportTimings(label: string, timings: Timings): void {
  if (!timings.length) return;
  const total = timings.reduce((a, t) => a + t.ms, 0);
  const slowest = timings.reduce((a, b) => (b.ms > a.ms ? b : a));
  console.info(`${label} ${timings.length} takeback commands, ${total} ms in all, slowest ${slowest.ms} ms (takeback ${slowest.what})`);
}
