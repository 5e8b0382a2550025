-- Marks the lines the agent changed in open buffers, like gitsigns: a sign beside each line
-- that an undo would take back. Computed from undo/preview (the diff's '-' lines are the
-- agent's lines as they are now), refreshed when the journal changes (changes/didChange), when
-- a buffer is attached and when it is written. Extmarks move with the text in between.

local client = require('takeback.client')
local config = require('takeback.config')
local diff = require('takeback.diff')
local util = require('takeback.util')

local M = {}

M.ns = vim.api.nvim_create_namespace('takeback_signs')

local hl = {
  add = 'TakebackAdd',
  change = 'TakebackChange',
  delete = 'TakebackDelete',
  topdelete = 'TakebackDelete',
}

function M.define_highlights()
  -- Added/Changed/Removed exist from 0.10; DiffAdd and friends everywhere.
  local function link(name, ...)
    for _, target in ipairs({ ... }) do
      if vim.fn.hlexists(target) == 1 then
        vim.api.nvim_set_hl(0, name, { link = target, default = true })
        return
      end
    end
  end
  link('TakebackAdd', 'Added', 'DiffAdd')
  link('TakebackChange', 'Changed', 'DiffChange')
  link('TakebackDelete', 'Removed', 'DiffDelete')
end

--- Per buffer: the marks last placed (for tests and statuslines): { line, kind }[].
---@type table<integer, table[]>
M.placed = {}

---@param bufnr integer
function M.clear(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
  M.placed[bufnr] = nil
end

---@param bufnr integer
---@param marks { line: integer, kind: string }[]
function M.place(bufnr, marks)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local o = config.options.signs
  local count = vim.api.nvim_buf_line_count(bufnr)
  local placed = {}
  for _, m in ipairs(marks) do
    if m.line >= 1 and m.line <= count then
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, m.line - 1, 0, {
        sign_text = o[m.kind],
        sign_hl_group = hl[m.kind],
        number_hl_group = o.numhl and hl[m.kind] or nil,
        priority = o.priority,
      })
      table.insert(placed, m)
    end
  end
  M.placed[bufnr] = placed
end

--- The selector whose undo takes back the agent's lines in `rel`, from a listing: the newest
--- change still in place that touches the file (its turn, with scope 'turn'), never a save of
--- the person's (source 'person'): the signs mark the agent's lines only.
---@param list table ListResult
---@param rel string
---@return table? selector
function M.selector_for(list, rel)
  for _, set in ipairs(list.sets or {}) do -- newest first
    if (set.state == 'applied' or set.state == 'partial') and not (set.source and set.source.kind == 'person') then
      for _, f in ipairs(set.files or {}) do
        if f.path == rel and not f.undone then
          if config.options.signs.scope == 'turn' and set.turn then
            return { turn = set.turn, paths = { rel } }
          end
          return { last = true, paths = { rel } }
        end
      end
    end
  end
  return nil
end

--- The buffers attached to the client of `root`, with their workspace paths.
local function buffers_of(root)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local file = vim.api.nvim_buf_is_loaded(b) and util.buf_file(b)
    local rel = file and util.relative(root, file)
    if rel then
      out[b] = rel
    end
  end
  return out
end

local generation = {}

--- Recomputes the marks of every loaded buffer of `root`'s workspace.
---@param root string
---@param done? fun()
function M.refresh(root, done)
  done = done or function() end
  local c = client.get(root)
  if not c or not config.options.signs.enabled then
    return done()
  end
  generation[root] = (generation[root] or 0) + 1
  local gen = generation[root]
  client.request(c, 'changes/list', {}, function(err, list)
    if err or not list or gen ~= generation[root] then
      return done()
    end
    require('takeback')._remember_list(root, list)
    local bufs = buffers_of(root)
    local waiting = 1
    local function finish()
      waiting = waiting - 1
      if waiting == 0 then
        util.emit('TakebackSigns', { root = root })
        done()
      end
    end
    for b, rel in pairs(bufs) do
      local sel = M.selector_for(list, rel)
      if not sel then
        M.clear(b)
      else
        waiting = waiting + 1
        client.request(c, 'undo/preview', { selector = sel, direction = 'undo' }, function(perr, preview)
          if gen == generation[root] then
            local marks = {}
            if not perr and preview then
              for _, f in ipairs(preview.files or {}) do
                if f.path == rel and f.diff then
                  marks = diff.marks(f.diff)
                end
              end
            end
            M.place(b, marks)
          end
          finish()
        end)
      end
    end
    finish()
  end)
end

local timers = {}

--- refresh(), at most once per `ms` per workspace (didChange can come in bursts).
function M.schedule_refresh(root, ms)
  if not config.options.signs.enabled then
    return
  end
  local t = timers[root]
  if not t then
    t = vim.uv.new_timer()
    timers[root] = t
  end
  t:stop()
  t:start(ms or 50, 0, vim.schedule_wrap(function()
    M.refresh(root)
  end))
end

--- Removes every mark (signs disabled, or setup() again).
function M.clear_all()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    M.clear(b)
  end
end

return M
