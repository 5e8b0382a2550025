import { spawn } from 'node:child_process';
import { isatty } from 'node:tty';
import { print } from './output.js';

/*
 * Long human output (`show`, `preview`) goes through a pager on a terminal, as git's does.
 */

/**
 * The pager command for this environment, or null for none: `TAKEBACK_PAGER`, else `PAGER`,
 * else `less`. An empty value or `cat` means no pager (as git reads them).
 */
export function pagerCommand(env: NodeJS.ProcessEnv = process.env): string | null {
  const chosen = env.TAKEBACK_PAGER ?? env.PAGER ?? 'less';
  const cmd = chosen.trim();
  return cmd === '' || cmd === 'cat' ? null : cmd;
}

/**
 * Writes `text` to standard output, through the pager when standard output is a terminal and
 * `enabled` (false for `--no-pager`). The pager runs under `sh -c` with the terminal as its
 * output, and with `LESS=FRX` and `LV=-c` when those are unset, so `less` quits at once for text
 * that fits one screen, keeps colours and leaves the text on the screen. Resolves when the pager
 * exits. A pager that cannot be started leaves the text written directly; a person quitting the
 * pager early is no error.
 */
export async function page(text: string, enabled: boolean, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const cmd = enabled && isatty(1) ? pagerCommand(env) : null;
  if (cmd === null) {
    print(text);
    return;
  }
  const childEnv = { ...env, LESS: env.LESS ?? 'FRX', LV: env.LV ?? '-c' };
  const shown = await new Promise<boolean>((resolve) => {
    let started = false;
    const child = spawn('/bin/sh', ['-c', cmd], { stdio: ['pipe', 'inherit', 'inherit'], env: childEnv });
    child.on('spawn', () => {
      started = true;
    });
    child.on('error', () => resolve(started));
    child.on('close', (code) => resolve(started && code !== 127));
    child.stdin.on('error', () => {}); // EPIPE: the person quit the pager before the end
    child.stdin.end(text);
  });
  if (!shown) print(text);
}
