-- :Takeback preview: what an undo (or redo) would do, writing nothing. Layout 'diff' shows the
-- unified diffs (now → after the step) in a scratch buffer with filetype diff; layout 'split'
-- puts the current buffer beside its text after the step, in diff mode, when the step touches
-- that file (other files still go to the diff buffer).

local client = require('takeback.client')
local config = require('takeback.config')
local diff = require('takeback.diff')
local selector = require('takeback.selector')
local util = require('takeback.util')

local M = {}

--- The lines of the diff buffer for a PreviewResult.
---@param sel table
---@param p table PreviewResult
---@return string[]
function M.lines(sel, p)
  local out = {}
  local files = p.files or {}
  local step = p.direction == 'redo' and 'redo' or 'undo'
  local sets = vim.deepcopy(p.sets or {})
  table.sort(sets, function(a, b)
    return tonumber(a) < tonumber(b)
  end)
  local named = {}
  for _, id in ipairs(sel.ids or {}) do
    table.insert(named, id)
  end
  table.sort(named, function(a, b)
    return tonumber(a) < tonumber(b)
  end)
  table.insert(
    out,
    ('# takeback: %s %s would change %s%s'):format(
      step,
      selector.describe(sel),
      util.plural(#files, 'file'),
      -- The ids are named unless the selector named exactly those already.
      #sets > 0 and not vim.deep_equal(named, sets)
          and (' (%s %s)'):format(#sets == 1 and 'change' or 'changes', table.concat(sets, ', '))
        or ''
    )
  )
  local left = require('takeback.undo').left_out(p.skipped, step)
  for _, line in ipairs(left) do
    table.insert(out, '# ' .. line)
  end
  for _, s in ipairs(p.skipped or {}) do
    if not s.reason:match('^left as they are: ') then
      table.insert(out, ('# skipped change %s: %s'):format(s.id, s.reason))
    end
  end
  if (p.conflicts or 0) > 0 then
    table.insert(
      out,
      ('# %s changed since: `:Takeback %s! %s` would replace them'):format(
        util.plural(p.conflicts, 'file'),
        step,
        selector.format(sel)
      )
    )
  end
  for _, g in ipairs(p.gaps or {}) do
    table.insert(out, ('# not kept: %s (%s) %s'):format(g.path, g.reason, g.detail or ''))
  end
  for _, f in ipairs(files) do
    table.insert(out, '')
    -- Words, not the protocol's names: "put back", "unsaved in editor"; a merge says that it
    -- keeps the later edits, and a file the step would leave as it is says so.
    local words = f.action == 'none' and 'already in place'
      or f.merged and (step == 'redo' and 'write again, keeping later changes' or 'put back, keeping later changes')
      or (tostring(f.action):gsub('-', ' '))
    local head = ('# %s: %s'):format(f.path, words)
    if f.conflict then
      head = head .. ' · conflict: ' .. require('takeback.undo').conflict_detail(f.conflict)
    end
    table.insert(out, head)
    if f.note then
      table.insert(out, '# ' .. f.note)
    end
    if f.diff then
      local d = vim.split(f.diff, '\n', { plain = true })
      if d[#d] == '' then
        table.remove(d)
      end
      vim.list_extend(out, d)
    end
  end
  return out
end

--- Names a scratch buffer `name`, or `name (2)`, `name (3)`… when a buffer has it already.
local function set_unique_name(b, name)
  if pcall(vim.api.nvim_buf_set_name, b, name) then
    return
  end
  for i = 2, 99 do
    if pcall(vim.api.nvim_buf_set_name, b, ('%s (%d)'):format(name, i)) then
      return
    end
  end
end

local function scratch(name, lines, ft)
  local b = vim.api.nvim_create_buf(false, true)
  vim.bo[b].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  vim.bo[b].filetype = ft or ''
  set_unique_name(b, name)
  return b
end

--- The name of the diff buffer: "takeback: undo turn 1". No '/' in it, so the tab line, which
--- shortens every part of a path but the last, shows it whole.
---@param sel table
---@param direction string
---@return string
function M.buffer_name(sel, direction)
  return ('takeback: %s %s'):format(direction == 'redo' and 'redo' or 'undo', selector.format(sel))
end

local counter = 0

--- Shows a PreviewResult. Returns the buffers it opened: { diff = bufnr?, split = bufnr? }.
---@param sel table
---@param p table PreviewResult
---@param root string
---@param from_buf integer the buffer the command was run from
function M.show(sel, p, root, from_buf)
  counter = counter + 1
  local opened = {}
  local file = util.buf_file(from_buf)
  local rel = file and util.relative(root, file)
  if config.options.preview.layout == 'split' and rel then
    for _, f in ipairs(p.files or {}) do
      if f.path == rel and f.diff then
        local now = vim.api.nvim_buf_get_lines(from_buf, 0, -1, false)
        local after = diff.apply(now, f.diff)
        if after then
          local win = vim.fn.bufwinid(from_buf)
          if win ~= -1 then
            vim.api.nvim_set_current_win(win)
          end
          vim.cmd('vertical leftabove new')
          local b = vim.api.nvim_get_current_buf()
          vim.bo[b].buftype = 'nofile'
          vim.bo[b].bufhidden = 'wipe'
          vim.bo[b].swapfile = false
          vim.api.nvim_buf_set_lines(b, 0, -1, false, after)
          vim.bo[b].modifiable = false
          vim.bo[b].filetype = vim.bo[from_buf].filetype
          pcall(vim.api.nvim_buf_set_name, b, ('takeback://%s-%d/%s'):format(p.direction or 'undo', counter, rel))
          vim.cmd('diffthis')
          vim.cmd('wincmd p')
          vim.cmd('diffthis')
          opened.split = b
          if #p.files == 1 then
            return opened
          end
        end
      end
    end
  end
  local lines = M.lines(sel, p)
  vim.cmd(config.options.preview.open_cmd)
  local b = scratch(M.buffer_name(sel, p.direction), lines, 'diff')
  vim.api.nvim_win_set_buf(0, b)
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = b, nowait = true, desc = 'close the preview' })
  local step = p.direction == 'redo' and 'redo' or 'undo'
  vim.keymap.set('n', 'a', function()
    -- The step shown, from the buffer it was asked in (its workspace), once the preview is closed.
    local bufnr = vim.api.nvim_buf_is_valid(from_buf) and from_buf or nil
    pcall(vim.cmd, 'close')
    require('takeback.undo').run(step, sel, { bufnr = bufnr })
  end, { buffer = b, nowait = true, desc = ('takeback: %s what this preview shows'):format(step) })
  opened.diff = b
  return opened
end

--- Asks undo/preview for `sel` and shows it. `opts.on_done(err, result, opened)` runs after.
---@param sel table
---@param opts? { direction?: 'undo'|'redo', on_done?: function }
function M.run(sel, opts)
  opts = opts or {}
  local from = vim.api.nvim_get_current_buf()
  local c, root = client.for_buf(from)
  local function done(err, result, opened)
    if opts.on_done then
      opts.on_done(err, result, opened)
    end
  end
  if not c or not root then
    return done({ message = 'the sidecar is not running' })
  end
  require('takeback.undo').reload(root)
  local params = { selector = sel, direction = opts.direction or 'undo' }
  client.request(c, 'undo/preview', params, function(err, result)
    if err then
      util.notify(require('takeback.undo').describe_error(err), vim.log.levels.ERROR)
      return done(err)
    end
    result.direction = result.direction or params.direction
    if #(result.files or {}) == 0 then
      util.notify(('nothing to %s for %s'):format(params.direction, selector.describe(sel)))
      return done(nil, result, {})
    end
    done(nil, result, M.show(sel, result, root, from))
  end)
end

return M
