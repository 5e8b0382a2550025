-- The selector words of :Takeback (ID... | turn T | last | after T, optionally % for the current
-- file), as the protocol's Selector { ids | turn | last | afterTurn, paths } (`lines` comes from
-- `hunk` or a range: hunks.lua).

local util = require('takeback.util')

local M = {}

--- Parses the words after the subcommand. Returns the selector, or nil and a message.
---@param args string[]
---@param bufnr? integer the buffer that '%' means
---@return table?, string?
function M.parse(args, bufnr)
  local sel = {}
  local i = 1
  local kinds = 0
  while i <= #args do
    local a = args[i]
    if a == 'last' then
      sel.last = true
      kinds = kinds + 1
    elseif a == 'turn' or a == 'after' then
      local t = args[i + 1]
      if not t then
        return nil, ('%s needs a turn (e.g. `%s 2`)'):format(a, a)
      end
      sel[a == 'turn' and 'turn' or 'afterTurn'] = t
      kinds = kinds + 1
      i = i + 1
    elseif a == '%' or a == 'file' then
      local file = util.buf_file(bufnr or vim.api.nvim_get_current_buf())
      local root = file and util.root_for(file)
      local rel = root and util.relative(root, file)
      if not rel then
        return nil, 'the current buffer is not a file in the workspace'
      end
      sel.paths = sel.paths or {}
      table.insert(sel.paths, rel)
    elseif a:match('^%d+$') then
      if not sel.ids then
        sel.ids = {}
        kinds = kinds + 1
      end
      table.insert(sel.ids, a)
    else
      return nil, ('unknown selector %q: use ID..., turn T, last or after T'):format(a)
    end
    i = i + 1
  end
  if kinds > 1 then
    return nil, 'give one kind of selector: ID..., turn T, last or after T'
  end
  if kinds == 0 then
    sel.last = true
  end
  return sel
end

--- The selector in the words of :Takeback ("turn 2", "3 4", "last %").
function M.format(sel)
  local words = {}
  if sel.ids then
    vim.list_extend(words, sel.ids)
  elseif sel.turn then
    words = { 'turn', sel.turn }
  elseif sel.afterTurn then
    words = { 'after', sel.afterTurn }
  else
    words = { 'last' }
  end
  return table.concat(words, ' ')
end

--- The selector for people ("turn 2", "change 3", "the last change", "everything after turn 1"),
--- with the files it is narrowed to.
--- A turn as people read it, as the listing's headings name it: "5" for the turn id "t5" (a
--- selector the plugin makes from a listing carries the id), any other value as it is.
---@param turn string|integer
---@return string
function M.turn_number(turn)
  return (tostring(turn):gsub('^t(%d+)$', '%1'))
end

function M.describe(sel)
  local s
  if sel.ids then
    s = (#sel.ids == 1 and 'change ' or 'changes ') .. table.concat(sel.ids, ', ')
  elseif sel.turn then
    s = 'turn ' .. M.turn_number(sel.turn)
  elseif sel.afterTurn then
    s = 'everything after turn ' .. M.turn_number(sel.afterTurn)
  else
    s = 'the last change'
  end
  if sel.paths and #sel.paths > 0 then
    s = s .. ' to ' .. util.join(sel.paths)
  end
  if sel.lines then
    local l = sel.lines
    s = s .. (l['end'] > l.start and (' at lines %d-%d'):format(l.start, l['end']) or (' at line %d'):format(l.start))
  end
  return s
end

--- Completion candidates after a subcommand, from the last listing (ids, and the numbers of the
--- turns that changed something).
---@param prev string the word before the one being completed
---@param list table? ListResult
function M.complete(prev, list)
  if prev == 'turn' or prev == 'after' then
    local changed = {}
    for _, s in ipairs(list and list.sets or {}) do
      if s.turn then
        changed[s.turn] = true
      end
    end
    local out = {}
    for _, t in ipairs(list and list.turns or {}) do
      if changed[t.id] then
        table.insert(out, tostring(t.seq or t.id))
      end
    end
    return out
  end
  local out = { 'last', 'turn', 'after', '%' }
  for _, s in ipairs(list and list.sets or {}) do
    table.insert(out, s.id)
  end
  return out
end

return M
