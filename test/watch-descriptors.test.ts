// A watcher's subscription whose crawl fails leaves no descriptor open (core/scan/watch-subscribe.ts).
// @parcel/watcher lists the whole tree before it subscribes, and when a folder it has listed is
// gone or swapped for a link by the time it opens it, its crawl throws with the root and each
// folder on its way still open. A real swapping loop (support/swapper) exchanges a workspace
// folder with a link while this process subscribes and unsubscribes, through the real library,
// until several subscriptions have failed so; then nothing of this process is open on the
// workspace, and a descriptor opened before the subscriptions with the crawl's very flags is
// still open (only the crawl's own are closed).
import { closeSync, constants, fstatSync, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { subscribeWatch, type Parcel } from '../server/core/scan/watch-subscribe.js';
import { heldUnder, Swapper, swapperProgram } from './support/swapper.js';
import { sandbox } from './support/takeback.js';

const swapProgram = swapperProgram();

const parcel = createRequire(import.meta.url)('@parcel/watcher') as Parcel;

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
