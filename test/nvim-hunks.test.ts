// The Neovim plugin's per-hunk undo, in a real headless Neovim 0.10 and 0.12 with the real
// sidecar and the real hook entry point (test/support/nvim.ts). The agent's Write changes two
// lines of code.txt far apart; the person then adds two lines above and saves. The hunks are
// placed in the buffer as it is now (takeback.hunks), next_hunk/prev_hunk jump between them,
// `:Takeback preview hunk` shows only the hunk under the cursor, `:Takeback undo hunk` takes
// back only that one through the buffer (disk written, change partial, `u` brings it back),
// a range (`:3,6Takeback undo`) takes the one in it, `:Takeback redo` puts back exactly that one,
// and where no hunk is nothing is written. A per-hunk undo beside a line the person changed from
// the shell, then `u` and `:w`: the disk is as before the undo, and the listing says the agent's
// change is applied again, with no save of the person's recorded (the lines are the agent's).
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { findNvim, missingEditorMessage, type NvimVersion } from './support/editors.js';
import { newCase, ok, runNvim, writeTurn, type NvimCase } from './support/nvim.js';
import { lines } from './support/takeback.js';

const requireEditors = process.env.TAKEBACK_REQUIRE_EDITORS === '1';

const cases: NvimCase[] = [];
afterAll(() => {
  if (process.env.TAKEBACK_KEEP_TMP) return;
  for (const c of cases) fs.rmSync(c.base, { recursive: true, force: true, maxRetries: 5 });
});

const TWENTY = lines('line', 20);
const AGENT = TWENTY.replace('line 3\n', 'agent 3\n').replace('line 15\n', 'agent 15\n');
const MINE = `// mine 1\n// mine 2\n`;


const CASE = String.raw`
vim.o.autoread = false
local takeback = require('takeback')
takeback.setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
local b = H.open('code.txt')
H.agent(H.params.data.turn)
H.wait('the buffer shows the agent change', function() return H.text(b) == H.params.data.agent end)
-- The person's own lines above the agent's, saved.
vim.api.nvim_buf_set_lines(b, 0, 0, false, { '// mine 1', '// mine 2' })
vim.cmd('silent write')

H.out.hunks = takeback.hunks(b)
vim.api.nvim_win_set_cursor(0, { 1, 0 })
local jumps = {}
for _, dir in ipairs({ 'next', 'next', 'next', 'prev' }) do
  takeback[dir .. '_hunk']()
  table.insert(jumps, vim.api.nvim_win_get_cursor(0)[1])
end
H.out.jumps = jumps

-- The agent's line 15 is line 17 now.
vim.api.nvim_win_set_cursor(0, { 17, 0 })
vim.cmd('Takeback preview hunk')
H.wait('the preview', function() return vim.bo.filetype == 'diff' end)
H.out.preview = H.lines(0)
vim.cmd('close')
vim.api.nvim_set_current_buf(b)

vim.api.nvim_win_set_cursor(0, { 17, 0 })
local m = #H.messages
local d = H.cmd_and_wait('Takeback undo hunk', 'TakebackApplied')
H.out.undo_error = d.error
H.out.undo_messages = H.messages_since(m)
H.out.after_undo = H.text(b)
H.out.disk_after_undo = H.read(H.path('code.txt'))
H.out.modified_after_undo = vim.bo[b].modified
local c = takeback.get_client()
local _, list = require('takeback.client').request_sync(c, 'changes/list', {})
-- The agent's change (the person's save of their own lines is a set of its own, newer).
local function agent_set(l)
  for _, s in ipairs(l.sets) do
    if s.source.kind ~= 'person' then return s end
  end
end
H.out.state_after_undo = agent_set(list).state

vim.cmd('silent normal! u')
H.out.after_u = H.text(b)
vim.cmd('silent redo')
H.out.after_redo_keys = H.text(b)

-- Nothing of the agent's on line 10: a message, nothing written.
vim.api.nvim_win_set_cursor(0, { 10, 0 })
local n = #H.messages
local none = H.cmd_and_wait('Takeback undo hunk', 'TakebackApplied')
H.out.none_error = none.error and none.error.message
H.out.none_messages = H.messages_since(n)
H.out.after_none = H.text(b)

-- A range around the agent's line 3 (line 5 now).
local r = H.cmd_and_wait('3,6Takeback undo', 'TakebackApplied')
H.out.range_error = r.error
H.out.after_range = H.text(b)
H.out.disk_after_range = H.read(H.path('code.txt'))
_, list = require('takeback.client').request_sync(c, 'changes/list', {})
H.out.state_after_range = agent_set(list).state

local rr = H.cmd_and_wait('Takeback redo', 'TakebackApplied')
H.out.redo_error = rr.error
H.out.after_redo = H.text(b)
H.out.disk_after_redo = H.read(H.path('code.txt'))
`;

const GIVEN_BACK = String.raw`
vim.o.autoread = false
local takeback = require('takeback')
takeback.setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
local b = H.open('code.txt')
H.agent(H.params.data.turn)
H.wait('the buffer shows the agent change', function() return H.text(b) == H.params.data.agent end)
-- The person's line 10, changed from the shell (no save in the editor), the buffer reloaded.
H.write(H.path('code.txt'), H.params.data.edited)
vim.cmd('silent edit!')
H.wait('the buffer shows the edit', function() return H.text(b) == H.params.data.edited end)
local c = takeback.get_client()
local function sets()
  local _, l = require('takeback.client').request_sync(c, 'changes/list', {})
  local out = {}
  for _, s in ipairs(l.sets) do
    table.insert(out, { s.id, s.source.kind, s.state })
  end
  return out
end

vim.api.nvim_win_set_cursor(0, { 15, 0 })
local d = H.cmd_and_wait('Takeback undo hunk', 'TakebackApplied')
H.out.undo_error = d.error
H.out.disk_after_undo = H.read(H.path('code.txt'))
H.out.sets_after_undo = sets()

vim.cmd('silent normal! u')
H.out.after_u = H.text(b)
vim.cmd('silent write')
H.out.disk_after_write = H.read(H.path('code.txt'))
H.out.sets_after_write = sets()
`;

for (const version of ['0.10', '0.12'] as NvimVersion[]) {
  const nvim = findNvim(version);
  const missing = missingEditorMessage(`nvim-${version}`);
  const skip = !nvim && !requireEditors;

  describe.skipIf(skip)(`Neovim ${version}: the agent's hunks`, () => {
    it('places, jumps, previews, undoes by hunk and by range through the buffer; `u` brings a hunk back; redo puts back exactly the last one', async () => {
      if (!nvim) throw new Error(`${missing} (TAKEBACK_REQUIRE_EDITORS=1)`);
      const c = newCase(nvim, `hunks-${version}`, { 'code.txt': TWENTY });
      cases.push(c);
      const r = ok(await runNvim(c, CASE, { turn: writeTurn(c, 'code.txt', AGENT, 'sess-hunks', 'toolu_hunk1'), agent: AGENT }, 90_000));
      const edited = MINE + AGENT;
      expect(r.hunks).toEqual([
        { start: 5, end: 5, set: '1' },
        { start: 17, end: 17, set: '1' },
      ]);
      expect(r.jumps).toEqual([5, 17, 5, 17]);
      const preview = (r.preview as string[]).join('\n');
      expect(preview).toContain('-agent 15\n+line 15');
      expect(preview).not.toContain('agent 3');

      const oneBack = edited.replace('agent 15\n', 'line 15\n');
      expect(r.undo_error ?? null).toBeNull();
      expect(r.after_undo).toBe(oneBack);
      expect(r.disk_after_undo).toBe(oneBack);
      expect(r.modified_after_undo).toBe(false);
      // The turn as the listing names it ("Turn 1"), not by its id ("turn t1").
      expect((r.undo_messages as { msg: string }[]).map((x) => x.msg)).toEqual(['takeback: undid turn 1 to code.txt at line 17 (change 1): code.txt']);
      expect(r.state_after_undo).toBe('partial');
      expect(r.after_u).toBe(edited);
      expect(r.after_redo_keys).toBe(oneBack);

      expect(r.none_error).toContain('no hunk of');
      expect(r.after_none).toBe(oneBack);

      expect(r.range_error ?? null).toBeNull();
      const bothBack = MINE + TWENTY;
      expect(r.after_range).toBe(bothBack);
      expect(r.disk_after_range).toBe(bothBack);
      expect(r.state_after_range).toBe('undone');

      expect(r.redo_error ?? null).toBeNull();
      expect(r.after_redo).toBe(oneBack);
      expect(r.disk_after_redo).toBe(oneBack);
    });

    it("a per-hunk undo beside the person's line, then `u` and `:w`: applied again in the listing, no save of the person's", async () => {
      if (!nvim) throw new Error(`${missing} (TAKEBACK_REQUIRE_EDITORS=1)`);
      const c = newCase(nvim, `hunks-given-back-${version}`, { 'code.txt': TWENTY });
      cases.push(c);
      const edited = AGENT.replace('line 10\n', 'mine 10\n');
      const r = ok(await runNvim(c, GIVEN_BACK, { turn: writeTurn(c, 'code.txt', AGENT, 'sess-given', 'toolu_given1'), agent: AGENT, edited }, 90_000));
      expect(r.undo_error ?? null).toBeNull();
      expect(r.disk_after_undo).toBe(edited.replace('agent 15\n', 'line 15\n'));
      expect(r.sets_after_undo).toEqual([['1', 'tool', 'partial']]);
      expect(r.after_u).toBe(edited);
      expect(r.disk_after_write).toBe(edited);
      expect(r.sets_after_write).toEqual([['1', 'tool', 'applied']]);
    });
  });
}
