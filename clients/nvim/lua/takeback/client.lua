-- The sidecar as an LSP client: one per workspace root, started lazily with vim.lsp.start,
-- attached to every file buffer of that workspace. Requests wait for the handshake, and work
-- the same on 0.10 (client.request) and 0.11+ (client:request).

local config = require('takeback.config')
local util = require('takeback.util')

local M = {}

M.name = 'takeback'

--- Per client id: serverInfo from the handshake (0.10 does not keep it), and the callbacks
--- waiting for the handshake to finish.
---@type table<integer, { server_info: table?, pending: function[], root: string }>
local state = {}

--- Handlers of this client only: server → client notifications (set by init.lua), and
--- workspace/applyEdit below.
---@type table<string, function>
M.handlers = {}

--- Files brought back (CreateFile, then one insertion at 0:0 of their whole text) do not come
--- out byte for byte from Neovim's own handler: it holds an empty file as one empty line, so the
--- text gains an extra empty line at the end; and a text without a final newline cannot be made
--- by edits at all (that is the 'eol' option). So, for files created by the same edit that are
--- not there yet (or empty) and not loaded with text:
--- - text ending in a newline: the insertion's range is stretched to the start of line 1 (past
---   the end, as LSP allows); Neovim then replaces that empty line (its "edit past the end"
---   path) and the buffer holds exactly the text;
--- - other text: the file is written here, as sent, and both operations are taken out of the
---   edit (the sidecar finds it on disk).
--- Returns the paths written here.
---@param edit table? WorkspaceEdit
---@return string[]
function M.fix_new_file_edits(edit)
  local written = {}
  if type(edit) ~= 'table' or type(edit.documentChanges) ~= 'table' then
    return written
  end
  local created, drop = {}, {}
  for i, change in ipairs(edit.documentChanges) do
    if change.kind == 'create' and type(change.uri) == 'string' then
      created[change.uri] = i
    elseif change.kind == nil and type(change.textDocument) == 'table' and created[change.textDocument.uri] then
      local edits = change.edits
      local e = type(edits) == 'table' and #edits == 1 and edits[1] or nil
      local r = e and e.range
      if
        r
        and r.start.line == 0
        and r.start.character == 0
        and r['end'].line == 0
        and r['end'].character == 0
        and type(e.newText) == 'string'
        and e.newText ~= ''
      then
        local fname = vim.uri_to_fname(change.textDocument.uri)
        local stat = vim.uv.fs_stat(fname)
        local b = util.find_buf(util.normalize(fname))
        local empty_buf = not b
          or (vim.api.nvim_buf_line_count(b) == 1 and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == '')
        if (not stat or (stat.type == 'file' and stat.size == 0)) and empty_buf then
          if e.newText:sub(-1) == '\n' then
            r['end'] = { line = 1, character = 0 }
          elseif not b then
            vim.fn.mkdir(vim.fs.dirname(fname), 'p')
            local f = io.open(fname, 'wb')
            if f then
              f:write(e.newText)
              f:close()
              drop[created[change.textDocument.uri]] = true
              drop[i] = true
              table.insert(written, fname)
            end
          end
        end
      end
    end
  end
  if next(drop) then
    local kept = {}
    for i, change in ipairs(edit.documentChanges) do
      if not drop[i] then
        table.insert(kept, change)
      end
    end
    edit.documentChanges = kept
  end
  return written
end

--- The loaded buffers a WorkspaceEdit changes.
---@param edit table?
---@return integer[]
function M.edit_buffers(edit)
  local uris = {}
  if type(edit) == 'table' then
    for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
      if type(change.textDocument) == 'table' then
        uris[change.textDocument.uri] = true
      end
    end
    for uri in pairs(type(edit.changes) == 'table' and edit.changes or {}) do
      uris[uri] = true
    end
  end
  local out = {}
  for uri in pairs(uris) do
    local ok, fname = pcall(vim.uri_to_fname, uri)
    local b = ok and util.find_buf(util.normalize(fname))
    if b then
      table.insert(out, b)
    end
  end
  return out
end

--- Closes the open undo block of each buffer (:help undo-break).
---@param bufs integer[]
function M.close_undo_blocks(bufs)
  for _, b in ipairs(bufs) do
    pcall(vim.api.nvim_buf_call, b, function()
      vim.cmd('let &g:undolevels = &g:undolevels')
    end)
  end
end

--- workspace/applyEdit: Neovim's own handler (text edits through the buffers, one undo step per
--- buffer), then the buffers' pending didChange notifications are sent before the answer, so the
--- sidecar knows what landed when it reads `applied` (Neovim debounces didChange; the sidecar
--- checks the text before it marks anything undone). The label is dropped: Neovim would print
--- it, and the plugin reports the outcome itself.
M.handlers['workspace/applyEdit'] = function(err, params, ctx)
  if type(params) == 'table' then
    params.label = nil
    M.fix_new_file_edits(params.edit)
  end
  -- One undo step per buffer, of these edits only: close the buffers' open undo blocks before
  -- and after (changes made without typing in between, such as a reload of the file the agent
  -- changed, would otherwise share the step, and `u` would take back more than the undo).
  local bufs = M.edit_buffers(params and params.edit)
  M.close_undo_blocks(bufs)
  local result = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx)
  M.close_undo_blocks(M.edit_buffers(params and params.edit))
  local c = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local ok, changetracking = pcall(require, 'vim.lsp._changetracking')
  if c and ok and type(changetracking.flush) == 'function' then
    pcall(changetracking.flush, c)
  end
  return result
end

---@param client vim.lsp.Client
local function is_stopped(client)
  if util.has_011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- takeback clients, those still in their handshake included (get_clients leaves them out by
--- default, and a second one would be started for the same workspace).
local function clients()
  return vim.lsp.get_clients({ name = M.name, _uninitialized = true })
end

--- The running takeback client of `root` (maybe still starting), if any.
---@param root string
---@return vim.lsp.Client?
function M.get(root)
  for _, c in ipairs(clients()) do
    if c.config.root_dir == root and not is_stopped(c) then
      return c
    end
  end
  return nil
end

--- Every running takeback client.
---@return vim.lsp.Client[]
function M.all()
  local out = {}
  for _, c in ipairs(clients()) do
    if not is_stopped(c) then
      table.insert(out, c)
    end
  end
  return out
end

local function reuse(client, cfg)
  return client.name == cfg.name and client.config.root_dir == cfg.root_dir and not is_stopped(client)
end

local function flush_pending(client_id, err)
  local s = state[client_id]
  if not s then
    return
  end
  local pending = s.pending
  s.pending = {}
  for _, fn in ipairs(pending) do
    fn(err)
  end
end

---@param root string
local function make_config(root)
  local opts = config.options
  return {
    name = M.name,
    cmd = vim.deepcopy(opts.cmd),
    cmd_env = opts.cmd_env,
    cmd_cwd = root,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    handlers = M.handlers,
    on_init = function(client, result)
      local s = state[client.id] or { pending = {}, root = root }
      state[client.id] = s
      s.server_info = result and util.denil(result.serverInfo) or nil
      vim.schedule(function()
        flush_pending(client.id, nil)
      end)
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        flush_pending(client_id, ('the sidecar exited (code %s, signal %s)'):format(code, signal))
        state[client_id] = nil
      end)
    end,
  }
end

--- The client of `root`, started if need be; attached to `bufnr` when given. Nil (and a
--- message) when the sidecar cannot be started.
---@param root string
---@param bufnr? integer
---@return vim.lsp.Client?
function M.ensure(root, bufnr)
  local existing = M.get(root)
  if existing and not bufnr then
    return existing
  end
  local cfg = make_config(root)
  local id
  if bufnr then
    id = vim.lsp.start(cfg, { bufnr = bufnr, reuse_client = reuse, silent = true })
  elseif util.has_011 then
    id = vim.lsp.start(cfg, { attach = false, reuse_client = reuse, silent = true })
  else
    id = vim.lsp.start_client(cfg)
  end
  if not id then
    util.notify_once(
      ('cannot start the sidecar %s: is takeback installed? See :checkhealth takeback'):format(
        table.concat(cfg.cmd, ' ')
      ),
      vim.log.levels.ERROR
    )
    return nil
  end
  state[id] = state[id] or { pending = {}, root = root }
  return vim.lsp.get_client_by_id(id)
end

--- serverInfo from the handshake ({ name, version }), once it is done.
---@param client vim.lsp.Client
---@return table?
function M.server_info(client)
  local s = state[client.id]
  return s and s.server_info or client.server_info
end

--- Runs fn(err) once the client has finished the handshake (at once if it has).
---@param client vim.lsp.Client
---@param fn fun(err: string?)
function M.when_ready(client, fn)
  if client.initialized then
    fn(nil)
    return
  end
  state[client.id] = state[client.id] or { pending = {} }
  table.insert(state[client.id].pending, fn)
end

--- Sends a request once the handshake is done. `cb(err, result)` runs on the main loop with
--- JSON null turned into nil. `err` is the LSP error object ({ code, message, data }) or a
--- { message } of our own.
---@param client vim.lsp.Client
---@param method string
---@param params table
---@param cb fun(err: table?, result: any)
function M.request(client, method, params, cb)
  M.when_ready(client, function(ready_err)
    if ready_err then
      cb({ message = ready_err }, nil)
      return
    end
    if params == nil or (type(params) == 'table' and next(params) == nil) then
      params = vim.empty_dict() -- {} would go out as a JSON array
    end
    local handler = function(err, result)
      cb(util.denil(err), util.denil(result))
    end
    local ok
    if util.has_011 then
      ok = client:request(method, params, handler)
    else
      ok = client.request(method, params, handler)
    end
    if not ok then
      cb({ message = 'the sidecar is not running' }, nil)
    end
  end)
end

--- Sends a notification (0.10: client.notify, 0.11+: client:notify).
---@param client vim.lsp.Client
---@param method string
---@param params table
function M.notify(client, method, params)
  if util.has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- The same, waiting for the answer (at most `timeout_ms`). Returns err, result.
---@return table? err, any result
function M.request_sync(client, method, params, timeout_ms)
  local done, e, r = false, nil, nil
  M.request(client, method, params, function(err, result)
    done, e, r = true, err, result
  end)
  if not vim.wait(timeout_ms or config.options.timeout_ms, function()
    return done
  end, 10) then
    return { message = ('no answer to %s within %d ms'):format(method, timeout_ms or config.options.timeout_ms) }, nil
  end
  return e, r
end

--- The workspace of a buffer (or of the current folder when the buffer is not a file in one),
--- and the client for it, started if need be. Nil when it cannot be started.
---@param bufnr? integer
---@return vim.lsp.Client?, string? root
function M.for_buf(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local file = util.buf_file(bufnr)
  local root = file and util.root_for(file) or util.root_for(nil)
  ---@cast root string
  local attach = file and config.options.autostart and util.root_for(file) == root and bufnr or nil
  return M.ensure(root, attach), root
end

--- Forgets everything (for tests and :Takeback after setup() changed options).
function M._state()
  return state
end

return M
