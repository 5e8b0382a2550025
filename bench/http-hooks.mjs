// Claude Code's http hooks to the capture daemon (`takeback init claude-code --http`), fired as
// Claude Code fires them: for each event, the POST to the daemon and the command hook beside it
// (`sh -c`, AGENT_SHELL, running the shell test of http-hooks.ts's fallbackCommand) at once,
// waiting for both.
// What is timed is that wait: the latency the hooks add to a tool call inside a running agent.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { AGENT_SHELL, sleep } from './measure.mjs';

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts `takeback hook-daemon` serving http hooks on `port` for `env`'s TAKEBACK_HOME, and
 * waits until its ready file names it. Returns `{ child, token, fallback }`: the bearer token,
 * and the command hook `init --http` writes (from the built dist/).
 */
export async function startHttpDaemon({ node, bin, root, env, port }) {
  const child = spawn(node, [bin, 'hook-daemon'], { env: { ...env, TAKEBACK_HOOK_HTTP_PORT: String(port) }, stdio: 'ignore' });
  const ready = join(env.TAKEBACK_HOME, 'run', `http-${port}.pid`);
  for (let waited = 0; !(existsSync(ready) && readFileSync(ready, 'utf8').split(' ')[0] === String(child.pid)); waited += 50) {
    if (waited > 20_000) throw new Error('the capture daemon did not take http hooks');
    sleep(50);
  }
  const token = readFileSync(join(env.TAKEBACK_HOME, 'http-token'), 'utf8').trim();
  const { fallbackCommand } = await import(join(root, 'dist', 'server', 'agents', 'http-hooks.js'));
  const { tokenFingerprint } = await import(join(root, 'dist', 'server', 'daemon', 'http-token.js'));
  return { child, token, fallback: fallbackCommand(port, tokenFingerprint(token), (env) => `${env}NODE_EXTRA_CA_CERTS= ${node} ${bin} hook claude-code`) };
}

/** Runs hook command `cmd` as Claude Code does, `stdin` its event. */
function commandHook(cmd, stdin, cwd, env) {
  return new Promise((resolve, reject) => {
    const p = spawn(AGENT_SHELL, ['-c', cmd], { cwd, env, stdio: ['pipe', 'ignore', 'ignore'] });
    p.stdin.on('error', () => {});
    p.stdin.end(stdin);
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`command hook exited ${code}`))));
  });
}

/** Fires one event at both hooks at once; resolves to the ms until both are done. */
export async function fireEvent({ port, token, fallback, cwd, env }, event) {
  const body = JSON.stringify(event);
  const t0 = performance.now();
  await Promise.all([
    fetch(`http://127.0.0.1:${port}/takeback/hook/claude-code`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body }).then(async (r) => {
      await r.text();
      if (r.status !== 200) throw new Error(`http hook answered ${r.status}`);
    }),
    commandHook(fallback, body, cwd, env),
  ]);
  return performance.now() - t0;
}
