// One terminal program in a tmux session of its own (no user tmux.conf, a private socket),
// driven by keys as a person types them: the part the Emacs and Vim cases share.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { onPath } from './editors.js';
import { waitFor } from './helix.js';

/** A tmux session named `name` whose socket lives under `base`, run with `env`. */
export class TmuxSession {
  readonly socket: string;
  private readonly tmux: string;
  private started = false;

  /** `program` names what runs in it, for the error when tmux itself is missing. */
  constructor(
    private readonly env: NodeJS.ProcessEnv,
    base: string,
    readonly name: string,
    program: string,
  ) {
    const tmux = onPath('tmux');
    if (!tmux) throw new Error(`${program} was found but tmux was not: apt-get install tmux`);
    this.tmux = tmux;
    this.socket = path.join(base, `${name}.tmux`);
  }

  /** tmux `args` on this session's socket; its stdout. Throws when tmux fails. */
  run(...args: string[]): string {
    return execFileSync(this.tmux, ['-S', this.socket, ...args], { env: this.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** Starts `argv` in folder `cwd` on a screen of `width` × `height` cells. */
  protected open(cwd: string, width: number, height: number, argv: string[]): void {
    this.run('-f', '/dev/null', 'new-session', '-d', '-s', this.name, '-x', String(width), '-y', String(height), '-c', cwd, '--', ...argv);
    this.started = true;
  }

  /** What the pane shows now. */
  screen(): string {
    return this.run('capture-pane', '-p', '-t', this.name);
  }

  /** Keys as tmux names them (`Enter`, `C-c`, `M-x`, …). */
  keys(...k: string[]): void {
    this.run('send-keys', '-t', this.name, ...k);
  }

  /** `text` typed literally. */
  type(text: string): void {
    this.run('send-keys', '-t', this.name, '-l', text);
  }

  /** Waits up to `timeoutMs` for the screen to match `re`; the screen then. Fails naming `what`, with the screen. */
  async waitScreen(what: string, re: RegExp, timeoutMs = 15_000): Promise<string> {
    return waitFor(what, () => (re.test(this.screen()) ? this.screen() : undefined), timeoutMs, () => `screen:\n${this.screen()}`);
  }

  /** Ends the session (and the program in it), if it was started. */
  stop(): void {
    if (!this.started) return;
    try {
      this.run('kill-server');
    } catch {
      // already gone with the program
    }
    this.started = false;
  }
}
