// The Vim plugin (clients/vim) end to end, in a real headless Vim 9 with the real sidecar
// (`node bin/takeback.js serve`) over an LSP channel, one child Vim per case (test/support/vim.ts):
// HOME, XDG_* and TAKEBACK_HOME private. The agent's change is a shell command recorded through
// the command line (`takeback run -- sh -c …`), run while its files are open in buffers.
// Skipped only when Vim 9 cannot be found (TAKEBACK_REQUIRE_EDITORS=1 makes that a failure).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { findVim, missingEditorMessage, vimUsable } from './support/editors.js';
import { AGENT_AFTER, AGENT_BEFORE, AGENT_COMMAND } from './support/editor-case.js';
import { BIN, readTree } from './support/nvim.js';
import { lines } from './support/takeback.js';
import { newVimCase, runVim, VimTmux, type VimCase, type VimReport } from './support/vim.js';

const requireEditors = process.env.TAKEBACK_REQUIRE_EDITORS === '1';
const vim = findVim();

const cases: VimCase[] = [];
afterAll(() => {
  if (process.env.TAKEBACK_KEEP_TMP) return;
  for (const c of cases) fs.rmSync(c.base, { recursive: true, force: true, maxRetries: 5 });
});

function start(label: string, files: Record<string, string>): VimCase {
  if (!vim) throw new Error(`${missingEditorMessage('vim')} (TAKEBACK_REQUIRE_EDITORS=1)`);
  const c = newVimCase(vim, label, files);
  cases.push(c);
  return c;
}

function ok(r: VimReport): VimReport {
  expect(r.error, `the Vim side failed; messages: ${r.messages}`).toBeUndefined();
  return r;
}

function journal(c: VimCase): { id: string; state: string }[] {
  const out = execFileSync(process.execPath, [BIN, 'list', '--json'], { cwd: c.workspace, env: c.env, encoding: 'utf8' });
  return (JSON.parse(out) as { sets: { id: string; state: string }[] }).sets.map((s) => ({ id: s.id, state: s.state }));
}

const BEFORE = AGENT_BEFORE;
const AFTER = AGENT_AFTER;
const AGENT = AGENT_COMMAND;

// The two buffers open before the agent works; then the agent's command; then the plugin
// reloading the unmodified buffers when the sidecar says the journal changed.
const PRELUDE = String.raw`
edit notes.md
var notes = bufnr()
badd f.txt
var f = bufnr('f.txt')
bufload(f)
# Start the sidecar (it tracks the open buffers) before the agent changes the files.
g:Cmd('list', 'TakebackListed')
sleep 1100m
g:AgentTurn(P.data.agent)
g:Wait('the buffers reloaded', () => g:Text(notes) == P.data.after['notes.md'] && g:Text(f) == P.data.after['f.txt'])
`;

describe('finding Vim', () => {
  it('takes Vim 9 or newer with channels and jobs only', () => {
    const full = 'VIM - Vi IMproved 9.0 (2022 Jun 28, compiled Feb 16 2025)\n+channel +job +timers +vim9script';
    expect(vimUsable(full)).toBe(true);
    expect(vimUsable(full.replace('9.0', '10.1'))).toBe(true);
    expect(vimUsable(full.replace('9.0', '8.2'))).toBe(false);
    expect(vimUsable(full.replace('+channel', '-channel'))).toBe(false);
    expect(vimUsable(full.replace('+job', '-job'))).toBe(false);
    expect(vimUsable('NVIM v0.10.4')).toBe(false);
    expect(vimUsable(undefined)).toBe(false);
  });
});

// A case waits on the editor, the sidecar and the disk in several steps of up to 15 s each: the
// bound is above their sum, so on a loaded machine a slow step fails with its own message.
describe.skipIf(!vim && !requireEditors)('Vim 9: the takeback plugin', { timeout: 180_000 }, () => {
  /** The quickfix list of `:Takeback list` after an agent's turn that ran `agent`, each entry as `item` (a Vim lambda body over `i`) makes it. */
  const listAfterTurn = async (name: string, agent: string, item: string) =>
    ok(
      await runVim(
        start(name, BEFORE),
        String.raw`
edit notes.md
g:Cmd('list', 'TakebackListed')
g:AgentTurn(P.data.agent)
g:Cmd('list', 'TakebackListed')
g:Out.qf = getqflist()->mapnew((_, i) => ${item})
`,
        { agent },
      ),
    ).qf;

  it.concurrent('list shows a mv as one entry at its new path, as `takeback list` does', async () => {
    const qf = (await listAfterTurn('mv', 'mv x y', "[i.bufnr > 0 ? bufname(i.bufnr)->fnamemodify(':t') : '', i.text]")) as [string, string][];
    expect(qf.slice(1)).toEqual([['y', expect.stringMatching(/^#1 .* · renamed from x$/)]]);
  });

  it.concurrent('list names a skipped folder a command changed, beside the files it changed', async () => {
    const qf = await listAfterTurn('gap', 'echo b > b.txt && mkdir -p node_modules/p && echo x > node_modules/p/i.js', 'i.text');
    expect(qf as string[]).toContainEqual(expect.stringMatching(/^#1 .* · created \+0 −0 \(not kept: excluded\)$/));
  });

  it.concurrent('list shows the change; undo puts buffers and disk back byte for byte; `u` brings the agent’s change back', async () => {
    const c = start('undo', BEFORE);
    const r = ok(
      await runVim(
        c,
        PRELUDE +
          String.raw`
var listed = g:Cmd('list', 'TakebackListed')
g:Out.sets = listed.list.sets->mapnew((_, s) => s.id)
g:Out.qf = getqflist()->mapnew((_, i) => [i.bufnr > 0 ? bufname(i.bufnr)->fnamemodify(':t') : '', i.text])
g:Out.preview = g:Cmd('preview', 'TakebackPreviewed').preview.files->mapnew((_, x) => x.path)
g:Out.preview_lines = getline(1, '$')
close
cclose
messages clear
var d = g:Cmd('undo', 'TakebackApplied')
g:Out.undo = d.result
g:Out.undo_messages = execute('messages')
g:WaitRecorded('undone')
g:Out.journal_after_undo = g:Journal()
g:Out.buffers_after_undo = {notes: g:Text(notes), f: g:Text(f)}
g:Out.modified_after_undo = {notes: getbufvar(notes, '&modified'), f: getbufvar(f, '&modified')}
g:Out.disk_after_undo = {notes: g:Disk('notes.md'), f: g:Disk('f.txt'), x: g:Disk('x'), new: g:Disk('new.txt')}
g:Undo(notes)
g:Undo(f)
g:Out.after_u = {notes: g:Text(notes), f: g:Text(f)}
g:Out.modified_after_u = {notes: getbufvar(notes, '&modified'), f: getbufvar(f, '&modified')}
g:Out.disk_after_u = {notes: g:Disk('notes.md'), f: g:Disk('f.txt')}
`,
        { agent: AGENT, after: AFTER },
      ),
    );
    // The listing: one change set, an entry per file that opens it.
    expect(r.sets).toEqual(['1']);
    const qf = r.qf as [string, string][];
    expect(qf[0]![1]).toBe('Turn 1 · cli'); // the agent's turn
    expect(qf.slice(1).map(([file]) => file).sort()).toEqual(['f.txt', 'g.txt', 'new.txt', 'notes.md', 'x']);
    expect(qf.find(([file]) => file === 'notes.md')![1]).toMatch(/^#1 .*modified \+1 −1$/);
    // The preview: a diff buffer with what the undo would do.
    expect((r.preview as string[]).sort()).toEqual(['f.txt', 'g.txt', 'new.txt', 'notes.md', 'x']);
    const preview = (r.preview_lines as string[]).join('\n');
    expect(preview).toContain('-The slow brown fox.\n+The quick brown fox.');

    const undo = r.undo as { written: boolean; conflicts: unknown[]; applied: { path: string; via?: string }[] };
    expect(undo.written).toBe(true);
    expect(undo.conflicts).toEqual([]);
    const via = Object.fromEntries(undo.applied.map((a) => [a.path, a.via]));
    expect(via).toEqual({ 'notes.md': 'editor', 'f.txt': 'editor', 'g.txt': 'editor', x: 'disk', 'new.txt': 'disk' });
    expect(r.undo_messages).toMatch(/takeback: undid the last change \(change 1\): .*new\.txt \(removed\)/);

    // Byte for byte: buffers, and the disk, as before the agent; the buffers are saved.
    expect(r.buffers_after_undo).toEqual({ notes: BEFORE['notes.md'], f: BEFORE['f.txt'] });
    expect(r.modified_after_undo).toEqual({ notes: false, f: false });
    expect(r.disk_after_undo).toEqual({ notes: BEFORE['notes.md'], f: BEFORE['f.txt'], x: BEFORE.x, new: null });
    expect(readTree(c.workspace)).toEqual(BEFORE);
    // The sidecar recorded the undo once the plugin saved the buffers.
    expect(r.journal_after_undo).toEqual([['1', 'undone']]);

    // One `u` brings the agent's text back into each buffer (unsaved); the disk stays undone.
    expect(r.after_u).toEqual({ notes: AFTER['notes.md'], f: AFTER['f.txt'] });
    expect(r.modified_after_u).toEqual({ notes: true, f: true });
    expect(r.disk_after_u).toEqual({ notes: BEFORE['notes.md'], f: BEFORE['f.txt'] });
  });

  it.concurrent("a buffer with unsaved edits on other lines than the agent's gets the undo merged into it, left for the person to save; :w records it", async () => {
    const c = start('merge-unsaved', BEFORE);
    const r = ok(
      await runVim(
        c,
        PRELUDE +
          String.raw`
# The person changes the title of notes.md (the agent changed line 3), and does not save.
setbufline(notes, 1, '# My notes')
messages clear
var d = g:Cmd('undo', 'TakebackApplied')
g:Out.undo = d.result
g:Out.undo_messages = execute('messages')
g:Out.after_undo = {notes: g:Text(notes), modified: getbufvar(notes, '&modified'), f_modified: getbufvar(f, '&modified'),
  disk_notes: g:Disk('notes.md'), disk_f: g:Disk('f.txt')}
g:Out.journal_before_save = g:Journal()
execute 'buffer' notes
write
g:WaitRecorded('undone')
g:Out.disk_after_save = g:Disk('notes.md')
`,
        { agent: AGENT, after: AFTER },
      ),
    );
    const merged = BEFORE['notes.md'].replace('# Notes', '# My notes');
    const undo = r.undo as { written: boolean; conflicts: unknown[] };
    expect(undo.written).toBe(true);
    expect(undo.conflicts).toEqual([]);
    // The buffer holds the merge, unsaved; f.txt is written as ever; the disk under notes.md keeps the agent's bytes.
    expect(r.after_undo).toEqual({ notes: merged, modified: true, f_modified: false, disk_notes: AFTER['notes.md'], disk_f: BEFORE['f.txt'] });
    expect(r.undo_messages).toContain('put back in the buffer, keeping your unsaved changes: :w notes.md to finish');
    expect(r.journal_before_save).toEqual([['1', 'applied']]);
    expect(r.disk_after_save).toBe(merged);
    expect(journal(c).find((s) => s.id === '1')).toEqual({ id: '1', state: 'undone' });
  });

  it.concurrent("a buffer with unsaved edits next to the agent's line is a conflict: nothing is written; undo! replaces it", async () => {
    const c = start('conflict', BEFORE);
    const r = ok(
      await runVim(
        c,
        PRELUDE +
          String.raw`
# The user goes on typing in notes.md right after the agent's line (next to it: the merge counts
# it an overlap), and does not save; g.txt (not open) is edited outside takeback.
appendbufline(notes, '$', 'my own line')
writefile(['edited outside'], P.workspace .. '/g.txt')
g:Out.typed = g:Text(notes)
messages clear
var d = g:Cmd('undo', 'TakebackApplied')
g:Out.undo = d.result
g:Out.undo_messages = execute('messages')
g:Out.after_conflict = {notes: g:Text(notes), f: g:Text(f), modified: getbufvar(notes, '&modified'),
  disk_notes: g:Disk('notes.md'), disk_f: g:Disk('f.txt'), disk_x: g:Disk('x'), disk_new: g:Disk('new.txt')}
g:Out.journal_after_conflict = g:Journal()
d = g:Cmd('undo!', 'TakebackApplied')
g:Out.forced = d.result
g:Out.after_force = {notes: g:Text(notes), f: g:Text(f), modified: getbufvar(notes, '&modified'),
  disk_notes: g:Disk('notes.md'), disk_f: g:Disk('f.txt')}
g:WaitRecorded('undone')
`,
        { agent: AGENT, after: AFTER },
      ),
    );
    expect(r.typed).toBe(AFTER['notes.md'] + 'my own line\n');
    const undo = r.undo as { written: boolean; conflicts: { path: string; reason: string }[] };
    expect(undo.written).toBe(false);
    expect(undo.conflicts.map((x) => [x.path, x.reason])).toEqual([
      ['g.txt', 'changed-since'],
      ['notes.md', 'unsaved-in-editor'],
    ]);
    // Each file with its reason once and who changed it, then what to do.
    expect(r.undo_messages).toContain(
      'takeback: nothing undone for the last change: g.txt changed since outside takeback: line 1 changed by the agent and line 1 since; notes.md unsaved in Vim: line 3 changed by the agent and line 4 since. `:Takeback undo! last` replaces later changes',
    );
    // Nothing written anywhere: the buffers keep their text, the disk is the agent's.
    expect(r.after_conflict).toEqual({
      notes: AFTER['notes.md'] + 'my own line\n',
      f: AFTER['f.txt'],
      modified: true,
      disk_notes: AFTER['notes.md'],
      disk_f: AFTER['f.txt'],
      disk_x: null,
      disk_new: AFTER['new.txt'],
    });
    expect(r.journal_after_conflict).toEqual([['1', 'applied']]);

    const forced = r.forced as { written: boolean; forced: boolean };
    expect(forced.written).toBe(true);
    expect(forced.forced).toBe(true);
    expect(journal(c).find((s) => s.id === '1')).toEqual({ id: '1', state: 'undone' });
    expect(r.after_force).toEqual({
      notes: BEFORE['notes.md'],
      f: BEFORE['f.txt'],
      modified: false,
      disk_notes: BEFORE['notes.md'],
      disk_f: BEFORE['f.txt'],
    });
  });

  it.concurrent('list: runs of one turn as the command line shows them, each entry at its change, turns that changed nothing not counted; messages name each change once', async () => {
    const files = { 'code.txt': lines('line', 20), 'other.txt': 'a\nb\nc\n' };
    const c = start('list', files);
    const r = ok(
      await runVim(
        c,
        String.raw`
def Tb(args: list<string>)
  var out = system(join([P.node, P.bin] + args->mapnew((_, a) => shellescape(a))))
  if v:shell_error != 0
    throw 'takeback ' .. join(args) .. ' failed: ' .. out
  endif
enddef
edit code.txt
var code = bufnr()
g:Cmd('list', 'TakebackListed')
sleep 1100m
Tb(['turn', 'begin', '--label', 'first'])
g:Agent("sed -i 's/^line 12$/agent 12/' code.txt")
Tb(['turn', 'end'])
Tb(['turn', 'begin', '--label', 'idle'])
Tb(['turn', 'end'])
g:Agent("sed -i 's/^b$/B/' other.txt")
g:Wait('code.txt reloaded', () => getbufline(code, 12) == ['agent 12'])
var listed = g:Cmd('list', 'TakebackListed')
g:Out.title = getqflist({title: 1}).title
g:Out.qf = getqflist()->mapnew((_, i) => [i.bufnr > 0 ? bufname(i.bufnr)->fnamemodify(':t') : '', i.lnum, i.text])
cclose
g:Cmd('preview 1', 'TakebackPreviewed')
g:Out.preview_head = getline(1)
close
messages clear
g:Out.undo = g:Cmd('undo 1', 'TakebackApplied').result
g:WaitRecorded('undone')
g:Out.undo_messages = execute('messages')
`,
      ),
    );
    // Newest first, as `takeback list`: the change outside any turn, then turn 1; the turn that
    // changed nothing is neither shown nor counted.
    expect(r.title).toBe('takeback: 2 changes in 1 turn');
    const qf = r.qf as [string, number, string][];
    expect(qf.map(([file, , text]) => [file, text.replace(/ .*/, '')])).toEqual([
      ['', 'Outside'],
      ['other.txt', '#2'],
      ['', 'Turn'],
      ['code.txt', '#1'],
    ]);
    expect(qf[0]![2]).toBe('Outside any turn');
    expect(qf[2]![2]).toMatch(/^Turn 1 · first · cli/);
    // Each entry opens its file at the agent's line.
    expect(qf.filter(([file]) => file !== '').map(([file, lnum]) => [file, lnum])).toEqual([
      ['other.txt', 2],
      ['code.txt', 12],
    ]);
    expect(r.preview_head).toBe('# takeback: undo of change 1');
    expect((r.undo as { written: boolean }).written).toBe(true);
    expect(r.undo_messages).toMatch(/takeback: undid change 1: code\.txt$/m);
    expect(readTree(c.workspace)).toEqual({ ...files, 'other.txt': 'a\nB\nc\n' });
  });

  it.concurrent('a redo the sidecar writes on disk while the buffer already holds its text (`u` after the undo) leaves the buffer unmodified, in line with the disk', async () => {
    const files = { 'code.txt': lines('line', 20) };
    const after = { 'code.txt': files['code.txt'].replace('line 12\n', 'agent 12\n') };
    const c = start('redo-in-place', files);
    const r = ok(
      await runVim(
        c,
        String.raw`
edit code.txt
var code = bufnr()
g:Cmd('list', 'TakebackListed')
sleep 1100m
g:Agent("sed -i 's/^line 12$/agent 12/' code.txt")
g:Wait('code.txt reloaded', () => g:Text(code) == P.data.after['code.txt'])
g:Cmd('undo 1', 'TakebackApplied')
g:WaitRecorded('undone')
# The editor's own undo brings the agent's text back, unsaved; then takeback's redo.
g:Undo(code)
g:Out.after_u = {text: g:Text(code), modified: &modified}
g:Out.redo = g:Cmd('redo 1', 'TakebackApplied').result
g:WaitRecorded('redone')
g:Out.after_redo = {text: g:Text(code), modified: &modified, disk: g:Disk('code.txt')}
`,
        { after },
      ),
    );
    expect(r.after_u).toEqual({ text: after['code.txt'], modified: true });
    const redo = r.redo as { written: boolean; applied: { path: string; via: string }[] };
    expect(redo.written).toBe(true);
    expect(redo.applied.map((a) => [a.path, a.via])).toEqual([['code.txt', 'disk']]);
    expect(r.after_redo).toEqual({ text: after['code.txt'], modified: false, disk: after['code.txt'] });
    expect(readTree(c.workspace)).toEqual(after);
    expect(journal(c)).toEqual([{ id: '1', state: 'applied' }]);
  });

  it.concurrent('under tmux, as a person: a conflict too long for the command line shows its start, the file it names and who changed it, and says where the rest is', async () => {
    const files = { 'code.txt': lines('line', 20) };
    const c = start('tmux', files);
    const session = new VimTmux(c);
    const run = (script: string) => execFileSync(process.execPath, [BIN, 'run', '--', 'sh', '-c', script], { cwd: c.workspace, env: c.env, stdio: 'ignore' });
    try {
      session.start(['code.txt'], 100);
      await session.waitScreen('code.txt open', /^line 1\s*$/m);
      // Change 1, then change 2 over the same line: undoing 1 alone is a conflict with change 2.
      run("sed -i 's/^line 12$/agent 12/' code.txt");
      run("sed -i 's/^agent 12$/pretty 12/' code.txt");
      session.ex('edit');
      await session.waitScreen('the later change shown', /^pretty 12\s*$/m);
      session.ex('Takeback undo 1');
      const screen = await session.waitScreen('the conflict shown', /^takeback: nothing undone.*\(:messages\)\s*$/m);
      const last = screen.trimEnd().split('\n').pop()!;
      expect(last).toMatch(/^takeback: nothing undone for change 1: code\.txt changed since by #2 \(sh -c .* … \(:messages\)$/);
      expect(readTree(c.workspace)).toEqual({ 'code.txt': files['code.txt'].replace('line 12\n', 'pretty 12\n') });
      // :messages has it whole: where the lines meet, the undo that takes both back, and undo!.
      session.ex('messages');
      // (The screen wraps it: its lines are joined, a space at a wrap may be trimmed.)
      const whole = (await session.waitScreen('the whole message', /replaces later changes/)).replace(/\n/g, '');
      expect(whole).toMatch(/line 12 changed by the agent and line 12 since — ?`:Takeback ?undo ?1 ?2` ?takes ?both ?back\. ?`:Takeback ?undo! ?1` ?replaces/);
    } finally {
      session.stop();
    }
  });

  it.concurrent('undo and redo keep CRLF line ends and a missing final newline byte for byte', async () => {
    const files = { 'crlf.txt': 'one\r\ntwo\r\n', 'noeol.txt': 'alpha\nbeta' };
    const after = { 'crlf.txt': 'one\r\nTWO\r\n', 'noeol.txt': 'alpha\nBETA' };
    const c = start('bytes', files);
    const r = ok(
      await runVim(
        c,
        String.raw`
edit crlf.txt
var crlf = bufnr()
badd noeol.txt
var noeol = bufnr('noeol.txt')
bufload(noeol)
g:Out.formats = [getbufvar(crlf, '&fileformat'), getbufvar(noeol, '&eol')]
g:Cmd('list', 'TakebackListed')
sleep 1100m
g:AgentTurn("sed -i s/two/TWO/ crlf.txt && sed -i s/beta/BETA/ noeol.txt")
g:Wait('the buffers reloaded', () => g:Text(crlf) == P.data.after['crlf.txt'] && g:Text(noeol) == P.data.after['noeol.txt'])
g:Out.undo = g:Cmd('undo', 'TakebackApplied').result
g:WaitRecorded('undone')
g:Out.after_undo = {crlf: g:Text(crlf), noeol: g:Text(noeol), disk_crlf: g:Disk('crlf.txt'), disk_noeol: g:Disk('noeol.txt')}
g:Out.redo = g:Cmd('redo', 'TakebackApplied').result
g:WaitRecorded('redone')
g:Out.after_redo = {crlf: g:Text(crlf), noeol: g:Text(noeol), disk_crlf: g:Disk('crlf.txt'), disk_noeol: g:Disk('noeol.txt')}
`,
        { after },
      ),
    );
    expect(r.formats).toEqual(["dos", false]);
    const via = (x: unknown) => Object.fromEntries((x as { applied: { path: string; via?: string }[] }).applied.map((a) => [a.path, a.via]));
    expect(via(r.undo)).toEqual({ 'crlf.txt': 'editor', 'noeol.txt': 'editor' });
    expect(r.after_undo).toEqual({ crlf: files['crlf.txt'], noeol: files['noeol.txt'], disk_crlf: files['crlf.txt'], disk_noeol: files['noeol.txt'] });
    expect(via(r.redo)).toEqual({ 'crlf.txt': 'editor', 'noeol.txt': 'editor' });
    expect(r.after_redo).toEqual({ crlf: after['crlf.txt'], noeol: after['noeol.txt'], disk_crlf: after['crlf.txt'], disk_noeol: after['noeol.txt'] });
    expect(readTree(c.workspace)).toEqual(after);
    expect(journal(c)).toEqual([{ id: '1', state: 'applied' }]);
  });
});
