// An undo or redo of a real takeback killed (SIGKILL) while it writes: the crash tests' one way of
// landing a kill inside the writing rather than before or after it.

import fs from 'node:fs';
import { tbSpawn, type Sandbox } from './takeback.js';

/** A whole number in [lo, hi). */
export const rand = (lo: number, hi: number): number => lo + Math.floor(Math.random() * (hi - lo));

/**
 * Runs `takeback <direction> <id>` in the sandbox and, given `killWithin`, kills it at a random
 * moment within that many ms of its first write to `watched` (an absolute path) after its
 * transaction record appeared in the journal folder. Resolves how it ended (an exit code or the
 * signal) and how long after that first write it ended (ms; 0 when it wrote nothing there).
 */
export async function killedStep(sb: Sandbox, direction: string, id: string, watched: string, killWithin?: number): Promise<{ how: unknown; writing: number }> {
  const child = tbSpawn([direction, id], { cwd: sb.ws, env: sb.env });
  let sawTxn = false;
  let firstWrite = 0;
  const txn = fs.watch(sb.journalDir(), (_ev, name) => {
    if (name && /^txn-[0-9a-f]+\.json$/.test(String(name))) sawTxn = true;
  });
  const writes = fs.watch(watched, () => {
    if (!sawTxn || firstWrite) return;
    firstWrite = Date.now();
    if (killWithin !== undefined) setTimeout(() => child.kill('SIGKILL'), rand(0, killWithin));
  });
  const how = await new Promise((r) => child.on('exit', (code, signal) => r(signal ?? code)));
  const writing = firstWrite ? Date.now() - firstWrite : 0;
  txn.close();
  writes.close();
  return { how, writing };
}
