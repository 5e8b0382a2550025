import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { runDir } from './address.js';
import { tokenFile } from './http-address.js';

/**
 * The bearer token the http hooks send and the capture daemon requires:
 * `$TAKEBACK_HOME/run/http-token`, made when missing (0600 in a 0700 folder; 32 random bytes,
 * written as 64 hex digits). Throws only when the home cannot be written.
 */
export function httpToken(home: string): string {
  const file = tokenFile(home);
  try {
    const t = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{64}$/.test(t)) return t;
  } catch {
    // made below
  }
  mkdirSync(runDir(home), { recursive: true, mode: 0o700 });
  const t = randomBytes(32).toString('hex');
  writeFileSync(file, `${t}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return t;
}
