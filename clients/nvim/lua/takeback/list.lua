-- :Takeback list: the journal in the quickfix list, grouped by turn, newest first. Each turn is
-- a heading line; under it, one entry per file of each change (newest change first), which
-- opens the file. Entries carry user_data { set, turn, path, state } for pickers and mappings.

local client = require('takeback.client')
local config = require('takeback.config')
local util = require('takeback.util')

local M = {}

local function clock(ms)
  if type(ms) ~= 'number' then
    return ''
  end
  return os.date('%Y-%m-%d %H:%M', math.floor(ms / 1000))
end

local status_words = {
  created = 'created',
  modified = 'modified',
  deleted = 'deleted',
  mode = 'mode changed',
  type = 'type changed',
}

--- The quickfix items of a ListResult.
---@param root string
---@param list table ListResult
---@return table[] items
function M.items(root, list)
  local by_turn, order = {}, {}
  for _, set in ipairs(list.sets or {}) do -- newest first
    local key = set.turn or ''
    if not by_turn[key] then
      by_turn[key] = {}
      table.insert(order, key)
    end
    table.insert(by_turn[key], set)
  end
  -- Turns newest first as the listing gives them; sets outside any turn last.
  local turns = {}
  for _, t in ipairs(list.turns or {}) do
    turns[t.id] = t
  end
  local keys = {}
  for _, t in ipairs(list.turns or {}) do
    if by_turn[t.id] then
      table.insert(keys, t.id)
    end
  end
  for _, k in ipairs(order) do
    if not vim.tbl_contains(keys, k) then
      table.insert(keys, k)
    end
  end

  local items = {}
  for _, key in ipairs(keys) do
    local t = turns[key]
    local head
    if key == '' then
      head = 'Outside any turn'
    else
      head = ('Turn %s'):format(t and t.seq or key)
      if t and t.label then
        head = head .. (' · %s'):format(t.label)
      end
      if t and t.agent then
        head = head .. (' · %s'):format(t.agent)
      end
      if t then
        head = head .. (' · %s%s'):format(clock(t.start), t['end'] and '' or ' (open)')
      end
    end
    table.insert(items, { text = head, valid = 0, user_data = { turn = key ~= '' and key or nil } })
    for _, set in ipairs(by_turn[key]) do
      local state = set.state ~= 'applied' and (' [%s]'):format(set.state) or ''
      local files = set.files or {}
      local shown = vim.tbl_filter(function(f)
        return f.type ~= 'dir'
      end, files)
      if #shown == 0 then
        table.insert(items, {
          text = ('  #%s %s%s (no files)'):format(set.id, set.label or '', state),
          valid = 0,
          user_data = { set = set.id, turn = set.turn },
        })
      end
      for _, f in ipairs(files) do
        -- Folders the agent created or removed along with files are not entries: they are
        -- undone with their files, and there is nothing to open.
        if f.type == 'dir' then
          goto continue
        end
        local extra = {}
        if f.undone and set.state ~= 'undone' then
          table.insert(extra, 'undone')
        end
        if f.gap then
          table.insert(extra, 'not kept: ' .. f.gap)
        end
        table.insert(items, {
          filename = util.absolute(root, f.path),
          lnum = 0,
          text = ('#%s %s · %s +%d −%d%s%s'):format(
            set.id,
            set.label or '',
            status_words[f.status] or f.status,
            f.added or 0,
            f.removed or 0,
            state,
            #extra > 0 and (' (' .. table.concat(extra, ', ') .. ')') or ''
          ),
          user_data = { set = set.id, turn = set.turn, path = f.path, state = set.state },
        })
        ::continue::
      end
    end
  end
  return items
end

--- Fills the quickfix list from changes/list (and opens it). `opts.all` lists every turn;
--- `opts.turn` one turn. `opts.on_done(err, list)` runs after.
---@param opts? { all?: boolean, turn?: string, on_done?: fun(err: table?, list: table?) }
function M.run(opts)
  opts = opts or {}
  local c, root = client.for_buf()
  local function done(err, list)
    if opts.on_done then
      opts.on_done(err, list)
    end
  end
  if not c or not root then
    return done({ message = 'the sidecar is not running' })
  end
  client.request(c, 'changes/list', { all = opts.all or nil, turn = opts.turn }, function(err, list)
    if err then
      util.notify(require('takeback.undo').describe_error(err), vim.log.levels.ERROR)
      return done(err)
    end
    require('takeback')._remember_list(root, list)
    local items = M.items(root, list)
    local nsets = #(list.sets or {})
    local title = ('takeback: %s in %s'):format(util.plural(nsets, 'change'), util.plural(#(list.turns or {}), 'turn'))
    vim.fn.setqflist({}, ' ', { title = title, items = items, context = { takeback = { root = root } } })
    if nsets == 0 then
      util.notify('no changes recorded in ' .. root)
    elseif config.options.list.open then
      vim.cmd('botright copen')
    end
    done(nil, list)
  end)
end

return M
