// Helpers for the end-to-end tests of the Vim plugin (clients/vim) in a real headless Vim.
//
// Each case runs one child Vim: `vim -N -u NONE -i NONE -n -es -S case.vim`, with HOME, every
// XDG_* folder and TAKEBACK_HOME private to the case, the plugin on the runtimepath, and
// `node bin/takeback.js serve` as the sidecar. The case script (vim9script) does its work with
// timeouts (Wait sleeps, and Vim handles the sidecar's messages while it sleeps) and writes what
// it saw to a JSON report that the test reads. The agent's side runs from inside that Vim too
// (`takeback run -- sh -c …` through system()), so buffers can be open before the agent changes
// their files, as they are for a person watching an agent work.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './editors.js';
import { newEditorCase, type EditorCase } from './editor-case.js';
import { TmuxSession } from './tmux.js';
import { BIN } from './nvim.js';

export const VIM_PLUGIN_DIR = path.join(repoRoot, 'clients', 'vim');

export interface VimCase extends EditorCase {
  vim: string;
}

/** A fresh case folder with a workspace (git) holding `files` (see newEditorCase). */
export function newVimCase(vim: string, label: string, files: Record<string, string>): VimCase {
  return { vim, ...newEditorCase('vim', label, files) };
}

export interface VimReport {
  /** v:exception and v:throwpoint when the script failed. */
  error?: string;
  /** `:messages` at the end. */
  messages: string;
  [key: string]: unknown;
}

// The harness every case script starts with. g:Out is the report; Wait(cond, ms) sleeps in steps
// of 10 ms until cond() holds; Agent(script) runs `sh -c script` in the workspace through
// `takeback run`, as an agent's shell command; Text(b) is the bytes `:write` would put in a
// buffer's file; Disk(rel) a file's bytes (null when it is not there); Cmd(args, event) runs
// :Takeback and waits for the User event it fires; WaitRecorded(reason) waits for the sidecar's
// changes/didChange with that reason; Journal() is `takeback list --json`'s [[id, state]];
// Undo(b) is `u` in that buffer.
const PRELUDE = String.raw`vim9script
set nocompatible hidden noswapfile nomore shortmess+=I
const P = json_decode(join(readfile($VIM_TEST_PARAMS), "\n"))
execute 'set runtimepath^=' .. fnameescape(P.plugin)
runtime plugin/takeback.vim
import autoload 'takeback.vim'
g:takeback_cmd = P.cmd
g:Out = {}
g:events = {}
for name in ['TakebackApplied', 'TakebackListed', 'TakebackPreviewed', 'TakebackChanged']
  g:events[name] = 0
  execute 'autocmd User' name 'g:events.' .. name .. ' += 1'
endfor
def g:Wait(what: string, Cond: func(): bool, ms: number = 15000)
  var t = reltime()
  while !Cond()
    if reltimefloat(reltime(t)) * 1000 > ms
      throw 'timed out after ' .. ms .. ' ms waiting for ' .. what
    endif
    sleep 10m
  endwhile
enddef
# :Takeback ARGS, then wait for the User event it fires.
def g:Cmd(args: string, event: string): any
  var n = g:events[event]
  execute 'Takeback' args
  g:Wait(':Takeback ' .. args, () => g:events[event] > n)
  return g:takeback_event
enddef
def g:Agent(script: string)
  var out = system(join([P.node, P.bin, 'run', '--', 'sh', '-c', script]->mapnew((_, a) => shellescape(a))))
  if v:shell_error != 0
    throw 'the agent failed: ' .. out
  endif
enddef
# The agent's command in a turn of its own, as an agent's work is (undo's last names it; a
# takeback run outside any turn is the person's own).
def g:AgentTurn(script: string)
  for args in [['turn', 'begin'], ['run', '--', 'sh', '-c', script], ['turn', 'end']]
    var out = system(join([P.node, P.bin]->extend(args)->mapnew((_, a) => shellescape(a))))
    if v:shell_error != 0
      throw 'the agent failed: ' .. out
    endif
  endfor
enddef
def g:Text(b: number): string
  return takeback.BufferText(b)
enddef
def g:Disk(rel: string): any
  var p = P.workspace .. '/' .. rel
  return filereadable(p) ? join(readfile(p, 'b'), "\n") : null
enddef
g:reasons = []
autocmd User TakebackChanged g:reasons->add(g:takeback_changed.reason)
# The sidecar says it recorded a step (changes/didChange with this reason).
def g:WaitRecorded(reason: string)
  var n = len(g:reasons)
  g:Wait('changes/didChange ' .. reason, () => index(g:reasons, reason) >= 0)
  remove(g:reasons, index(g:reasons, reason))
enddef
# The journal's sets as [[id, state]], newest first (takeback list --json).
def g:Journal(): list<any>
  var out = system(join([P.node, P.bin, 'list', '--json']->mapnew((_, a) => shellescape(a))))
  return json_decode(out).sets->mapnew((_, s) => [s.id, s.state])
enddef
def g:Undo(b: number)
  execute 'buffer' b
  silent normal! u
enddef
`;

const POSTLUDE = String.raw`
def g:Finish(err: string)
  if err != ''
    g:Out.error = err
  endif
  g:Out.messages = execute('messages')
  writefile([json_encode(g:Out)], P.report)
enddef
`;

/**
 * Runs `body` (vim9script lines, inside a function that may throw) in a child Vim for the case,
 * with `data` as P.data. Resolves with the report; rejects with Vim's stderr when there is none.
 */
export async function runVim(c: VimCase, body: string, data: unknown = {}, timeoutMs = 30_000): Promise<VimReport> {
  const script = path.join(c.base, 'case.vim');
  const report = path.join(c.base, 'report.json');
  const paramsFile = path.join(c.base, 'params.json');
  const indented = body
    .split('\n')
    .map((l) => '  ' + l)
    .join('\n');
  fs.writeFileSync(
    script,
    `${PRELUDE}${POSTLUDE}\ndef Case()\n${indented}\nenddef\ntry\n  Case()\n  g:Finish('')\ncatch\n  g:Finish(v:exception .. ' @ ' .. v:throwpoint)\nendtry\nqa!\n`,
  );
  fs.writeFileSync(
    paramsFile,
    JSON.stringify({ plugin: VIM_PLUGIN_DIR, bin: BIN, node: process.execPath, workspace: c.workspace, report, cmd: [process.execPath, BIN, 'serve'], data }),
  );
  fs.rmSync(report, { force: true });
  const env = { ...c.env, VIM_TEST_PARAMS: paramsFile };
  const { code, stderr, timedOut } = await new Promise<{ code: number | null; stderr: string; timedOut: boolean }>((resolve) => {
    const child = spawn(c.vim, ['-N', '-u', 'NONE', '-i', 'NONE', '-n', '-es', '-S', script], {
      cwd: c.workspace,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let err = '';
    let timedOut = false;
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => {
      timedOut = true;
      // The whole process group: Vim and the sidecar it started.
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
      resolve({ code, stderr: err, timedOut });
    });
  });
  if (!fs.existsSync(report)) {
    throw new Error(`Vim wrote no report (exit ${code}${timedOut ? ', killed after ' + timeoutMs + ' ms' : ''}); stderr:\n${stderr}`);
  }
  return JSON.parse(fs.readFileSync(report, 'utf8')) as VimReport;
}

/**
 * Vim as a person runs it, in a tmux session of the case's own (a socket in its folder): `vim
 * -N -u vimrc ARGS` in the workspace, the vimrc putting the plugin on the runtimepath with this
 * checkout's sidecar. keys() sends keys as tmux names them, screen() is what the pane shows.
 */
export class VimTmux extends TmuxSession {
  constructor(
    readonly c: VimCase,
    name = 'vim',
  ) {
    super(c.env, c.base, name, 'Vim');
  }

  /** Starts Vim on a screen of `width` columns, 30 lines. */
  start(args: string[], width = 80): void {
    const vimrc = path.join(this.c.base, 'vimrc');
    fs.writeFileSync(
      vimrc,
      [
        'set nocompatible noswapfile',
        `execute 'set runtimepath^=' .. fnameescape(${JSON.stringify(VIM_PLUGIN_DIR)})`,
        `let g:takeback_cmd = ${JSON.stringify([process.execPath, BIN, 'serve'])}`,
      ].join('\n') + '\n',
    );
    this.open(this.c.workspace, width, 30, [this.c.vim, '-N', '-u', vimrc, '-i', 'NONE', ...args]);
  }

  /** An Ex command typed as a person types it: `:`, the text, Enter. */
  ex(command: string): void {
    this.keys(':');
    this.type(command);
    this.keys('Enter');
  }
}
