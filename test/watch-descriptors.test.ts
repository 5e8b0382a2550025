// A watcher's subscription whose crawl fails leaves no descriptor open (core/scan/watch-subscribe.ts),
// and the watcher subscribes again (core/scan/watcher.ts).
// @parcel/watcher lists the whole tree before it subscribes, and when a folder it has listed is
// gone or swapped for a link by the time it opens it, its crawl throws with the root and each
// folder on its way still open. A real swapping loop (support/swapper) exchanges a workspace
// folder with a link while this process subscribes and unsubscribes, through the real library,
// until several subscriptions have failed so; then nothing of this process is open on the
// workspace, and a descriptor opened before the subscriptions with the crawl's very flags is
// still open (only the crawl's own are closed). And a real capture daemon whose watcher's first
// crawl fails at a folder (forced, support/fail-crawl) holds nothing of it, subscribes again, and
// its scans are then given the watcher's hints.
import fs, { closeSync, constants, fstatSync, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { subscribeWatch, type Parcel } from '../server/core/scan/watch-subscribe.js';
import { bashCall, handledBy, quiet, startDaemon, warmUntil } from './support/daemon.js';
import { failCrawlEnv, failCrawlLibrary } from './support/fail-crawl.js';
import { heldUnder, Swapper, swapperProgram } from './support/swapper.js';
import { hookAsync, hookLog, sandbox, setsOf, type Sandbox } from './support/takeback.js';

const swapProgram = swapperProgram();

const parcel = createRequire(import.meta.url)('@parcel/watcher') as Parcel;

const failCrawl = failCrawlLibrary();

const SESSION = 'fc7c4e00-0000-4000-8000-000000000001';

const ev = (sb: Sandbox, name: string, extra: object = {}) => ({ session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra });

/** How many scans were given a watcher's hints so far (the daemon's debug log). */
const hinted = (sb: Sandbox) => hookLog(sb).split('\n').filter((l) => l.includes('] watch: hints for ')).length;

describe('a watcher subscription whose crawl fails', () => {
  it('leaves no descriptor on the workspace, and closes none it did not open', async () => {
    const sb = sandbox();
    // Many folders under the swapped one: the crawl is inside it, opening them, as it swaps.
    for (let i = 0; i < 40; i++) sb.write(`sub/d${i}/f.txt`, `${i}\n`);
    sb.write('keep.txt', 'keep\n');
    const outside = `${sb.base}/outside`;
    mkdirSync(`${outside}/sub`, { recursive: true });
    writeFileSync(`${outside}/o.txt`, 'outside\n');
    symlinkSync(outside, sb.abs('swap'));
    // Open before any subscription, with the flags the crawl opens its folders with.
    const mine = openSync(sb.abs('sub/d0'), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const swapper = new Swapper(swapProgram(), sb.abs('sub'), sb.abs('swap'));
    // Failed in the crawl (a folder it listed could not be opened), and failed later (a folder gone
    // before the library watched it: nothing of the crawl is open then).
    let crawlFailed = 0;
    let otherwise = 0;
    let subscribed = 0;
    try {
      swapper.go();
      for (const until = Date.now() + 60_000; crawlFailed < 5 && Date.now() < until; ) {
        try {
          const sub = await subscribeWatch(parcel, sb.ws, () => {}, { backend: 'inotify' });
          subscribed++;
          await sub.unsubscribe();
        } catch (e) {
          if (/inotify_add_watch/.test((e as Error).message)) otherwise++;
          else crawlFailed++;
        }
      }
      await swapper.stop();
    } finally {
      await swapper.end();
    }
    // The race reached the crawl.
    expect(crawlFailed, `${subscribed} subscribed, ${otherwise} failed after the crawl`).toBeGreaterThan(0);
    const held = [...heldUnder(sb.ws), ...heldUnder(outside)].filter((h) => h.fd !== mine);
    try {
      expect(held, `${crawlFailed} subscriptions failed in the crawl`).toEqual([]);
      expect(fstatSync(mine).isDirectory()).toBe(true);
    } finally {
      closeSync(mine);
    }
  }, 120_000);
});

describe("a capture daemon whose watcher's first crawl fails", () => {
  it('holds none of its descriptors, subscribes again, and its scans are then given hints', async () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_WATCH_SYNC: 'always' } });
    for (let i = 0; i < 5; i++) sb.write(`src/d${i}/f.txt`, `${i}\n`);
    sb.write('top.txt', 'top\n');
    const mark = `${sb.base}/crawl-failed`;
    // The second folder the crawl opens (the first is the root itself): the root's descriptor and
    // its folder stream are open when it fails.
    const daemon = await startDaemon(sb, failCrawlEnv(failCrawl(), 2, mark));
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    quiet(await hookAsync(ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { cwd: sb.ws, env: sb.env }));
    await warmUntil(sb, ev, () => hinted(sb));
    expect(new Set(handledBy(sb).map((e) => e.pid))).toEqual(new Set([daemon.pid])); // every event by that daemon
    expect(fs.readFileSync(mark, 'utf8')).toBe(`${daemon.pid}\n`); // its first crawl failed, once
    expect(heldUnder(sb.ws, daemon.pid!)).toEqual([]);
    // What the hints name is recorded as a walk would record it.
    await bashCall(sb, ev, 'echo changed >> src/d3/f.txt');
    expect(setsOf(sb.json(['list'])).at(-1).files.map((f: any) => f.path)).toEqual(['src/d3/f.txt']);
  }, 180_000);
});
