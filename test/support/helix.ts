// Driving the real Helix under tmux for the Helix end-to-end tests: a private HOME and XDG
// folders, a fixed 120x40 pane, keys sent with `tmux send-keys`, the screen read with
// `capture-pane`. Helix itself comes from test/support/editors.ts (findHelix).

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onPath, privateEditorEnv } from './editors.js';

export { privateEditorEnv };

export async function waitFor<T>(what: string, probe: () => T | undefined | false | null, timeoutMs = 15_000, onTimeout?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${onTimeout ? `\n${onTimeout()}` : ''}`);
}

/**
 * The environment that makes every fsync and fdatasync of a file whose path ends in `suffix`
 * (e.g. `/code.ini`) pause `ms` first, in the processes started with it (test/support/slow-fsync.c,
 * built with `cc` into `dir`): an editor's save then puts its bytes on the disk at once and ends
 * `ms` later, as on a loaded machine's disk.
 */
export function slowFsync(dir: string, suffix: string, ms: number): NodeJS.ProcessEnv {
  const lib = path.join(dir, 'slow-fsync.so');
  const source = fileURLToPath(new URL('./slow-fsync.c', import.meta.url));
  execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', lib, source, '-ldl'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return { LD_PRELOAD: lib, TAKEBACK_TEST_SLOW_FSYNC_SUFFIX: suffix, TAKEBACK_TEST_SLOW_FSYNC_MS: String(ms) };
}

/** One Helix in a tmux session of its own. */
export class HelixSession {
  readonly socket: string;
  readonly statusFile: string;
  private readonly tmux: string;
  private started = false;

  constructor(
    readonly hx: string,
    readonly base: string,
    readonly env: NodeJS.ProcessEnv,
    readonly name = 'hx',
  ) {
    const tmux = onPath('tmux');
    if (!tmux) throw new Error('Helix was found but tmux was not: apt-get install tmux (scripts/fetch-editors.sh does)');
    this.tmux = tmux;
    this.socket = path.join(base, `${name}.tmux`);
    this.statusFile = path.join(base, `${name}.status`);
  }

  run(...args: string[]): string {
    return execFileSync(this.tmux, ['-S', this.socket, ...args], { env: this.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** Starts `hx ARGS` in `cwd` (tmux 120x40, no user tmux.conf); the exit status lands in statusFile. */
  start(cwd: string, args: string[]): void {
    this.run(
      '-f', '/dev/null', 'new-session', '-d', '-s', this.name, '-x', '120', '-y', '40', '-c', cwd, '--',
      'sh', '-c', 'status=$1; shift; "$@"; echo $? > "$status"', 'sh', this.statusFile, this.hx, ...args,
    );
    this.started = true;
  }

  screen(): string {
    return this.run('capture-pane', '-p', '-t', this.name);
  }

  /** The status line (the one showing the mode). */
  statusLine(): string {
    return this.screen().split('\n').filter((l) => /\b(NOR|INS|SEL)\b/.test(l)).pop() ?? '';
  }

  /** The last line of the screen: messages from :echo and window/showMessage. */
  messageLine(): string {
    const lines = this.screen().replace(/\s+$/, '').split('\n');
    return lines.at(-1) ?? '';
  }

  /**
   * Sends keys. An Escape followed at once by another key reaches Helix as one Alt+key chord (the
   * terminal reads them together), so keys sent soon after an Escape wait a moment first.
   */
  keys(...k: string[]): void {
    this.settleAfterEscape();
    this.run('send-keys', '-t', this.name, ...k);
    if (k.at(-1) === 'Escape') this.escapeAt = Date.now();
  }

  type(text: string): void {
    this.settleAfterEscape();
    this.run('send-keys', '-t', this.name, '-l', text);
  }

  private escapeAt = 0;

  private settleAfterEscape(): void {
    const wait = this.escapeAt + 150 - Date.now();
    if (wait > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
  }

  /** Types `:command` and Enter. */
  command(text: string): void {
    this.type(`:${text}`);
    this.keys('Enter');
  }

  /**
   * `:w` (or `command`, e.g. `write-all`) of the buffer shown, which must be marked modified
   * (`[+]`), then waits until Helix has ended the save: the mark gone (Helix clears it only then;
   * the message line may already show the sidecar's word on the save instead of "written"). The
   * bytes on the disk, or the sidecar recording them, come before that end (Helix syncs the file
   * first); and a `:w` sent while an earlier save of its buffer has not ended is refused ("file
   * modified by an external process"), since Helix takes the file's time for its own only once a
   * save ends. So a save is waited for before the next edit or save.
   */
  async save(what: string, command = 'w'): Promise<void> {
    await this.waitScreen(`the buffer marked modified before :${command} (${what})`, () => /\[\+\]/.test(this.statusLine()));
    this.command(command);
    await this.waitScreen(`Helix to end the save (${what})`, () => !/\[\+\]/.test(this.statusLine()));
  }

  async waitScreen(what: string, re: RegExp | ((screen: string) => boolean), timeoutMs = 15_000): Promise<string> {
    const test = typeof re === 'function' ? re : (s: string) => re.test(s);
    return waitFor(
      what,
      () => {
        const s = this.screen();
        return test(s) ? s : undefined;
      },
      timeoutMs,
      () => `screen:\n${this.screen()}`,
    );
  }

  async normalMode(): Promise<void> {
    await this.waitScreen('normal mode', () => /\bNOR\b/.test(this.statusLine()));
  }

  /** `:q!` and waits for Helix to exit; returns its exit status. */
  async quit(): Promise<string> {
    this.keys('Escape');
    this.command('qa!');
    return waitFor('Helix to exit', () => existsSync(this.statusFile) && readFileSync(this.statusFile, 'utf8').trim(), 10_000);
  }

  stop(): void {
    if (!this.started) return;
    try {
      this.run('kill-server');
    } catch {
      // already gone with Helix
    }
    this.started = false;
  }
}

/** Writes `config.toml` for a test: quiet UI, plus `extra` (the key map under test). */
export function writeHelixConfig(file: string, extra = ''): void {
  writeFileSync(
    file,
    `theme = "default"

[editor]
auto-info = false
auto-pairs = false
auto-completion = false
auto-format = false
mouse = false
${extra}`,
  );
}

/**
 * An agent's turn as Claude Code reports it: every event goes through the hook entry point
 * (`takeback hook claude-code`, the event on stdin), and between PreToolUse and PostToolUse the
 * tool really runs (Edit replaces text in the file as Claude Code's Edit does; Bash runs the
 * command with sh in the workspace).
 */
export function claudeAgent(ws: string, env: NodeJS.ProcessEnv, hookRun: (event: unknown, opts: { cwd: string; env: NodeJS.ProcessEnv }) => { code: number | null; stderr: string }) {
  const session = '6f1c2d3e-0000-4000-8000-00000000e2e0';
  let n = 0;
  const send = (event: Record<string, unknown>) => {
    const r = hookRun({ session_id: session, transcript_path: path.join(String(env.HOME), '.claude', 'transcript.jsonl'), cwd: ws, permission_mode: 'acceptEdits', ...event }, { cwd: ws, env });
    if (r.code !== 0) throw new Error(`hook ${String(event.hook_event_name)}: exit ${r.code}\n${r.stderr}`);
  };
  return {
    prompt(text: string) {
      send({ hook_event_name: 'UserPromptSubmit', prompt: text });
    },
    edit(rel: string, oldString: string, newString: string) {
      const file = path.join(ws, rel);
      const input = { file_path: file, old_string: oldString, new_string: newString, replace_all: false };
      const id = `toolu_e2e_${++n}`;
      send({ hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: input, tool_use_id: id });
      const before = readFileSync(file, 'utf8');
      if (!before.includes(oldString)) throw new Error(`Edit: ${JSON.stringify(oldString)} is not in ${rel}`);
      writeFileSync(file, before.replace(oldString, newString));
      send({
        hook_event_name: 'PostToolUse',
        tool_name: 'Edit',
        tool_input: input,
        tool_response: { filePath: file, oldString, newString, originalFile: before, structuredPatch: [], userModified: false, replaceAll: false },
        tool_use_id: id,
      });
    },
    bash(command: string) {
      const id = `toolu_e2e_${++n}`;
      const input = { command, description: 'e2e' };
      send({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: input, tool_use_id: id });
      const out = execFileSync('sh', ['-c', command], { cwd: ws, env, encoding: 'utf8' });
      send({
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: input,
        tool_response: { stdout: out, stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
        tool_use_id: id,
      });
    },
    stop() {
      send({ hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'Done.' });
    },
  };
}
