-- :Takeback pick: the journal's turns and changes through vim.ui.select, so the picker a user
-- has (telescope, fzf-lua, snacks, or Neovim's own list) offers them. The choice opens its
-- preview (the diff, see preview.lua), where `a` applies it; with an action (undo, redo) the
-- choice is applied at once.

local client = require('takeback.client')
local util = require('takeback.util')

local M = {}

--- Whether every set of an entry is undone (then its step is a redo).
local function all_undone(sets)
  for _, s in ipairs(sets) do
    if s.state ~= 'undone' then
      return false
    end
  end
  return #sets > 0
end

--- The picker's entries for a ListResult, newest first: for each run of one turn (list.groups),
--- the turn, then each of its changes; changes outside any turn have no turn entry. Expired
--- changes are left out: they can be neither undone nor redone.
---@param list table ListResult
---@return { text: string, selector: table, direction: 'undo'|'redo', kind: 'turn'|'change' }[]
function M.entries(list)
  local turns = {}
  for _, t in ipairs(list.turns or {}) do
    turns[t.id] = t
  end
  local out = {}
  for _, g in ipairs(require('takeback.list').groups(list)) do
    local sets = vim.tbl_filter(function(s)
      return s.state ~= 'expired'
    end, g.sets)
    local t = turns[g.key]
    if g.key ~= '' and #sets > 0 then
      local text = ('Turn %s'):format(t and t.seq or g.key)
      if t and t.label then
        text = text .. ' · ' .. t.label
      end
      text = text .. ' · ' .. util.plural(#sets, 'change')
      local undone = all_undone(sets)
      table.insert(out, {
        kind = 'turn',
        text = text .. (undone and ' [undone]' or ''),
        selector = { turn = g.key },
        direction = undone and 'redo' or 'undo',
      })
    end
    for _, s in ipairs(sets) do
      local files = vim.tbl_filter(function(f)
        return f.type ~= 'dir'
      end, s.files or {})
      local names = vim.tbl_map(function(f)
        return f.path
      end, files)
      table.insert(out, {
        kind = 'change',
        text = ('%s#%s %s · %s%s'):format(
          g.key ~= '' and '  ' or '',
          s.id,
          s.label or '',
          util.join(names, 3),
          s.state ~= 'applied' and (' [%s]'):format(s.state) or ''
        ),
        selector = { ids = { s.id } },
        direction = s.state == 'undone' and 'redo' or 'undo',
      })
    end
  end
  return out
end

--- Lists the journal, asks vim.ui.select for one entry, then previews it (`action` 'preview', the
--- default) or undoes/redoes it. `opts.on_done(err, entry)` runs once the choice is handled
--- (entry nil when nothing was chosen).
---@param opts? { action?: 'preview'|'undo'|'redo', all?: boolean, on_done?: fun(err: table?, entry: table?) }
function M.run(opts)
  opts = opts or {}
  local action = opts.action or 'preview'
  local from = vim.api.nvim_get_current_buf()
  local c, root = client.for_buf(from)
  local function done(err, entry)
    if opts.on_done then
      opts.on_done(err, entry)
    end
  end
  if not c or not root then
    return done({ message = 'the sidecar is not running' })
  end
  client.request(c, 'changes/list', { all = opts.all or nil }, function(err, list)
    if err then
      util.notify(require('takeback.undo').describe_error(err), vim.log.levels.ERROR)
      return done(err)
    end
    require('takeback')._remember_list(root, list)
    local entries = M.entries(list)
    if action == 'undo' or action == 'redo' then
      entries = vim.tbl_filter(function(e)
        return e.direction == action
      end, entries)
    end
    if #entries == 0 then
      util.notify('no changes recorded in ' .. root)
      return done(nil, nil)
    end
    vim.ui.select(entries, {
      prompt = ('takeback %s: '):format(action),
      kind = 'takeback',
      format_item = function(e)
        return e.text
      end,
    }, function(choice)
      if not choice then
        return done(nil, nil)
      end
      local takeback = require('takeback')
      if action == 'preview' then
        takeback.preview(choice.selector, {
          direction = choice.direction,
          on_done = function(perr)
            done(perr, choice)
          end,
        })
      else
        takeback[action](choice.selector, {
          on_done = function(aerr)
            done(aerr, choice)
          end,
        })
      end
    end)
  end)
end

return M
