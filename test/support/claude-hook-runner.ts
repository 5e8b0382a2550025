// Runs the hooks a Claude Code settings file holds for one event the way Claude Code 2.1 does
// (see test/http-hooks.test.ts and, for the real thing, test/claude-http-e2e.test.ts): every
// entry whose group's matcher matches the tool at once — http entries POSTed as JSON with their
// headers, command entries run by bash with the event on stdin — and waits for all of them.
// SessionStart goes to command hooks only (Claude Code sends it to no http hook).
import { spawn } from 'node:child_process';
import fs from 'node:fs';

/** What each hook of the event did, and how long the event took in all (ms). */
export interface HookRun {
  ms: number;
  http: { status: number | null; body: string; error?: string }[];
  commands: { code: number | null; stdout: string; stderr: string }[];
}

function matches(matcher: string | undefined, tool: string | undefined): boolean {
  if (!matcher || matcher === '*') return true;
  return tool !== undefined && new RegExp(`^(?:${matcher})$`).test(tool);
}

async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<HookRun['http'][number]> {
  try {
    const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(timeoutMs) });
    return { status: r.status, body: await r.text() };
  } catch (e) {
    return { status: null, body: '', error: String((e as Error).cause ?? e) };
  }
}

function command(cmd: string, stdin: string, cwd: string, env: NodeJS.ProcessEnv): Promise<HookRun['commands'][number]> {
  return new Promise((resolve) => {
    const p = spawn('bash', ['-c', cmd], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.stdin.on('error', () => {}); // a hook that does not read its stdin
    p.stdin.end(stdin);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Fires `event` at the hooks of the settings file `settingsFile`, in `cwd` with `env`. */
export async function fireHooks(settingsFile: string, event: { hook_event_name: string; tool_name?: string }, cwd: string, env: NodeJS.ProcessEnv): Promise<HookRun> {
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
  const groups: any[] = settings.hooks?.[event.hook_event_name] ?? [];
  const body = JSON.stringify(event);
  const t0 = performance.now();
  const http: Promise<HookRun['http'][number]>[] = [];
  const commands: Promise<HookRun['commands'][number]>[] = [];
  for (const g of groups) {
    if (!matches(g.matcher, event.tool_name)) continue;
    for (const h of g.hooks ?? []) {
      if (h.type === 'http' && event.hook_event_name !== 'SessionStart') http.push(post(h.url, h.headers ?? {}, body, (h.timeout ?? 60) * 1000));
      else if (h.type === 'command') commands.push(command(h.command, body, cwd, env));
    }
  }
  const [h, c] = await Promise.all([Promise.all(http), Promise.all(commands)]);
  return { ms: performance.now() - t0, http: h, commands: c };
}
