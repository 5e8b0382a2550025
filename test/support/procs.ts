// Processes and ports, for the tests of the capture daemon (hook-daemon, http hooks).
import net from 'node:net';
import { sleep } from './takeback.js';

/** True while process `pid` exists (a zombie too: that is what `kill -0` says). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until `cond` holds, polling every 50 ms; throws `timed out waiting for <what>` after `ms`. */
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A free loopback port (listened on and let go). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
