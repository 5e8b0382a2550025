-- :Takeback {subcommand} [args]: list, preview, undo, redo, pick, messages. The `!` of undo/redo
-- (":Takeback undo!", ":Takeback! undo" or a trailing "!") replaces later changes. The word
-- `hunk` (":Takeback undo hunk") and a range (":'<,'>Takeback undo") narrow preview, undo and redo
-- to the agent's hunks at the cursor's line or in the range of the current buffer.

local selector = require('takeback.selector')
local util = require('takeback.util')

local M = {}

M.subcommands = { 'list', 'preview', 'undo', 'redo', 'pick', 'messages' }

---@param args { fargs: string[], bang: boolean, range?: integer, line1?: integer, line2?: integer }
function M.run(args)
  local takeback = require('takeback')
  takeback._ensure_setup()
  local words = vim.deepcopy(args.fargs)
  local sub = table.remove(words, 1) or 'list'
  local bang = args.bang
  if sub:sub(-1) == '!' then
    bang, sub = true, sub:sub(1, -2)
  end
  if words[#words] == '!' then
    bang = true
    table.remove(words)
  end
  if sub == 'list' then
    local opts = {}
    for _, w in ipairs(words) do
      if w == 'all' then
        opts.all = true
      else
        opts.turn = w
      end
    end
    return takeback.list(opts)
  end
  if sub == 'pick' then
    local opts = {}
    for _, w in ipairs(words) do
      if w == 'undo' or w == 'redo' or w == 'preview' then
        opts.action = w
      elseif w == 'all' then
        opts.all = true
      else
        return util.notify(('unknown word %q after pick: use undo, redo, preview or all'):format(w), vim.log.levels.ERROR)
      end
    end
    return takeback.pick(opts)
  end
  if sub == 'messages' then
    return takeback.messages()
  end
  if sub ~= 'preview' and sub ~= 'undo' and sub ~= 'redo' then
    return util.notify(
      ('unknown subcommand %q: use %s'):format(sub, table.concat(M.subcommands, ', ')),
      vim.log.levels.ERROR
    )
  end
  local hunk = false
  for i = #words, 1, -1 do
    if words[i] == 'hunk' then
      hunk = true
      table.remove(words, i)
    end
  end
  local sel, err
  if hunk or (args.range or 0) > 0 then
    local line = vim.api.nvim_win_get_cursor(0)[1]
    local lines = (args.range or 0) > 0 and { start = args.line1, ['end'] = args.line2 } or { start = line, ['end'] = line }
    sel, err = require('takeback.hunks').selector(words, vim.api.nvim_get_current_buf(), lines, sub == 'redo' and 'redo' or 'undo')
  else
    sel, err = selector.parse(words)
  end
  if not sel then
    return util.notify(err, vim.log.levels.ERROR)
  end
  if sub == 'preview' then
    return takeback.preview(sel)
  end
  takeback[sub](sel, { force = bang })
end

--- Completion for :Takeback.
function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline, '%s+', { trimempty = false })
  -- words[1] is "Takeback" (or "Takeback!"); the last word is the one being completed.
  local n = #words
  local function filter(list)
    return vim.tbl_filter(function(s)
      return vim.startswith(s, arglead)
    end, list)
  end
  if n <= 2 then
    return filter(M.subcommands)
  end
  local sub = words[2]:gsub('!$', '')
  if sub == 'list' then
    return filter({ 'all' })
  end
  if sub == 'pick' then
    return filter({ 'preview', 'undo', 'redo', 'all' })
  end
  if sub ~= 'preview' and sub ~= 'undo' and sub ~= 'redo' then
    return {}
  end
  local takeback = require('takeback')
  local file = util.buf_file(vim.api.nvim_get_current_buf())
  local root = file and util.root_for(file) or util.root_for(nil)
  local list = root and takeback.lists[root]
  local words_after = selector.complete(words[n - 1], list)
  if words[n - 1] ~= 'turn' and words[n - 1] ~= 'after' then
    table.insert(words_after, 'hunk')
  end
  return filter(words_after)
end

return M
