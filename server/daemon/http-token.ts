import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tokenFile } from './http-address.js';

/** The token's fingerprint: the first 16 hex digits of its SHA-256 (not a secret: it names the token in ready files and hook commands). */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

/**
 * The bearer token the http hooks send and the capture daemon requires:
 * `$TAKEBACK_HOME/http-token`, made when missing (0600; 32 random bytes, written as 64 hex
 * digits). Throws only when the home cannot be written.
 */
export function httpToken(home: string): string {
  const file = tokenFile(home);
  try {
    const t = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{64}$/.test(t)) return t;
  } catch {
    // made below
  }
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const t = randomBytes(32).toString('hex');
  writeFileSync(file, `${t}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return t;
}
