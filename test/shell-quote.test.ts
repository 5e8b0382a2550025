// shellQuote (server/cli/shell-quote.ts) writes each argument so that a real /bin/sh reads it
// back byte for byte: `run`'s recorded command line and the commands init writes into agents' and
// editors' settings depend on it.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../server/cli/shell-quote.js';

describe('shellQuote', () => {
  const args = ['plain', 'with space', "it's", '$HOME', '`id`', 'a"b', 'tab\there', 'new\nline', '', '*', 'x;y', 'a&b', '~', '--grace=10', 'user@host:/p,q%+', '-', "''", '\\'];

  it('a POSIX shell reads every quoted argument back as it was', () => {
    const script = `printf '%s\\0' ${args.map(shellQuote).join(' ')}`;
    const r = spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(args);
  });

  it('leaves an argument of safe characters as it is, and quotes the rest', () => {
    expect(shellQuote('/usr/bin/node')).toBe('/usr/bin/node');
    expect(shellQuote('--grace=10')).toBe('--grace=10');
    expect(shellQuote('with space')).toBe("'with space'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('')).toBe("''");
  });
});
