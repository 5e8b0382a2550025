// The person's saves in a real headless Neovim 0.10 and 0.12 with the real sidecar and the real
// hook entry point (test/support/nvim.ts). The agent's Write changes lines 3 and 15 of code.txt;
// the person then changes line 10 in the buffer and saves (`:w`). The save is recorded as the
// person's ("saved in Neovim", outside any turn), the signs (computed from the journal against
// the buffer) mark only the agent's two lines, never the person's, and `:Takeback undo turn 1`
// takes back the agent's lines and keeps the person's (its preview: "put back, keeping later changes").
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


const CASE = String.raw`
vim.o.autoread = false
local takeback = require('takeback')
takeback.setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
local b = H.open('code.txt')
H.agent(H.params.data.turn)
H.wait('the buffer shows the agent change', function() return H.text(b) == H.params.data.agent end)
local function marks()
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, require('takeback.signs').ns, 0, -1, {})) do
    table.insert(out, m[2] + 1)
  end
  table.sort(out)
  return out
end
H.wait('the signs of the agent change', function() return #marks() == 2 end)
H.out.signs_before = marks()

-- The person changes line 10 and saves.
vim.api.nvim_buf_set_lines(b, 9, 10, false, { 'mine 10' })
local c = takeback.get_client()
local function person_set()
  local _, list = require('takeback.client').request_sync(c, 'changes/list', {})
  for _, s in ipairs(list.sets) do
    if s.source.kind == 'person' then return s end
  end
end
vim.cmd('silent write')
H.wait('the save to be recorded', function() return person_set() ~= nil end)
local s = person_set()
H.out.person = { label = s.label, turn = s.turn or vim.NIL, editor = s.source.editor, paths = vim.tbl_map(function(f) return f.path end, s.files) }
-- The signs after the journal moved: a refresh begun once the save was recorded.
local refreshed = false
require('takeback.signs').refresh(c.config.root_dir, function() refreshed = true end)
H.wait('the signs refreshed', function() return refreshed end)
H.out.signs_after_save = marks()

vim.cmd('Takeback preview turn 1')
H.wait('the preview buffer', function() return vim.bo.filetype == 'diff' end)
H.out.preview = H.lines(0)
vim.cmd('tabclose')
local d = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
H.out.undo_error = d.error
H.out.after_undo = H.text(b)
H.out.disk_after_undo = H.read(H.path('code.txt'))
`;

// The person changes the agent's line 3 and saves: undoing the agent's Write alone is refused,
// naming the save, and the message gives the plugin's own undo of both.
const OVER = String.raw`
vim.o.autoread = false
local takeback = require('takeback')
takeback.setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
local b = H.open('code.txt')
H.agent(H.params.data.turn)
H.wait('the buffer shows the agent change', function() return H.text(b) == H.params.data.agent end)
local c = takeback.get_client()
local function ids()
  local _, list = require('takeback.client').request_sync(c, 'changes/list', {})
  local out = {}
  for _, s in ipairs(list.sets) do
    out[s.source.kind == 'person' and 'person' or 'agent'] = s.id
  end
  return out
end
-- The person sees the agent's change listed before writing over it: the list comes from the
-- journal once the capture daemon has recorded the agent's turn (its end is answered before its
-- record; a save in between would be the turn's, as one between an agent's last change and its
-- Stop hook is).
H.wait('the agent change listed', function() return ids().agent ~= nil end)
vim.api.nvim_buf_set_lines(b, 2, 3, false, { 'mine 3' })
vim.cmd('silent write')
H.wait('the save to be recorded', function() return ids().person ~= nil end)
H.out.ids = ids()
local n = #H.messages
local d = H.cmd_and_wait('Takeback undo ' .. H.out.ids.agent, 'TakebackApplied')
H.out.undo_error = d.error
H.out.said = vim.tbl_map(function(m) return m.msg end, H.messages_since(n))
H.out.disk_after_undo = H.read(H.path('code.txt'))
`;

// The person types on line 10 before the agent's Write and does not save: the buffer, never
// reloaded, already holds what the turn's undo leaves (the person's line kept). The preview says
// so in words, the undo waits for the person's `:w`, and that save records it.
const UNSAVED_FIRST = String.raw`
vim.o.autoread = false
local takeback = require('takeback')
takeback.setup({ cmd = H.params.cmd })
H.track('TakebackApplied')
local b = H.open('code.txt')
vim.api.nvim_buf_set_lines(b, 9, 10, false, { 'mine 10' })
H.agent(H.params.data.turn)
local c = takeback.get_client()
local function turn_state()
  local _, list = require('takeback.client').request_sync(c, 'changes/list', {})
  for _, s in ipairs(list.sets) do
    if s.turn == 't1' then return s.state end
  end
end
H.wait('the turn to be recorded', function() return turn_state() == 'applied' end)
vim.cmd('Takeback preview turn 1')
H.wait('the preview buffer', function() return vim.bo.filetype == 'diff' end)
H.out.preview = H.lines(0)
vim.cmd('tabclose')
local n = #H.messages
local d = H.cmd_and_wait('Takeback undo turn 1', 'TakebackApplied')
H.out.undo_error = d.error
vim.api.nvim_set_current_buf(b)
vim.cmd('silent write!')
H.wait('the undo to be recorded', function() return turn_state() == 'undone' end, 10000)
vim.wait(300)
H.out.said = vim.tbl_map(function(m) return m.msg end, H.messages_since(n))
H.out.disk_after_save = H.read(H.path('code.txt'))
`;

for (const version of ['0.10', '0.12'] as NvimVersion[]) {
  const nvim = findNvim(version);
  const missing = missingEditorMessage(`nvim-${version}`);
  const skip = !nvim && !requireEditors;

  describe.skipIf(skip)(`Neovim ${version}: the person's saves`, () => {
    it("a save of the person's is theirs: the signs mark only the agent's lines, and the turn's undo keeps the person's line", async () => {
      if (!nvim) throw new Error(`${missing} (TAKEBACK_REQUIRE_EDITORS=1)`);
      const c = newCase(nvim, `person-${version}`, { 'code.txt': TWENTY });
      cases.push(c);
      const r = ok(await runNvim(c, CASE, { turn: writeTurn(c, 'code.txt', AGENT, 'sess-person', 'toolu_person1'), agent: AGENT }, 90_000));
      expect(r.signs_before).toEqual([3, 15]);
      expect(r.person).toEqual({ label: 'saved in Neovim', turn: null, editor: 'Neovim', paths: ['code.txt'] });
      expect(r.signs_after_save).toEqual([3, 15]);
      // The turn's undo is a merge over the person's save, and its preview says so.
      expect((r.preview as string[]).filter((l) => l.startsWith('# code.txt:'))).toEqual(['# code.txt: put back, keeping later changes']);
      expect(r.undo_error).toBeUndefined();
      const back = TWENTY.replace('line 10\n', 'mine 10\n');
      expect(r.after_undo).toBe(back);
      expect(r.disk_after_undo).toBe(back);
    });

    it("a save over the agent's line: undoing the agent's change alone is refused, naming the save, with `:Takeback undo` of both", async () => {
      if (!nvim) throw new Error(`${missing} (TAKEBACK_REQUIRE_EDITORS=1)`);
      const c = newCase(nvim, `person-over-${version}`, { 'code.txt': TWENTY });
      cases.push(c);
      const r = ok(await runNvim(c, OVER, { turn: writeTurn(c, 'code.txt', AGENT, 'sess-person', 'toolu_person2'), agent: AGENT }, 90_000));
      const { agent, person } = r.ids as { agent: string; person: string };
      expect(r.said).toContainEqual(
        `takeback: nothing undone for change ${agent}: code.txt changed since by #${person} (saved in Neovim): line 3 changed by the agent and line 3 since — \`:Takeback undo ${agent} ${person}\` takes both back. \`:Takeback undo! ${agent}\` replaces later changes`,
      );
      expect(r.disk_after_undo).toBe(AGENT.replace('agent 3\n', 'mine 3\n'));
    });

    it('unsaved text typed before the agent changed the file: the preview says the buffer holds the undo already, and the save records it', async () => {
      if (!nvim) throw new Error(`${missing} (TAKEBACK_REQUIRE_EDITORS=1)`);
      const c = newCase(nvim, `person-unsaved-${version}`, { 'code.txt': TWENTY });
      cases.push(c);
      const r = ok(await runNvim(c, UNSAVED_FIRST, { turn: writeTurn(c, 'code.txt', AGENT, 'sess-person', 'toolu_person3') }, 90_000));
      const preview = r.preview as string[];
      expect(preview).toContain('# code.txt: already in place');
      expect(preview).not.toContain('# code.txt: none');
      expect(r.undo_error).toBeUndefined();
      expect((r.said as string[]).filter((m) => m.includes('not recorded'))).toEqual([]);
      expect(r.disk_after_save).toBe(TWENTY.replace('line 10\n', 'mine 10\n'));
    });
  });
}
