// The Neovim plugin (clients/nvim) end to end, in a real headless Neovim 0.10 and 0.12, with the
// real sidecar (`node bin/takeback.js serve`) and the real hook entry point. One child Neovim
// per case (test/support/nvim.ts): HOME, XDG_* and TAKEBACK_HOME private. The agent's turn is
// the recorded Claude Code session's turn 1 (a Write of a new file, an Edit of notes.md, a Bash
// `sed -i 's/a/b/' f.txt && mv x y && rm z`), run while notes.md and f.txt are open in buffers.
// Skipped only when a Neovim cannot be found (TAKEBACK_REQUIRE_EDITORS=1 makes that a failure).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findNvim, missingEditorMessage, type NvimVersion } from './support/editors.js';
import {
  WORKSPACE_AFTER_TURN_ONE,
  BIN,
  PLUGIN_DIR,
  WORKSPACE_BEFORE,
  hookEvent,
  newCase,
  ok,
  readTree,
  runNvim,
  turnOne,
  turnTwo,
  type NvimCase,
} from './support/nvim.js';

const requireEditors = process.env.TAKEBACK_REQUIRE_EDITORS === '1';
const WARN = 3;

const cases: NvimCase[] = [];
afterAll(() => {
  if (process.env.TAKEBACK_KEEP_TMP) return;
  for (const c of cases) fs.rmSync(c.base, { recursive: true, force: true, maxRetries: 5 });
});

function start(nvim: string, label: string, files = WORKSPACE_BEFORE): NvimCase {
  const c = newCase(nvim, label, files);
  cases.push(c);
  return c;
}


/** The disk as a map like WORKSPACE_BEFORE (null for a missing file), for the paths of turn 1. */
const TRACKED = ['notes.md', 'f.txt', 'src/lib/new.ts', 'x', 'y', 'z'];
const BEFORE: Record<string, string | null> = Object.fromEntries(TRACKED.map((p) => [p, WORKSPACE_BEFORE[p] ?? null]));

// Lua shared by the cases: setup with the sidecar of this checkout, the two buffers open before
// the agent works, the agent's turn, then Neovim learning that the files changed.
const PRELUDE = String.raw`
-- A user without 'autoread': the plugin reloads the buffers the agent changed all the same.
vim.o.autoread = false
local takeback = require('takeback')
takeback.setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
H.track('TakebackChanged')
H.track('TakebackSigns')
local TRACKED = { 'notes.md', 'f.txt', 'src/lib/new.ts', 'x', 'y', 'z' }
local function disk()
  local t = {}
  for _, p in ipairs(TRACKED) do
    t[p] = H.read(H.path(p))
  end
  return t
end
local notes = H.open('notes.md')
local f = H.open('f.txt')
vim.cmd.buffer(notes)
H.out.filetypes = { notes = vim.bo[notes].filetype, f = vim.bo[f].filetype }
H.agent(H.params.data.turn)
local want = H.params.data.after
-- The sidecar says the journal changed (changes/didChange) and the plugin reloads the unmodified
-- buffers; without that notification a person would get there with autoread on focus (:checktime).
H.out.reloaded_by_plugin = vim.wait(5000, function()
  return H.text(notes) == want['notes.md'] and H.text(f) == want['f.txt']
end, 20)
if not H.out.reloaded_by_plugin then
  vim.o.autoread = true
  vim.cmd('checktime')
end
H.out.did_change_events = #H.events.TakebackChanged
H.out.after_agent = { notes = H.text(notes), f = H.text(f) }
`;

function turnData(c: NvimCase, extra: Record<string, unknown> = {}) {
  return { turn: turnOne(c.workspace, c.env.HOME!), after: WORKSPACE_AFTER_TURN_ONE, ...extra };
}

for (const version of ['0.10', '0.12'] as NvimVersion[]) {
  const nvim = findNvim(version);
  const missing = missingEditorMessage(`nvim-${version}`);
  const skip = !nvim && !requireEditors;

  // A case waits on the editor, the sidecar and the disk in several steps of up to 15 s each: the
// bound is above their sum, so on a loaded machine a slow step fails with its own message.
describe.skipIf(skip)(`Neovim ${version}: the takeback plugin`, { timeout: 180_000 }, () => {
    const bin = (): string => {
      if (!nvim) throw new Error(`${missing} (TAKEBACK_REQUIRE_EDITORS=1)`);
      return nvim;
    };

    it('undo of a turn puts buffers and disk back byte for byte; `u` brings the change back in one step, and once saved list says it is applied again; signs mark the lines', async () => {
      const c = start(bin(), `undo-${version}`);
      const r = ok(
        await runNvim(
          c,
          PRELUDE +
            String.raw`
local function marks(b)
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, require('takeback.signs').ns, 0, -1, { details = true })) do
    table.insert(out, { line = m[2] + 1, text = vim.trim(m[4].sign_text or '') })
  end
  return out
end
vim.wait(3000, function() return #marks(notes) > 0 and #marks(f) > 0 end, 20)
H.out.signs_before = { notes = marks(notes), f = marks(f) }

-- A format-on-save (as conform or an LSP formatter would do) must not touch what the undo puts back.
local format = vim.api.nvim_create_autocmd('BufWritePre', {
  callback = function(a) vim.api.nvim_buf_set_lines(a.buf, 0, 0, false, { '// formatted on save' }) end,
})
local n = #H.messages
local data = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
H.out.undo = data.result
H.out.undo_error = data.error
H.out.undo_messages = H.messages_since(n)
H.out.buffers_after_undo = { notes = H.text(notes), f = H.text(f) }
H.out.modified_after_undo = { notes = vim.bo[notes].modified, f = vim.bo[f].modified }
H.out.disk_after_undo = disk()
vim.wait(3000, function() return #marks(notes) == 0 and #marks(f) == 0 end, 20)
H.out.signs_after_undo = { notes = marks(notes), f = marks(f) }
local function list() return vim.json.decode(vim.system({ 'node', H.params.bin, 'list', '--json' }, { cwd = H.ws, text = true }):wait(30000).stdout) end
H.out.list_after_undo = list()

vim.api.nvim_buf_call(notes, function() vim.cmd('silent normal! u') end)
vim.api.nvim_buf_call(f, function() vim.cmd('silent normal! u') end)
H.out.after_u = { notes = H.text(notes), f = H.text(f) }
H.out.modified_after_u = { notes = vim.bo[notes].modified, f = vim.bo[f].modified }
H.out.disk_after_u = disk()

-- Then a save of each (without the formatter): the agent's bytes are on disk again.
vim.api.nvim_del_autocmd(format)
vim.api.nvim_buf_call(notes, function() vim.cmd('silent write') end)
vim.api.nvim_buf_call(f, function() vim.cmd('silent write') end)
H.out.disk_after_save = disk()
H.out.list_after_save = list()
`,
          turnData(c),
        ),
      );
      expect(r.filetypes).toEqual({ notes: 'markdown', f: 'text' });
      expect(r.after_agent).toEqual({ notes: WORKSPACE_AFTER_TURN_ONE['notes.md'], f: WORKSPACE_AFTER_TURN_ONE['f.txt'] });
      expect(r.reloaded_by_plugin, 'the plugin reloads buffers when the sidecar says the journal changed').toBe(true);

      // Signs: the agent's lines as they are now (notes.md line 3 changed, f.txt line 1 changed).
      expect(r.signs_before).toEqual({ notes: [{ line: 3, text: '┃' }], f: [{ line: 1, text: '┃' }] });

      const undo = r.undo as { written: boolean; conflicts: unknown[]; applied: { path: string; action: string; via?: string }[] };
      expect(r.undo_error).toBeUndefined();
      expect(undo.written).toBe(true);
      expect(undo.conflicts).toEqual([]);
      const via = Object.fromEntries(undo.applied.map((a) => [a.path, a.via]));
      expect(via['notes.md']).toBe('editor');
      expect(via['f.txt']).toBe('editor');

      // Byte for byte: buffers, and the disk, before the agent's turn.
      expect(r.buffers_after_undo).toEqual({ notes: WORKSPACE_BEFORE['notes.md'], f: WORKSPACE_BEFORE['f.txt'] });
      expect(r.modified_after_undo, 'the plugin wrote the buffers it changed').toEqual({ notes: false, f: false });
      expect(r.disk_after_undo).toEqual(BEFORE);
      // (The saves at the end wrote the agent's text of the two buffers back.)
      expect(readTree(c.workspace)).toEqual({ ...WORKSPACE_BEFORE, 'notes.md': WORKSPACE_AFTER_TURN_ONE['notes.md'], 'f.txt': WORKSPACE_AFTER_TURN_ONE['f.txt'] });
      expect(r.signs_after_undo).toEqual({ notes: [], f: [] });
      // The journal recorded the undo (the sidecar heard the saves): every set of turn 1 is undone.
      const list = r.list_after_undo as { sets: { id: string; state: string }[] };
      expect(list.sets.map((s) => [s.id, s.state])).toEqual([
        ['3', 'undone'],
        ['2', 'undone'],
        ['1', 'undone'],
      ]);

      // The report names what was undone.
      const info = (r.undo_messages as { msg: string; level: number }[]).map((m) => m.msg).join('\n');
      expect(info).toMatch(/undid turn 1/);
      expect(info).toContain('notes.md');
      expect(info).toContain('src/lib/new.ts (removed)');

      // One `u` brings the agent's text back into the buffer (unsaved); the disk stays undone.
      expect(r.after_u).toEqual({ notes: WORKSPACE_AFTER_TURN_ONE['notes.md'], f: WORKSPACE_AFTER_TURN_ONE['f.txt'] });
      expect(r.modified_after_u).toEqual({ notes: true, f: true });
      expect(r.disk_after_u).toEqual(BEFORE);

      // Saved, the agent's change to both files is applied again by what the disk holds; the file
      // the turn created and the undo removed (no `u` brings it back) stays undone.
      expect(r.disk_after_save).toEqual({ ...(r.disk_after_u as object), 'notes.md': WORKSPACE_AFTER_TURN_ONE['notes.md'], 'f.txt': WORKSPACE_AFTER_TURN_ONE['f.txt'] });
      const again = r.list_after_save as { sets: { files: { path: string; state: string }[] }[] };
      const byPath = Object.fromEntries(again.sets.flatMap((s) => s.files.map((f) => [f.path, f.state])));
      expect(byPath['notes.md']).toBe('applied');
      expect(byPath['f.txt']).toBe('applied');
      expect(byPath['src/lib/new.ts']).toBe('undone');
    });

    it(':Takeback undo / redo (last), then undo and redo of the whole turn', async () => {
      const c = start(bin(), `redo-${version}`);
      const r = ok(
        await runNvim(
          c,
          PRELUDE +
            String.raw`
local function snap(label)
  H.out[label] = { disk = disk(), notes = H.text(notes), f = H.text(f), modified = vim.bo[notes].modified or vim.bo[f].modified }
end
local d
d = H.cmd_and_wait('Takeback undo', 'TakebackApplied'); H.out.undo_last = d.result; snap('after_undo_last')
d = H.cmd_and_wait('Takeback redo', 'TakebackApplied'); H.out.redo_last = d.result; snap('after_redo_last')
d = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied'); H.out.undo_turn = d.result; snap('after_undo_turn')
d = H.cmd_and_wait('Takeback redo turn 1', 'TakebackApplied'); H.out.redo_turn = d.result; snap('after_redo_turn')
-- '%' narrows to the current buffer's file: only notes.md goes back.
vim.cmd.buffer(notes)
d = H.cmd_and_wait('Takeback undo turn 1 %', 'TakebackApplied'); H.out.undo_file = d.result; snap('after_undo_file')
`,
          turnData(c),
        ),
      );
      const after = WORKSPACE_AFTER_TURN_ONE;
      // `undo` alone is the last change: the Bash command (f.txt, x, y, z), not the Edit or the Write.
      expect(r.after_undo_last).toEqual({
        disk: { ...after, 'f.txt': BEFORE['f.txt'], x: BEFORE.x, y: null, z: BEFORE.z },
        notes: after['notes.md'],
        f: BEFORE['f.txt'],
        modified: false,
      });
      expect(r.after_redo_last).toEqual({ disk: after, notes: after['notes.md'], f: after['f.txt'], modified: false });
      expect(r.after_undo_turn).toEqual({ disk: BEFORE, notes: BEFORE['notes.md'], f: BEFORE['f.txt'], modified: false });
      expect(r.after_redo_turn).toEqual({ disk: after, notes: after['notes.md'], f: after['f.txt'], modified: false });
      expect(r.after_undo_file).toEqual({ disk: { ...after, 'notes.md': BEFORE['notes.md'] }, notes: BEFORE['notes.md'], f: after['f.txt'], modified: false });
      expect((r.undo_file as { applied: { path: string }[] }).applied.map((a) => a.path)).toEqual(['notes.md']);
      for (const k of ['undo_last', 'redo_last', 'undo_turn', 'redo_turn', 'undo_file']) {
        expect((r[k] as { written: boolean }).written, k).toBe(true);
      }
    });

    it('a redo the sidecar writes on disk while the buffer already holds its text (`u` after the undo) leaves the buffer unmodified, in line with the disk', async () => {
      const c = start(bin(), `redo-in-place-${version}`);
      const r = ok(
        await runNvim(
          c,
          PRELUDE +
            String.raw`
H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
-- The editor's own undo brings the agent's text back into notes.md, unsaved; then takeback's redo.
vim.cmd.buffer(notes)
vim.cmd('silent normal! u')
H.out.after_u = { notes = H.text(notes), modified = vim.bo[notes].modified }
local d = H.cmd_and_wait('Takeback redo turn 1', 'TakebackApplied')
H.out.redo = d.result
H.out.after_redo = { notes = H.text(notes), modified = vim.bo[notes].modified, disk = disk() }
`,
          turnData(c),
        ),
      );
      const after = WORKSPACE_AFTER_TURN_ONE;
      expect(r.after_u).toEqual({ notes: after['notes.md'], modified: true });
      const redo = r.redo as { written: boolean; applied: { path: string; via?: string }[] };
      expect(redo.written).toBe(true);
      expect(redo.applied.find((a) => a.path === 'notes.md')?.via).toBe('disk');
      expect(r.after_redo).toEqual({ notes: after['notes.md'], modified: false, disk: after });
    });

    it("an unsaved edit on another line than the agent's is merged into the buffer, which the plugin leaves for the person to save; :w records the undo", async () => {
      const c = start(bin(), `merge-unsaved-${version}`);
      const r = ok(
        await runNvim(
          c,
          PRELUDE +
            String.raw`
-- The person changes the title of notes.md (the agent changed line 3), and does not save.
vim.api.nvim_buf_set_lines(notes, 0, 1, false, { '# My notes' })
local n = #H.messages
local d = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
H.out.undo = d.result
H.out.undo_messages = H.messages_since(n)
H.out.after_undo = { notes = H.text(notes), f = H.text(f), modified = vim.bo[notes].modified, f_modified = vim.bo[f].modified, disk = disk() }
local function list() return vim.json.decode(vim.system({ 'node', H.params.bin, 'list', '--json' }, { cwd = H.ws, text = true }):wait(30000).stdout) end
H.out.list_before_save = list()
vim.cmd.buffer(notes)
vim.cmd('write')
H.out.recorded = vim.wait(30000, function()
  for _, s in ipairs(list().sets) do
    if s.state ~= 'undone' then return false end
  end
  return true
end, 200)
H.out.after_save = { modified = vim.bo[notes].modified, disk = disk() }
`,
          turnData(c),
        ),
      );
      const merged = (BEFORE['notes.md'] as string).replace('# Notes', '# My notes');
      const undo = r.undo as { written: boolean; conflicts: unknown[]; applied: { path: string; via?: string }[]; pending: string[] };
      expect(undo.conflicts).toEqual([]);
      expect(undo.written).toBe(true);
      expect(undo.applied.find((a) => a.path === 'notes.md')?.via).toBe('editor');
      expect(undo.pending).toContain('notes.md');
      // The buffer holds the merge, unsaved; f.txt (no unsaved text) is written as ever; the disk under notes.md keeps the agent's text.
      expect(r.after_undo).toEqual({ notes: merged, f: BEFORE['f.txt'], modified: true, f_modified: false, disk: { ...BEFORE, 'notes.md': WORKSPACE_AFTER_TURN_ONE['notes.md'] } });
      const info = (r.undo_messages as { msg: string; level: number }[]).map((m) => m.msg).join('\n');
      expect(info).toContain('put back in the buffer, keeping your unsaved changes: :w notes.md to finish');
      const sets = (r.list_before_save as { sets: { files: { path: string; state: string }[] }[] }).sets;
      expect(sets.flatMap((s) => s.files).find((x) => x.path === 'notes.md')?.state).toBe('applied');
      // :w is the person's: it finishes the undo, recorded.
      expect(r.recorded).toBe(true);
      expect(r.after_save).toEqual({ modified: false, disk: { ...BEFORE, 'notes.md': merged } });
    });

    it("a buffer with unsaved edits on the agent's line is a conflict and is left untouched; undo! replaces it", async () => {
      const c = start(bin(), `conflict-${version}`);
      const r = ok(
        await runNvim(
          c,
          PRELUDE +
            String.raw`
-- The user goes on typing on the line the agent changed in notes.md, and does not save; y (not
-- open) is edited outside takeback.
vim.api.nvim_buf_set_lines(notes, 2, 3, false, { 'The slow red fox, mine.' })
H.write(H.path('y'), 'edited outside\n')
H.out.typed = H.text(notes)
vim.cmd('Takeback preview turn 1')
H.wait('the preview buffer', function() return vim.bo.filetype == 'diff' end)
H.out.preview = H.lines(0)
vim.cmd('tabclose')
vim.cmd.buffer(notes)
local n = #H.messages
local d = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
H.out.undo = d.result
H.out.undo_messages = H.messages_since(n)
H.out.after_conflict = { notes = H.text(notes), f = H.text(f), modified = vim.bo[notes].modified, disk = disk() }
n = #H.messages
d = H.cmd_and_wait('Takeback undo! turn 1', 'TakebackApplied')
H.out.forced = d.result
H.out.forced_messages = H.messages_since(n)
H.out.after_force = { notes = H.text(notes), f = H.text(f), modified = vim.bo[notes].modified, disk = disk() }
`,
          turnData(c),
        ),
      );
      const after = WORKSPACE_AFTER_TURN_ONE;
      const typed = (after['notes.md'] as string).replace('The slow red fox.', 'The slow red fox, mine.');
      expect(r.typed).toBe(typed);
      // The preview names the conflict in words.
      // The preview names the conflict in words: its detail, the reason once.
      expect((r.preview as string[]).filter((l) => l.startsWith('# notes.md:'))).toEqual(['# notes.md: put back · conflict: unsaved in Neovim: line 3 changed by the agent and line 3 since']);
      expect((r.preview as string[]).filter((l) => l.startsWith('# y:'))).toEqual(['# y: remove · conflict: changed since outside takeback']);
      const undo = r.undo as { written: boolean; conflicts: { path: string; reason: string }[] };
      expect(undo.written).toBe(false);
      expect(undo.conflicts).toContainEqual(expect.objectContaining({ path: 'notes.md', reason: 'unsaved-in-editor' }));
      const warn = (r.undo_messages as { msg: string; level: number }[]).find((m) => m.level >= WARN);
      // Each file with its reason once and who changed it, then what to do.
      expect(warn?.msg).toBe('takeback: nothing undone for turn 1: notes.md unsaved in Neovim: line 3 changed by the agent and line 3 since; y changed since outside takeback. `:Takeback undo! turn 1` replaces later changes');
      // Nothing moved: the buffer keeps the user's text, every file keeps the agent's bytes (y the edit outside).
      expect(r.after_conflict).toEqual({ notes: typed, f: after['f.txt'], modified: true, disk: { ...after, y: 'edited outside\n' } });

      const forced = r.forced as { written: boolean; forced: boolean };
      expect(forced.written).toBe(true);
      expect(r.after_force).toEqual({ notes: BEFORE['notes.md'], f: BEFORE['f.txt'], modified: false, disk: BEFORE });
    });

    it(':Takeback list names a skipped folder a command changed, beside the files it changed', async () => {
      const c = start(bin(), `list-gap-${version}`);
      // Turn 1, whose Bash also installs a package: node_modules is skipped, so it is a capture gap.
      const turn = turnOne(c.workspace, c.env.HOME!).map((s) => ('sh' in s ? { sh: `${s.sh} && mkdir -p node_modules/p && echo x > node_modules/p/i.js` } : s));
      const r = ok(
        await runNvim(
          c,
          String.raw`
local takeback = require('takeback')
takeback.setup({ cmd = H.params.cmd })
H.open('notes.md')
H.agent(H.params.data.turn)
vim.cmd('Takeback list')
H.wait('the quickfix list', function()
  return (vim.fn.getqflist({ title = 1 }).title or ''):match('^takeback') ~= nil
end)
H.out.qf = vim.tbl_map(function(it) return it.text end, vim.fn.getqflist())
`,
          { turn },
        ),
      );
      expect(r.qf).toContainEqual(expect.stringMatching(/^#3 Bash: .* · created \+0 −0 \(not kept: excluded\)$/));
    });

    it(':Takeback list fills the quickfix list by turn, newest first; preview shows the diff and writes nothing; completion', async () => {
      const c = start(bin(), `list-${version}`);
      const r = ok(
        await runNvim(
          c,
          PRELUDE +
            String.raw`
H.agent(H.params.data.turn2)
vim.cmd('Takeback list')
H.wait('the quickfix list', function()
  return (vim.fn.getqflist({ title = 1 }).title or ''):match('^takeback') ~= nil
end)
local qf = vim.fn.getqflist({ title = 1, items = 1 })
H.out.qf_title = qf.title
H.out.qf = {}
for _, it in ipairs(qf.items) do
  table.insert(H.out.qf, { text = it.text, file = it.bufnr > 0 and vim.fn.fnamemodify(vim.api.nvim_buf_get_name(it.bufnr), ':.') or vim.NIL, valid = it.valid })
end
H.out.qf_open = vim.fn.getqflist({ winid = 1 }).winid ~= 0
vim.cmd('cclose')
local disk_before = disk()
vim.cmd('Takeback preview turn 1')
H.wait('the preview buffer', function()
  return vim.bo.filetype == 'diff' and vim.api.nvim_buf_get_name(0):match('takeback: undo turn 1$') ~= nil
end)
H.out.preview = H.lines(0)
H.out.preview_wrote_nothing = vim.deep_equal(disk(), disk_before)
vim.cmd('close')
-- layout 'split': f.txt beside its text after the undo, in diff mode.
takeback.setup({ cmd = H.params.cmd, preview = { layout = 'split' } })
vim.cmd.tabnext(1)
vim.cmd.only()
vim.cmd.buffer(f)
vim.cmd('Takeback preview turn 1')
H.wait('the split preview', function()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):match('^takeback://undo%-%d+/f%.txt$') then
      return true
    end
  end
end)
for _, w in ipairs(vim.api.nvim_list_wins()) do
  local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w))
  if name:match('^takeback://undo%-%d+/f%.txt$') then
    H.out.split = { lines = H.lines(vim.api.nvim_win_get_buf(w)), diff = vim.wo[w].diff }
  elseif vim.api.nvim_win_get_buf(w) == f then
    H.out.split_file_diff = vim.wo[w].diff
  end
end
H.out.complete_sub = vim.fn.getcompletion('Takeback ', 'cmdline')
H.out.complete_turn = vim.fn.getcompletion('Takeback undo turn ', 'cmdline')
H.out.complete_sel = vim.fn.getcompletion('Takeback redo ', 'cmdline')
`,
          turnData(c, { turn2: turnTwo(c.workspace, c.env.HOME!) }),
        ),
      );
      expect(r.qf_title).toMatch(/^takeback: 4 changes in 2 turns/);
      expect(r.qf_open).toBe(true);
      const qf = r.qf as { text: string; file: string | null; valid: number }[];
      const headings = qf.filter((i) => i.file === null).map((i) => i.text);
      expect(headings).toHaveLength(2);
      expect(headings[0]).toMatch(/^Turn 2 · Turn two: rewrite the notes\./);
      expect(headings[1]).toMatch(/^Turn 1 · Turn one: add the new module/);
      // Under each heading, its changes newest first, one line per file.
      const files = qf.map((i) => (i.file === null ? '--' : `${i.file} ${i.text.split(' ')[0]}`));
      expect(files).toEqual([
        '--',
        'notes.md #4',
        '--',
        'f.txt #3',
        'y #3',
        'z #3',
        'notes.md #2',
        'src/lib/new.ts #1',
      ]);
      expect(qf.find((i) => i.file === 'f.txt')?.text).toMatch(/Bash: sed -i .* modified \+1 −1/);
      // The `mv x y` is one entry at its new path, counting no lines, as `takeback list` shows it.
      expect(qf.find((i) => i.file === 'y')?.text).toMatch(/Bash: .* · renamed from x$/);

      const preview = (r.preview as string[]).join('\n');
      expect(preview).toMatch(/^# takeback: undo turn 1 would change \d+ files/);
      expect(preview).toContain('-b cat sat\n+a cat sat');
      expect(preview).toContain('# src/lib/new.ts: remove');
      expect(r.preview_wrote_nothing).toBe(true);

      expect(r.split).toEqual({ lines: ['a cat sat'], diff: true });
      expect(r.split_file_diff).toBe(true);
      expect(r.complete_sub).toEqual(['list', 'preview', 'undo', 'redo', 'pick', 'messages']);
      expect(r.complete_turn).toEqual(['2', '1']);
      expect(r.complete_sel).toEqual(expect.arrayContaining(['last', 'turn', 'after', '%', '4', '1']));
    });

    it(':help takeback works from a plain runtimepath (the tags come with the plugin)', async () => {
      const c = start(bin(), `help-${version}`);
      const r = ok(
        await runNvim(
          c,
          String.raw`
local help_ok, help_err = pcall(vim.cmd, 'help takeback-config')
H.out.help = { ok = help_ok, err = help_ok and vim.NIL or tostring(help_err), tag = help_ok and vim.fn.expand('<cWORD>') or vim.NIL, bt = vim.bo.buftype }
`,
        ),
      );
      expect(r.help).toEqual({ ok: true, err: null, tag: '*takeback-config*', bt: 'help' });
    });

    it(':Takeback list: changes outside any turn among the turns by time, turns that changed nothing not counted, entries open at the change; the statusline component', async () => {
      const c = start(bin(), `order-${version}`);
      const home = c.env.HOME!;
      const r = ok(
        await runNvim(
          c,
          PRELUDE +
            String.raw`
-- A command outside any turn between turn 1 and turn 2, then turn 2, then a turn that changed nothing.
local run = vim.system(H.params.data.outside, { cwd = H.ws, text = true }):wait(30000)
assert(run.code == 0, 'takeback run failed: ' .. tostring(run.stderr))
H.agent(H.params.data.turn2)
H.agent(H.params.data.empty)
-- The plugin reloads the open buffers turn 2 changed on disk; until then the sidecar holds their
-- old text, a buffer that differs from the disk, and a preview of their changes is a conflict.
H.wait('the plugin to reload the changed buffers', function()
  return H.text(notes) == H.read(H.path('notes.md')) and H.text(f) == H.read(H.path('f.txt'))
end, 10000)
H.track('TakebackList')
H.cmd_and_wait('Takeback list', 'TakebackList')
local qf = vim.fn.getqflist({ title = 1, items = 1 })
H.out.qf_title = qf.title
H.out.qf = {}
for _, it in ipairs(qf.items) do
  table.insert(H.out.qf, { text = it.text, file = it.bufnr > 0 and vim.fn.fnamemodify(vim.api.nvim_buf_get_name(it.bufnr), ':.') or vim.NIL, lnum = it.lnum })
end
vim.cmd('cclose')

-- The statusline component: the newest turn that changed something (turn 2) has one change in
-- place; once it is undone, nothing (turn 1's changes are not the newest turn's).
H.wait('the listing for status()', function() return takeback.status() ~= '' end, 5000)
H.out.status_before = takeback.status()
H.out.status_data = takeback.status_data()
H.cmd_and_wait('Takeback undo turn 2', 'TakebackApplied')
H.wait('status() after the undo', function() return takeback.status() == '' end, 5000)
H.out.status_data_after = takeback.status_data()
-- Completion offers the turns that changed something (turn 3 changed nothing).
H.out.complete_turn = vim.fn.getcompletion('Takeback undo turn ', 'cmdline')
`,
          turnData(c, {
            turn2: turnTwo(c.workspace, home),
            outside: ['node', BIN, 'run', '--', 'sh', '-c', "printf 'more\\n' >> y"],
            empty: [
              { event: hookEvent('user-prompt-submit.json', c.workspace, home, { prompt: 'What did you change?', prompt_id: 'c0ffee00-0000-4000-8000-000000000003' }) },
              { event: hookEvent('stop.json', c.workspace, home, { prompt_id: 'c0ffee00-0000-4000-8000-000000000003' }) },
            ],
          }),
        ),
      );
      expect(r.qf_title, 'the turn that changed nothing is not counted').toBe('takeback: 5 changes in 2 turns');
      const qf = r.qf as { text: string; file: string | null; lnum: number }[];
      const headings = qf.filter((i) => i.file === null).map((i) => i.text.replace(/ · .*/, ''));
      expect(headings, 'newest first; the change outside any turn among the turns by its time').toEqual(['Turn 2', 'Outside any turn', 'Turn 1']);
      // The command line places them the same way.
      const cli = execFileSync(process.execPath, [BIN, 'list'], { cwd: c.workspace, env: c.env, encoding: 'utf8' });
      expect(cli.split('\n').filter((l) => /^(Turn |Outside any turn)/.test(l)).map((l) => l.replace(/ · .*/, ''))).toEqual(['Turn t2', 'Outside any turn', 'Turn t1']);
      const entry = (file: string, id: string) => qf.find((i) => i.file === file && i.text.startsWith(`#${id} `));
      // Each entry opens at the change's first line: y gained line 2; f.txt's line 1 changed;
      // notes.md was rewritten from line 3.
      expect(entry('y', '4')?.lnum).toBe(2);
      expect(entry('f.txt', '3')?.lnum).toBe(1);
      expect(entry('notes.md', '5')?.lnum).toBe(3);

      expect(r.status_before).toBe('↶1');
      expect(r.status_data).toEqual({ turn: expect.any(String), seq: 2, changes: 1, total: 1 });
      expect(r.status_data_after).toEqual({ turn: expect.any(String), seq: 2, changes: 0, total: 1 });
      expect(r.complete_turn).toEqual(['2', '1']);
    });

    it('preview, messages and the picker: a preview tab named whole; messages that fit the command line, naming a change once; vim.ui.select, its preview, `a` applies', async () => {
      const c = start(bin(), `pick-${version}`);
      const r = ok(
        await runNvim(
          c,
          PRELUDE +
            String.raw`
H.agent(H.params.data.turn2)

-- The preview's tab is labelled with its whole name.
vim.cmd('Takeback preview 4')
H.wait('the preview buffer', function() return vim.bo.filetype == 'diff' end)
vim.cmd('redraw')
local row = {}
for col = 1, vim.o.columns do table.insert(row, vim.fn.screenstring(1, col)) end
H.out.tabline = vim.trim(table.concat(row))
H.out.preview_name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t')
H.out.preview_head = H.lines(0)[1]
vim.cmd('tabclose')

-- Neovim's own vim.notify on a narrow screen: each message fits the command line (a taller one
-- stops at "Press ENTER"); :Takeback messages has it whole.
local caught = vim.notify
vim.notify = H.builtin_notify
vim.o.columns = 44
vim.o.cmdheight = 1
vim.cmd('messages clear')
H.cmd_and_wait('Takeback undo 4', 'TakebackApplied')
vim.notify = caught
local shown = vim.split(vim.trim(vim.fn.execute('messages')), '\n')
H.out.echoed = shown[#shown]
H.out.echospace = vim.v.echospace
local history = require('takeback.util').history
H.out.full = history[#history].msg
vim.o.columns = 80
vim.cmd('Takeback messages')
H.out.messages_buffer = H.lines(0)
vim.cmd('close')

-- The picker, through vim.ui.select: the entries, then the choice of change 4 (undone: a redo
-- preview), then 'a' in the preview applies it.
local picked
vim.ui.select = function(items, opts, on_choice)
  picked = { prompt = opts.prompt, kind = opts.kind, items = vim.tbl_map(opts.format_item, items) }
  for _, it in ipairs(items) do
    if it.selector.ids and it.selector.ids[1] == '4' then
      return on_choice(it)
    end
  end
  on_choice(nil)
end
vim.cmd('Takeback pick')
H.wait('the picked preview', function() return vim.bo.filetype == 'diff' and vim.api.nvim_buf_get_name(0):match('takeback: redo 4$') ~= nil end)
H.out.picked = picked
H.out.picked_preview = H.lines(0)
local n = #H.events.TakebackApplied
vim.cmd('normal a')
H.wait('the redo from the preview', function() return #H.events.TakebackApplied > n end)
H.out.applied = H.events.TakebackApplied[n + 1].result
H.out.notes_after = H.text(notes)
`,
          turnData(c, { turn2: turnTwo(c.workspace, c.env.HOME!) }),
          60_000,
          { screen: true },
        ),
      );
      expect(r.preview_name).toBe('takeback: undo 4');
      expect(r.tabline).toContain('takeback: undo 4');
      expect(r.tabline).not.toMatch(/t\/\//);
      expect(r.preview_head, 'the change is named once').toBe('# takeback: undo change 4 would change 1 file');

      expect(r.full, 'the change is named once').toBe('takeback: undid change 4: notes.md');
      const echoed = r.echoed as string;
      expect([...echoed].length).toBeLessThanOrEqual(r.echospace as number);
      expect(echoed).toMatch(/^takeback:.* … \(:Takeback messages\)$/);
      expect((r.messages_buffer as string[]).some((l) => l.endsWith('takeback: undid change 4: notes.md'))).toBe(true);

      const picked = r.picked as { prompt: string; kind: string; items: string[] };
      expect(picked.kind).toBe('takeback');
      expect(picked.items.filter((t) => t.startsWith('Turn')).map((t) => t.replace(/ · .*/, ''))).toEqual(['Turn 2', 'Turn 1']);
      expect(picked.items).toContainEqual(expect.stringMatching(/^ {2}#4 Write .*notes\.md.*\[undone\]$/));
      expect(picked.items).toContainEqual(expect.stringMatching(/^ {2}#3 Bash: sed -i .* · f\.txt, x, y and 1 more$/));
      expect((r.picked_preview as string[]).join('\n')).toContain('+Rewritten.');
      const applied = r.applied as { written: boolean; sets: string[]; direction: string };
      expect(applied).toMatchObject({ written: true, sets: ['4'] });
      expect(r.notes_after).toBe('# Notes\n\nRewritten.\n');
    });

    it('files without a final newline: undo and redo keep the bytes (a Write of a new file, an Edit of an open buffer)', async () => {
      const files = { ...WORKSPACE_BEFORE, 'plain.txt': 'no newline here' };
      const c = start(bin(), `noeol-${version}`, files);
      const home = c.env.HOME!;
      const ev = (f: string, patch: Record<string, unknown> = {}) => hookEvent(f, c.workspace, home, patch);
      const newFile = `${c.workspace}/src/lib/new.ts`;
      const plain = `${c.workspace}/plain.txt`;
      const write = { file_path: newFile, content: 'export const answer = 42;' };
      const edit = { file_path: plain, old_string: 'here', new_string: 'there', replace_all: false };
      const steps = [
        { event: ev('session-start.json') },
        { event: ev('user-prompt-submit.json') },
        { event: ev('pre-tool-use-write.json', { tool_input: write }) },
        { write: { path: newFile, content: write.content } },
        { event: ev('post-tool-use-write-create.json', { tool_input: write }) },
        { event: ev('pre-tool-use-edit.json', { tool_input: edit }) },
        { edit: { path: plain, old: 'here', new: 'there' } },
        { event: ev('post-tool-use-edit.json', { tool_input: edit }) },
        { event: ev('stop.json') },
      ];
      const r = ok(
        await runNvim(
          c,
          String.raw`
require('takeback').setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
local plain = H.open('plain.txt')
H.out.eol_before = vim.bo[plain].eol
H.agent(H.params.data.steps)
H.wait("the buffer to show the agent's edit", function() return H.lines(plain)[1] == 'no newline there' end, 5000)
local function state()
  return { plain = H.read(H.path('plain.txt')), new = H.read(H.path('src/lib/new.ts')), buf = H.lines(plain), eol = vim.bo[plain].eol, modified = vim.bo[plain].modified }
end
local d = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
H.out.undo = state()
H.out.undo_failed = d.result and d.result.failed or vim.NIL
d = H.cmd_and_wait('Takeback redo turn 1', 'TakebackApplied')
H.out.redo = state()
H.out.redo_failed = d.result and d.result.failed or vim.NIL
`,
          { steps },
        ),
      );
      expect(r.eol_before).toBe(false);
      expect(r.undo_failed).toEqual([]);
      expect(r.undo).toEqual({ plain: 'no newline here', new: null, buf: ['no newline here'], eol: false, modified: false });
      expect(r.redo_failed).toEqual([]);
      expect(r.redo).toEqual({ plain: 'no newline there', new: 'export const answer = 42;', buf: ['no newline there'], eol: false, modified: false });
    });

    it("a turn's edit no tool call made: the preview and the undo of the turn name it as left, with the command that takes it", async () => {
      const files = { ...WORKSPACE_BEFORE, 'plain.txt': 'the person\n' };
      const c = start(bin(), `unclaimed-${version}`, files);
      const home = c.env.HOME!;
      const ev = (f: string, patch: Record<string, unknown> = {}) => hookEvent(f, c.workspace, home, patch);
      const newFile = `${c.workspace}/src/lib/new.ts`;
      const write = { file_path: newFile, content: 'export const answer = 42;\n' };
      const steps = [
        { event: ev('session-start.json') },
        { event: ev('user-prompt-submit.json') },
        { event: ev('pre-tool-use-write.json', { tool_input: write }) },
        { write: { path: newFile, content: write.content } },
        { event: ev('post-tool-use-write-create.json', { tool_input: write }) },
        // The person edits a file while the turn is open: no tool call made it.
        { sh: "printf 'the person, again\\n' > plain.txt" },
        { event: ev('stop.json') },
      ];
      const r = ok(
        await runNvim(
          c,
          String.raw`
require('takeback').setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
H.open('plain.txt')
H.agent(H.params.data.steps)
vim.cmd('Takeback preview turn 1')
H.wait('the preview', function() return vim.bo.filetype == 'diff' end)
H.out.preview = H.lines(0)
vim.cmd('close')
local m = #H.messages
local d = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
H.out.undo_error = d.error
H.out.undo_messages = H.messages_since(m)
H.out.plain = H.read(H.path('plain.txt'))
H.out.new = H.read(H.path('src/lib/new.ts'))
`,
          { steps },
        ),
      );
      const left = 'left as it is: change 2, changed during the turn by no tool call (`:Takeback undo 2` takes it back)';
      expect(r.preview).toContain(`# ${left}`);
      expect((r.preview as string[]).join('\n')).not.toContain('plain.txt');
      expect(r.undo_error ?? null).toBeNull();
      expect((r.undo_messages as { msg: string }[]).map((x) => x.msg).join('\n')).toContain(left);
      expect(r.plain).toBe('the person, again\n');
      expect(r.new).toBeNull();
    });

    it('a change of nothing but the final newline of open buffers: undo and redo write the disk and reload the buffers', async () => {
      const files = { ...WORKSPACE_BEFORE, 'gain.txt': 'one', 'lose.txt': 'two\n' };
      const c = start(bin(), `eolonly-${version}`, files);
      const home = c.env.HOME!;
      const ev = (f: string, patch: Record<string, unknown> = {}) => hookEvent(f, c.workspace, home, patch);
      const gain = `${c.workspace}/gain.txt`;
      const lose = `${c.workspace}/lose.txt`;
      const editGain = { file_path: gain, old_string: 'one', new_string: 'one\n', replace_all: false };
      const editLose = { file_path: lose, old_string: 'two\n', new_string: 'two', replace_all: false };
      const steps = [
        { event: ev('session-start.json') },
        { event: ev('user-prompt-submit.json') },
        { event: ev('pre-tool-use-edit.json', { tool_input: editGain }) },
        { edit: { path: gain, old: 'one', new: 'one\n' } },
        { event: ev('post-tool-use-edit.json', { tool_input: editGain }) },
        { event: ev('pre-tool-use-edit.json', { tool_input: editLose }) },
        { edit: { path: lose, old: 'two\n', new: 'two' } },
        { event: ev('post-tool-use-edit.json', { tool_input: editLose }) },
        { event: ev('stop.json') },
      ];
      const r = ok(
        await runNvim(
          c,
          String.raw`
require('takeback').setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
local gain = H.open('gain.txt')
local lose = H.open('lose.txt')
H.agent(H.params.data.steps)
H.wait("the buffers to show the agent's edits", function() return vim.bo[gain].eol and not vim.bo[lose].eol end, 5000)
local function state()
  return {
    gain = H.read(H.path('gain.txt')), lose = H.read(H.path('lose.txt')),
    gain_buf = H.lines(gain), lose_buf = H.lines(lose),
    gain_eol = vim.bo[gain].eol, lose_eol = vim.bo[lose].eol,
    modified = vim.bo[gain].modified or vim.bo[lose].modified,
  }
end
local d = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
H.out.undo = state()
H.out.undo_result = d.result or vim.NIL
d = H.cmd_and_wait('Takeback redo turn 1', 'TakebackApplied')
H.out.redo = state()
H.out.redo_result = d.result or vim.NIL
`,
          { steps },
        ),
      );
      const result = (x: unknown) => x as { failed: unknown[]; sets: string[]; applied: { path: string; via: string }[] };
      expect(result(r.undo_result).failed).toEqual([]);
      expect(result(r.undo_result).sets.sort()).toEqual(['1', '2']);
      expect(result(r.undo_result).applied.map((a) => `${a.path} ${a.via}`).sort()).toEqual(['gain.txt disk', 'lose.txt disk']);
      expect(r.undo).toEqual({ gain: 'one', lose: 'two\n', gain_buf: ['one'], lose_buf: ['two'], gain_eol: false, lose_eol: true, modified: false });
      expect(result(r.redo_result).failed).toEqual([]);
      expect(r.redo).toEqual({ gain: 'one\n', lose: 'two', gain_buf: ['one'], lose_buf: ['two'], gain_eol: true, lose_eol: false, modified: false });
    });

    it('the shipped doc/tags are the ones :helptags makes from doc/takeback.txt', () => {
      const c = start(bin(), `tags-${version}`);
      const doc = path.join(c.base, 'doc');
      fs.mkdirSync(doc);
      fs.copyFileSync(path.join(PLUGIN_DIR, 'doc', 'takeback.txt'), path.join(doc, 'takeback.txt'));
      execFileSync(bin(), ['--clean', '--headless', '-c', `helptags ${doc}`, '-c', 'qa!'], { env: c.env, stdio: 'ignore' });
      expect(fs.readFileSync(path.join(PLUGIN_DIR, 'doc', 'tags'), 'utf8'), 'run :helptags clients/nvim/doc').toBe(fs.readFileSync(path.join(doc, 'tags'), 'utf8'));
    });

    // vim.pack is Neovim 0.12's: on 0.10 the case does not exist (rather than being skipped).
    if (version === '0.12') it('the vim.pack install of clients/nvim/README.md, as written, from a local clone: :Takeback and :help takeback are there', () => {
      const c = start(bin(), `pack-${version}`);
      // A clone source holding the plugin where takeback's repository holds it.
      const repo = path.join(c.base, 'takeback-repo');
      fs.cpSync(PLUGIN_DIR, path.join(repo, 'clients', 'nvim'), { recursive: true });
      const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { env: c.env, stdio: 'ignore' });
      execFileSync('git', ['init', '-q', repo], { env: c.env, stdio: 'ignore' });
      git('add', '-A');
      git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'plugin');
      const readme = fs.readFileSync(path.join(PLUGIN_DIR, 'README.md'), 'utf8');
      const block = /### vim\.pack[\s\S]*?```lua\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(block, 'the vim.pack block of the README').toBeDefined();
      const init = block!
        .replace(/^local takeback_git = .*$/m, `local takeback_git = ${JSON.stringify(`file://${repo}`)}`)
        .replace("vim.pack.add({ { src = takeback_git, name = 'takeback' } }, {", "vim.pack.add({ { src = takeback_git, name = 'takeback' } }, { confirm = false,");
      expect(init).toContain('file://');
      expect(init).toContain('confirm = false');
      const initFile = path.join(c.base, 'pack-init.lua');
      const out = path.join(c.base, 'pack-out.json');
      fs.writeFileSync(initFile, init);
      const check = `lua local ok = pcall(vim.cmd, 'help takeback-setup'); vim.fn.writefile({ vim.json.encode({ command = vim.fn.exists(':Takeback'), help = ok and vim.bo.buftype or '', setup = #vim.api.nvim_get_autocmds({ group = 'takeback' }) > 0 }) }, ${JSON.stringify(out)})`;
      execFileSync(bin(), ['--headless', '-u', initFile, '-i', 'NONE', '-n', '-c', check, '-c', 'qa!'], { cwd: c.workspace, env: c.env, stdio: 'ignore', timeout: 60_000 });
      expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual({ command: 2, help: 'help', setup: true });
    });

    /** `:checkhealth takeback` in case `c`, its report's lines joined (waited for up to its last section). */
    async function checkhealth(c: NvimCase): Promise<string> {
      const r = ok(
        await runNvim(
          c,
          String.raw`
require('takeback').setup({ cmd = H.params.cmd })
vim.cmd('checkhealth takeback')
H.wait('the health report', function()
  local text = table.concat(H.lines(0), '\n')
  return text:match('agent hooks') ~= nil and (text:match('no agent is hooked') ~= nil or text:match('every event') ~= nil or text:match('not trusted') ~= nil)
end, 20000)
H.out.health = H.lines(0)
`,
        ),
      );
      return (r.health as string[]).join('\n');
    }

    it(':checkhealth takeback reports the binary, its version, the handshake and the journal', async () => {
      const c = start(bin(), `health-${version}`);
      const text = await checkhealth(c);
      // Nothing hooked in this workspace, nor for the user: said, as a warning.
      expect(text).toMatch(/WARNING.*no agent is hooked here: run takeback init claude-code/);
      expect(text).not.toMatch(/ERROR/);
      expect(text).toMatch(/OK.*the help tags are found/);
      expect(text).toMatch(/OK.*sidecar: node .*bin\/takeback\.js serve/);
      expect(text).toMatch(/OK.*version: 0\.\d+\.\d+/);
      expect(text).toMatch(/OK.*handshake: serverInfo takeback 0\.\d+\.\d+/);
      expect(text).toMatch(new RegExp(`OK.*journal: ${c.env.TAKEBACK_HOME!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`));
      // The watcher doctor names: Watchman where its service answers here, else @parcel/watcher and why.
      expect(text).toMatch(/- file watcher: (Watchman \d[\w.]* \(syncs without batching\)|@parcel\/watcher \(.+\))/);
      // And none where TAKEBACK_WATCH=0 turns it off.
      c.env.TAKEBACK_WATCH = '0';
      expect(await checkhealth(c)).toMatch(/- file watcher: none \(TAKEBACK_WATCH=0: every scan walks the workspace\)/);
    });

    it(":checkhealth takeback reports each agent's hooks: current ones OK, a Codex project not trusted as a warning", async () => {
      const c = start(bin(), `health-hooks-${version}`);
      const codexHome = path.join(c.base, 'codex-home');
      fs.mkdirSync(codexHome);
      c.env.CODEX_HOME = codexHome;
      for (const agent of ['claude-code', 'codex']) execFileSync(process.execPath, [BIN, 'init', agent], { cwd: c.workspace, env: c.env, stdio: 'ignore' });
      const text = await checkhealth(c);
      expect(text).not.toMatch(/no agent is hooked/);
      expect(text).toContain(`OK claude-code (workspace: ${path.join(c.workspace, '.claude', 'settings.local.json')}): every event, current`);
      expect(text).toMatch(new RegExp(`WARNING codex \\(workspace: .*hooks\\.json\\): not trusted: Codex does not trust this project yet`));
    });

    it('outside git, from a subfolder of a workspace whose journal recorded something, the client opens that workspace, as the command line does', async () => {
      const c = start(bin(), `root-${version}`);
      fs.rmSync(`${c.workspace}/.git`, { recursive: true, force: true });
      fs.mkdirSync(`${c.workspace}/sub`);
      fs.writeFileSync(`${c.workspace}/sub/s.txt`, 'a\n');
      execFileSync(process.execPath, [BIN, 'run', '--', 'sh', '-c', 'echo b > x'], { cwd: c.workspace, env: c.env });
      const r = ok(
        await runNvim(
          c,
          String.raw`
require('takeback').setup({ cmd = H.params.cmd })
vim.cmd.cd(vim.fn.fnameescape(H.path('sub')))
local s = H.open('sub/s.txt')
local cs = vim.lsp.get_clients({ bufnr = s, name = 'takeback' })
H.out.root = cs[1].config.root_dir
H.out.clients = #H.takeback_clients()
`,
        ),
      );
      expect(r.root).toBe(c.workspace);
      expect(r.clients).toBe(1);
      expect(fs.readdirSync(`${c.env.TAKEBACK_HOME}/workspaces`)).toHaveLength(1);
    });

    it('setup() twice gives one augroup and one client, attached to every file buffer (no filetype, new files too)', async () => {
      const c = start(bin(), `setup-${version}`);
      const r = ok(
        await runNvim(
          c,
          String.raw`
local takeback = require('takeback')
takeback.setup({ cmd = H.params.cmd })
local n1 = #vim.api.nvim_get_autocmds({ group = 'takeback' })
H.out.clients_after_setup = #H.takeback_clients()
local notes = H.open('notes.md')
takeback.setup({ cmd = H.params.cmd })
local n2 = #vim.api.nvim_get_autocmds({ group = 'takeback' })
local x = H.open('x')
local new = H.open('brand-new.txt')
local scratch = vim.api.nvim_create_buf(true, true)
H.out.autocmds = { n1, n2 }
H.out.groups = #vim.tbl_filter(function(a) return a.group_name == 'takeback' end, vim.api.nvim_get_autocmds({}))
H.out.clients = #H.takeback_clients()
H.out.attached = {}
for name, b in pairs({ notes = notes, x = x, new = new, scratch = scratch }) do
  H.out.attached[name] = #vim.lsp.get_clients({ bufnr = b, name = 'takeback' })
end
H.out.filetypes = { x = vim.bo[x].filetype, new = vim.bo[new].filetype }
H.out.root = H.takeback_clients()[1].config.root_dir
local ok_bad, err_bad = pcall(takeback.setup, { signs = { scope = 'everything' } })
H.out.bad_option = err_bad
H.out.autocmds_after_bad = #vim.api.nvim_get_autocmds({ group = 'takeback' })
`,
        ),
      );
      expect(r.clients_after_setup, 'setup() alone starts nothing').toBe(0);
      const [n1, n2] = r.autocmds as number[];
      expect(n1).toBeGreaterThan(0);
      expect(n2).toBe(n1);
      expect(r.groups).toBe(n1);
      expect(r.clients).toBe(1);
      expect(r.attached).toEqual({ notes: 1, x: 1, new: 1, scratch: 0 });
      expect(r.filetypes).toEqual({ x: '', new: 'text' });
      expect(r.root).toBe(c.workspace);
      expect(r.bad_option).toMatch(/signs\.scope/);
      expect(r.autocmds_after_bad).toBe(n1);
    });
  });
}
