// bin/takeback.js run as a command (as `takeback` on PATH is): its first lines start Node from
// /bin/sh with NODE_EXTRA_CA_CERTS emptied (Node 20 builds its CA store at start whenever it is
// set), and takeback puts the value back for every program it starts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sandbox } from './support/takeback.js';

describe('the takeback command (bin/takeback.js run by its #! line)', () => {
  it('passes arguments through as they are, through a link too', () => {
    const sb = sandbox();
    const link = path.join(sb.base, 'takeback');
    fs.symlinkSync(BIN, link);
    sb.write('a b.txt', 'one\n');
    const run = spawnSync(link, ['run', '--', 'sh', '-c', 'printf "%s|" "$@" > "a b.txt"', 'sh', 'x y', '', '$HOME', "it's"], { cwd: sb.ws, env: sb.env, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(sb.read('a b.txt').toString()).toBe("x y||$HOME|it's|");
    const v = spawnSync(link, ['--version'], { env: sb.env, encoding: 'utf8' });
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('starts Node without NODE_EXTRA_CA_CERTS, and gives the programs it runs the value back', () => {
    const sb = sandbox();
    const env = { ...sb.env, NODE_EXTRA_CA_CERTS: '/some/where/ca.pem' };
    // The command's parent is takeback's Node process: its environment as it was started, and the command's own.
    const script = 'tr "\\0" "\\n" < /proc/$PPID/environ | grep -E "^(NODE_EXTRA_CA_CERTS|TAKEBACK_CA_CERTS)=" > node-env.txt; echo "NODE_EXTRA_CA_CERTS=${NODE_EXTRA_CA_CERTS-unset} TAKEBACK_CA_CERTS=${TAKEBACK_CA_CERTS-unset}" > child-env.txt';
    if (!fs.existsSync('/proc/self/environ')) return; // no /proc: nothing to look at
    const r = spawnSync(BIN, ['run', '--', 'sh', '-c', script], { cwd: sb.ws, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(sb.read('node-env.txt').toString().split('\n').filter(Boolean).sort()).toEqual(['NODE_EXTRA_CA_CERTS=', 'TAKEBACK_CA_CERTS=/some/where/ca.pem']);
    expect(sb.read('child-env.txt').toString().trim()).toBe('NODE_EXTRA_CA_CERTS=/some/where/ca.pem TAKEBACK_CA_CERTS=unset');
    // Unset stays unset, and `node bin/takeback.js` leaves it alone.
    const { NODE_EXTRA_CA_CERTS: _, ...bare } = env;
    expect(spawnSync(BIN, ['run', '--', 'sh', '-c', script], { cwd: sb.ws, env: bare, encoding: 'utf8' }).status).toBe(0);
    expect(sb.read('child-env.txt').toString().trim()).toBe('NODE_EXTRA_CA_CERTS=unset TAKEBACK_CA_CERTS=unset');
    expect(spawnSync(process.execPath, [BIN, 'run', '--', 'sh', '-c', script], { cwd: sb.ws, env, encoding: 'utf8' }).status).toBe(0);
    expect(sb.read('node-env.txt').toString().trim()).toBe('NODE_EXTRA_CA_CERTS=/some/where/ca.pem');
    expect(sb.read('child-env.txt').toString().trim()).toBe('NODE_EXTRA_CA_CERTS=/some/where/ca.pem TAKEBACK_CA_CERTS=unset');
  });
});
