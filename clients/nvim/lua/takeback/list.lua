-- :Takeback list: the journal in the quickfix list, newest first, in runs of one turn (changes
-- outside any turn among them by time, as `takeback list` shows them). Each run has a heading
-- line; under it, one entry per file of each change (newest change first), which opens the file
-- at the change. Entries carry user_data { set, turn, path, state } for pickers and mappings.

local client = require('takeback.client')
local config = require('takeback.config')
local diff = require('takeback.diff')
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

--- The turns of a ListResult that changed something (a turn with no change set is left out).
---@param list table ListResult
---@return integer
function M.turns_with_changes(list)
  local seen, n = {}, 0
  for _, set in ipairs(list.sets or {}) do
    if set.turn and not seen[set.turn] then
      seen[set.turn] = true
      n = n + 1
    end
  end
  return n
end

--- The sets of a ListResult in runs of one turn, newest first: a new run starts wherever the
--- turn changes, so changes outside any turn sit among the turns by their time, as in
--- `takeback list`. Returns { key = turn id or '', sets = ChangeSetSummary[] }[].
---@param list table ListResult
---@return { key: string, sets: table[] }[]
function M.groups(list)
  local groups = {}
  for _, set in ipairs(list.sets or {}) do -- newest first
    local key = set.turn or ''
    local g = groups[#groups]
    if not g or g.key ~= key then
      g = { key = key, sets = {} }
      table.insert(groups, g)
    end
    table.insert(g.sets, set)
  end
  return groups
end

--- The quickfix items of a ListResult: a heading per run of one turn (see groups()), then one
--- entry per file of each change. Entries are at line 0 until locate() finds their lines.
---@param root string
---@param list table ListResult
---@return table[] items
function M.items(root, list)
  local turns = {}
  for _, t in ipairs(list.turns or {}) do
    turns[t.id] = t
  end
  local items = {}
  for _, g in ipairs(M.groups(list)) do
    local key = g.key
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
    for _, set in ipairs(g.sets) do
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
        -- undone with their files, and there is nothing to open; but a folder with a capture gap
        -- (a skipped folder a command changed) is one, since what an undo leaves is always named.
        -- A `mv` is one entry, at its new path, as `takeback list` shows it: the old path is
        -- gone (nothing to open) and both halves count no lines.
        if (f.type == 'dir' and not f.gap) or f.renamedTo then
          goto continue
        end
        local what = f.renamedFrom and ('renamed from ' .. f.renamedFrom)
          or ('%s +%d −%d'):format(status_words[f.status] or f.status, f.added or 0, f.removed or 0)
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
          text = ('#%s %s · %s%s%s'):format(
            set.id,
            set.label or '',
            what,
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

--- Finds the line each file entry should open at: the first line the change touches in the file
--- as it is now, from the change's own preview (undo/preview of its id; redo/preview for an
--- undone one). One request per listed change, all at once; `done(items)` gets the items with
--- `lnum` set where a preview named a line (others stay at 0, the top of the file).
---@param c vim.lsp.Client
---@param items table[] from items()
---@param done fun(items: table[])
function M.locate(c, items, done)
  local by_set = {}
  for _, it in ipairs(items) do
    local u = it.user_data
    if u and u.path and u.state ~= 'expired' then
      by_set[u.set] = by_set[u.set] or { state = u.state, items = {} }
      table.insert(by_set[u.set].items, it)
    end
  end
  local waiting = 1
  local function finish()
    waiting = waiting - 1
    if waiting == 0 then
      done(items)
    end
  end
  for id, s in pairs(by_set) do
    waiting = waiting + 1
    local direction = s.state == 'undone' and 'redo' or 'undo'
    client.request(c, 'undo/preview', { selector = { ids = { id } }, direction = direction }, function(err, p)
      if not err and p then
        local first = {}
        for _, f in ipairs(p.files or {}) do
          local m = f.diff and diff.marks(f.diff)[1]
          if m then
            first[f.path] = m.line
          end
        end
        for _, it in ipairs(s.items) do
          it.lnum = first[it.user_data.path] or it.lnum
        end
      end
      finish()
    end)
  end
  finish()
end

--- Fills the quickfix list from changes/list (and opens it), then moves each entry to the line of
--- its change (locate()). `opts.all` lists every turn; `opts.turn` one turn. `opts.on_done(err,
--- list)` runs once the list is filled; `User TakebackList` { root, list } fires once the lines
--- are in place too.
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
    local title = ('takeback: %s in %s'):format(util.plural(nsets, 'change'), util.plural(M.turns_with_changes(list), 'turn'))
    vim.fn.setqflist({}, ' ', { title = title, items = items, context = { takeback = { root = root } } })
    local qfid = vim.fn.getqflist({ id = 0 }).id
    if nsets == 0 then
      util.notify('no changes recorded in ' .. root)
    elseif config.options.list.open then
      vim.cmd('botright copen')
    end
    done(nil, list)
    M.locate(c, items, function(located)
      -- The list may have been replaced meanwhile: only this one is updated.
      if vim.fn.getqflist({ id = qfid }).id == qfid then
        vim.fn.setqflist({}, 'r', { id = qfid, items = located })
      end
      util.emit('TakebackList', { root = root, list = list })
    end)
  end)
end

return M
