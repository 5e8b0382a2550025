// Helpers for the end-to-end tests of the Emacs package (clients/emacs) in a real Emacs: the
// ERT tests of clients/emacs/test/takeback-tests.el, one `emacs -Q --batch` per test with a
// workspace of its own, HOME, every XDG_* folder and TAKEBACK_HOME private, and
// `node bin/takeback.js serve` as the sidecar; and `emacs -nw` under tmux, driven by keys as a
// person would.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './editors.js';
import { newEditorCase, type EditorCase } from './editor-case.js';
import { TmuxSession } from './tmux.js';
import { BIN } from './nvim.js';

export const EMACS_DIR = path.join(repoRoot, 'clients', 'emacs');

export interface EmacsCase extends EditorCase {
  emacs: string;
}

/** A fresh case folder with a workspace (git) holding `files` (see newEditorCase). */
export function newEmacsCase(emacs: string, label: string, files: Record<string, string>): EmacsCase {
  return { emacs, ...newEditorCase('emacs', label, files) };
}

/** What the ERT tests read from EMACS_TEST_PARAMS (see takeback-tests.el). */
export function writeEmacsParams(c: EmacsCase, data: { agent: string; before: Record<string, string>; after: Record<string, string | null> }): string {
  const file = path.join(c.base, 'params.json');
  fs.writeFileSync(file, JSON.stringify({ cmd: [process.execPath, BIN, 'serve'], node: process.execPath, bin: BIN, workspace: c.workspace, ...data }));
  return file;
}

/**
 * Runs the ERT test `name` in `emacs -Q --batch` for the case. Resolves with its exit code and
 * output (ERT's report is on stderr).
 */
export async function runErt(c: EmacsCase, name: string, paramsFile: string, timeoutMs = 40_000): Promise<{ code: number | null; output: string }> {
  const args = [
    '-Q', '--batch',
    '-L', EMACS_DIR,
    '-l', path.join(EMACS_DIR, 'takeback.el'),
    '-l', path.join(EMACS_DIR, 'test', 'takeback-tests.el'),
    '--eval', `(ert-run-tests-batch-and-exit '(member ${name}))`,
  ];
  return new Promise((resolve) => {
    const child = spawn(c.emacs, args, { cwd: c.workspace, env: { ...c.env, EMACS_TEST_PARAMS: paramsFile }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => {
      out += `\n(killed after ${timeoutMs} ms)`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // nothing left
      }
      resolve({ code, output: out });
    });
  });
}

/** One `emacs -nw` in a tmux session of its own (120x40, no user tmux.conf), driven by keys. */
export class EmacsTmux extends TmuxSession {
  constructor(
    readonly c: EmacsCase,
    name = 'emacs',
  ) {
    super(c.env, c.base, name, 'Emacs');
  }

  /** Starts `emacs -nw -Q -l init.el ARGS` in the workspace; init.el loads takeback.el with this checkout's sidecar. */
  start(args: string[]): void {
    const init = path.join(this.c.base, 'init.el');
    fs.writeFileSync(
      init,
      [
        `(add-to-list 'load-path ${JSON.stringify(EMACS_DIR)})`,
        `(require 'takeback)`,
        `(setq takeback-command '(${[process.execPath, BIN, 'serve'].map((a) => JSON.stringify(a)).join(' ')}))`,
        `(setq inhibit-startup-screen t)`,
      ].join('\n') + '\n',
    );
    this.open(this.c.workspace, 120, 40, [this.c.emacs, '-nw', '-Q', '-l', init, ...args]);
  }

  /** M-x COMMAND RET. */
  mx(command: string): void {
    this.keys('M-x');
    this.type(command);
    this.keys('Enter');
  }
}
