-- The agent's hunks in a buffer: the selector of ":Takeback undo hunk", ":'<,'>Takeback undo"
-- and ":Takeback preview hunk" (the file's change, narrowed to the lines under the cursor or in
-- the range), and the jumps between hunks a user maps (]c / [c style; nothing is mapped here).
-- The hunks come from the sidecar (undo/preview narrowed to the file: each hunk's lines in the
-- buffer's text now), so they follow unsaved edits above them.

local client = require('takeback.client')
local selector = require('takeback.selector')
local util = require('takeback.util')

local M = {}

--- The buffer's workspace, its path there and its running client; nil and a message when it is
--- not a file in a workspace whose sidecar runs.
---@param bufnr integer
---@return table? ctx { root, rel, client }, string? err
local function context(bufnr)
  local file = util.buf_file(bufnr)
  local root = file and util.root_for(file)
  local rel = root and util.relative(root, file)
  if not rel then
    return nil, 'the current buffer is not a file in the workspace'
  end
  local c = client.get(root)
  if not c then
    return nil, 'the sidecar is not running'
  end
  return { root = root, rel = rel, client = c }
end

--- The selector of the agent's change to `ctx.rel` still in place, as the signs show it (the
--- newest change that touches the file, or its turn): from the last listing, or a new one.
local function file_selector(ctx)
  local takeback = require('takeback')
  local list = takeback.lists[ctx.root]
  if not list then
    local err, result = client.request_sync(ctx.client, 'changes/list', {})
    if err or not result then
      return nil, err and err.message or 'no answer to changes/list'
    end
    takeback._remember_list(ctx.root, result)
    list = result
  end
  local sel = require('takeback.signs').selector_for(list, ctx.rel)
  if not sel then
    return nil, ('no change of the agent is in place in %s'):format(ctx.rel)
  end
  return sel
end

--- The selector for a step on the agent's hunks at `lines` ({ start, end }, 1-based) of buffer
--- `bufnr`: the selector `words` name (default for undo and preview: the file's change as the
--- signs show it; for redo: what the last undo of the file took back), narrowed to the file and
--- those lines. Nil and a message when there is none.
---@param words string[]
---@param bufnr integer
---@param lines { start: integer, end: integer }
---@param direction 'undo'|'redo'
---@return table?, string?
function M.selector(words, bufnr, lines, direction)
  local ctx, err = context(bufnr)
  if not ctx then
    return nil, err
  end
  local sel
  if #words > 0 then
    sel, err = selector.parse(words, bufnr)
  elseif direction == 'redo' then
    sel = { last = true }
  else
    sel, err = file_selector(ctx)
  end
  if not sel then
    return nil, err
  end
  sel.paths = { ctx.rel }
  sel.lines = { start = lines.start, ['end'] = lines['end'] }
  return sel
end

--- The agent's hunks in buffer `bufnr` (default: the current one), in order: { start, end, set }
--- with the lines of each in the buffer now (`end < start`: lines the agent removed, which an
--- undo puts back before `start`). Asks the sidecar and waits for it. Empty when there are none.
---@param bufnr? integer
---@return { start: integer, end: integer, set: string }[]
function M.list(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local ctx = context(bufnr)
  local sel = ctx and file_selector(ctx)
  if not sel then
    return {}
  end
  local err, result = client.request_sync(ctx.client, 'undo/preview', { selector = sel, direction = 'undo' })
  local out = {}
  if err or not result then
    return out
  end
  for _, f in ipairs(result.files or {}) do
    if f.path == ctx.rel then
      for _, h in ipairs(f.hunks or {}) do
        table.insert(out, { start = h.start, ['end'] = h['end'], set = h.set })
      end
    end
  end
  table.sort(out, function(a, b)
    return a.start < b.start
  end)
  return out
end

--- The line a jump to hunk `h` lands on: its first line, or for lines removed the line above.
local function landing(h)
  if h['end'] < h.start then
    return math.max(h.start - 1, 1)
  end
  return h.start
end

--- Moves the cursor to the agent's next hunk below it (`direction` 'next') or above it ('prev')
--- in the current buffer, wrapping around as ]c does with 'wrapscan'. Returns the hunk, or nil
--- (and says so) when the buffer has none.
---@param direction 'next'|'prev'
---@return table?
function M.jump(direction)
  local hunks = M.list(0)
  if #hunks == 0 then
    util.notify('no hunk of the agent in this buffer')
    return nil
  end
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local pick
  if direction == 'prev' then
    for i = #hunks, 1, -1 do
      if landing(hunks[i]) < line then
        pick = hunks[i]
        break
      end
    end
    pick = pick or hunks[#hunks]
  else
    for _, h in ipairs(hunks) do
      if landing(h) > line then
        pick = h
        break
      end
    end
    pick = pick or hunks[1]
  end
  local count = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.min(landing(pick), count), 0 })
  return pick
end

return M
