-- takeback for Neovim: undo for AI coding agents through Neovim's own buffers.
--
-- require('takeback').setup(opts) (idempotent) attaches the sidecar (`takeback serve`) to file
-- buffers as they are opened: one LSP client per workspace (as the command line finds it for
-- the file's git root, else for the current folder), started with the first buffer. The sidecar sends undos back as workspace/applyEdit,
-- so `u` in a buffer brings the agent's change back. See :help takeback.

local client = require('takeback.client')
local config = require('takeback.config')
local util = require('takeback.util')

local M = {}

local did_setup = false

--- Per workspace root: the last ListResult seen (for completion and statuslines).
---@type table<string, table>
M.lists = {}

function M._remember_list(root, list)
  M.lists[root] = list
  -- Statuslines that show status() are drawn again with the new count.
  vim.schedule(function()
    pcall(vim.cmd, 'redrawstatus!')
  end)
end

--- Per file (or 'cwd:' .. folder): its workspace root, or false when it has none.
---@type table<string, string|false>
local status_roots = {}

--- What the agent's newest turn that changed something left in place, in the current buffer's
--- workspace, from the last listing the plugin saw (it lists again whenever the journal changes).
--- Nil when nothing is known yet or no turn changed anything.
---@param bufnr? integer
---@return { turn: string, seq: integer?, changes: integer, total: integer }?
function M.status_data(bufnr)
  local file = util.buf_file(bufnr or vim.api.nvim_get_current_buf())
  local key = file or ''
  -- Statuslines are drawn often: the workspace of a file (a look up the folders for .git) is
  -- found once per file; the current folder's, once per folder.
  if key == '' then
    key = 'cwd:' .. vim.fn.getcwd()
  end
  local root = status_roots[key]
  if root == nil then
    root = (file and util.root_for(file) or util.root_for(nil)) or false
    status_roots[key] = root
  end
  local list = root and M.lists[root]
  if not list then
    return nil
  end
  local turn
  for _, set in ipairs(list.sets or {}) do -- newest first
    if set.turn then
      turn = set.turn
      break
    end
  end
  if not turn then
    return nil
  end
  local changes, total = 0, 0
  for _, set in ipairs(list.sets or {}) do
    if set.turn == turn then
      total = total + 1
      if set.state == 'applied' or set.state == 'partial' then
        changes = changes + 1
      end
    end
  end
  local seq
  for _, t in ipairs(list.turns or {}) do
    if t.id == turn then
      seq = t.seq
    end
  end
  return { turn = turn, seq = seq, changes = changes, total = total }
end

--- A statusline component: "↶3" when the agent's newest turn that changed something has three
--- changes still in place (an undo would take them back), '' otherwise. For 'statusline'
--- (`%{v:lua.require'takeback'.status()}`), lualine, heirline and the like.
---@param bufnr? integer
---@return string
function M.status(bufnr)
  local d = M.status_data(bufnr)
  if not d or d.changes == 0 then
    return ''
  end
  return ('↶%d'):format(d.changes)
end

--- Lists the journal of `root` again for status() and completion.
---@param root string
function M._refresh_list(root)
  local c = client.get(root)
  if c then
    client.request(c, 'changes/list', {}, function(err, list)
      if not err and list then
        M._remember_list(root, list)
      end
    end)
  end
end

--- The sidecar's notification that the journal changed (an agent recorded a change, or an undo
--- from anywhere): reload buffers the agent changed on disk, refresh the signs, tell listeners.
local function on_did_change(_, params, ctx)
  local c = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local root = c and c.config.root_dir
  params = util.denil(params) or {}
  vim.schedule(function()
    if root then
      require('takeback.undo').reload(root)
      if config.options.signs.enabled then
        require('takeback.signs').schedule_refresh(root, 50)
      else
        -- The signs list the journal as they refresh; without them, status() needs its own listing.
        M._refresh_list(root)
      end
    end
    util.emit('TakebackChanged', { root = root, reason = params.reason })
  end)
end

client.handlers['changes/didChange'] = on_did_change

--- Attaches the sidecar of the buffer's workspace to a file buffer (starting it if need be).
--- Buffers that are not files (help, terminal, scratch, URLs) and files outside any workspace
--- are left alone.
---@param bufnr? integer
---@return vim.lsp.Client?
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local file = util.buf_file(bufnr)
  local root = file and util.root_for(file)
  if not root then
    return nil
  end
  return client.ensure(root, bufnr)
end

local function create_autocmds()
  local group = vim.api.nvim_create_augroup('takeback', { clear = true })
  M.augroup = group
  if config.options.autostart then
    -- FileType does not fire for files without a filetype: BufReadPost and BufNewFile cover them.
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
      group = group,
      desc = 'takeback: attach the sidecar to file buffers',
      callback = function(args)
        M.attach(args.buf)
      end,
    })
  end
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    desc = 'takeback: mark the lines the agent changed',
    callback = function(args)
      local c = args.data and vim.lsp.get_client_by_id(args.data.client_id)
      if c and c.name == client.name then
        local root = c.config.root_dir
        client.when_ready(c, function(err)
          if err then
            return
          end
          if config.options.signs.enabled then
            require('takeback.signs').schedule_refresh(root, 50)
          elseif not M.lists[root] then
            M._refresh_list(root)
          end
        end)
      end
    end,
  })
  vim.api.nvim_create_autocmd('BufWritePost', {
    group = group,
    desc = 'takeback: refresh the marks of a written buffer',
    callback = function(args)
      local file = util.buf_file(args.buf)
      local root = file and util.root_for(file)
      if root and client.get(root) then
        require('takeback.signs').schedule_refresh(root, 200)
      end
    end,
  })
  vim.api.nvim_create_autocmd('ColorScheme', {
    group = group,
    callback = function()
      require('takeback.signs').define_highlights()
    end,
  })
end

--- Sets the options (see :help takeback-config) and the autocommands. Safe to call again: the
--- options are replaced, the autocommand group is recreated, running sidecars are kept.
---@param opts? table
function M.setup(opts)
  config.setup(opts)
  did_setup = true
  require('takeback.signs').define_highlights()
  if not config.options.signs.enabled then
    require('takeback.signs').clear_all()
  end
  create_autocmds()
  if config.options.autostart then
    -- Buffers opened before setup() (e.g. `nvim file` with a lazy-loaded plugin).
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and util.buf_file(b) then
        M.attach(b)
      end
    end
  end
end

--- setup() with the defaults, unless it ran.
function M._ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

--- Fills the quickfix list with the journal, grouped by turn, newest first.
---@param opts? { all?: boolean, turn?: string, on_done?: function }
function M.list(opts)
  M._ensure_setup()
  require('takeback.list').run(opts)
end

--- Picks a turn or a change through vim.ui.select, then previews it (`action` 'preview'), or
--- undoes or redoes it. See :help takeback-pick.
---@param opts? { action?: 'preview'|'undo'|'redo', all?: boolean, on_done?: fun(err: table?, entry: table?) }
function M.pick(opts)
  M._ensure_setup()
  require('takeback.pick').run(opts)
end

--- The plugin's messages in full, oldest first, in a scratch buffer (a message too long for the
--- command line is shown cut there).
function M.messages()
  local lines = {}
  for _, m in ipairs(util.history) do
    table.insert(lines, ('%s %s'):format(os.date('%H:%M:%S', m.time), m.msg))
  end
  if #lines == 0 then
    lines = { 'takeback: no messages yet' }
  end
  vim.cmd('botright new')
  local b = vim.api.nvim_get_current_buf()
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'wipe'
  vim.bo[b].swapfile = false
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  pcall(vim.api.nvim_buf_set_name, b, 'takeback: messages')
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = b, nowait = true, desc = 'close' })
end

--- Parses `sel` (a selector table, or words like "turn 2"), then calls `fn` with it; a bad
--- selector is reported once through vim.notify.
local function with_selector(sel, fn)
  M._ensure_setup()
  local s, err = M._selector(sel)
  if not s then
    return util.notify(err, vim.log.levels.ERROR)
  end
  return fn(s)
end

--- Shows what undoing (or redoing) `sel` would do. `sel` is a Selector table or the words of
--- :Takeback ("turn 2").
---@param sel? table|string
---@param opts? { direction?: 'undo'|'redo', on_done?: function }
function M.preview(sel, opts)
  with_selector(sel, function(s)
    require('takeback.preview').run(s, opts)
  end)
end

--- Undoes the changes `sel` names (default: the last one). `opts.force` replaces later changes.
---@param sel? table|string
---@param opts? { force?: boolean, on_done?: fun(err, result) }
function M.undo(sel, opts)
  with_selector(sel, function(s)
    require('takeback.undo').run('undo', s, opts)
  end)
end

--- Redoes undone changes (default: what the most recent undo took back).
---@param sel? table|string
---@param opts? { force?: boolean, on_done?: fun(err, result) }
function M.redo(sel, opts)
  with_selector(sel, function(s)
    require('takeback.undo').run('redo', s, opts)
  end)
end

--- The agent's hunks in buffer `bufnr` (default: the current one), each { start, end, set } with
--- its lines in the buffer now (`end < start`: lines the agent removed, put back before `start`).
--- Asks the sidecar and waits for its answer.
---@param bufnr? integer
---@return { start: integer, end: integer, set: string }[]
function M.hunks(bufnr)
  M._ensure_setup()
  return require('takeback.hunks').list(bufnr)
end

--- Moves the cursor to the agent's next hunk in the current buffer (wrapping), for a mapping
--- such as `vim.keymap.set('n', ']a', require('takeback').next_hunk)`. Returns the hunk or nil.
function M.next_hunk()
  M._ensure_setup()
  return require('takeback.hunks').jump('next')
end

--- The same, to the hunk above the cursor.
function M.prev_hunk()
  M._ensure_setup()
  return require('takeback.hunks').jump('prev')
end

function M._selector(sel)
  if type(sel) == 'table' then
    return sel
  end
  local words = type(sel) == 'string' and vim.split(vim.trim(sel), '%s+', { trimempty = true }) or {}
  return require('takeback.selector').parse(words)
end

--- The running client of the current buffer's workspace (nil when none is running).
---@return vim.lsp.Client?
function M.get_client()
  local file = util.buf_file(vim.api.nvim_get_current_buf())
  local root = file and util.root_for(file) or util.root_for(nil)
  return root and client.get(root)
end

return M
