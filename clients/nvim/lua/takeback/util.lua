-- Small helpers shared by the feature modules: paths, JSON null, messages, buffers.

local M = {}

M.has_011 = vim.fn.has('nvim-0.11') == 1

--- JSON null arrives as vim.NIL from 0.12 (and in some 0.10/0.11 paths): turn it into nil, deeply,
--- so the feature modules can test fields with plain `if x then`.
---@generic T
---@param v T
---@return T
function M.denil(v)
  if v == vim.NIL then
    return nil
  end
  if type(v) == 'table' then
    for k, x in pairs(v) do
      if x == vim.NIL then
        v[k] = nil
      elseif type(x) == 'table' then
        M.denil(x)
      end
    end
  end
  return v
end

--- An absolute, normalized path (no trailing slash); symlinks are left as they are, like the
--- names Neovim gives buffers.
---@param p string
---@return string
function M.normalize(p)
  p = vim.fs.normalize(vim.fn.fnamemodify(p, ':p'))
  if #p > 1 then
    p = p:gsub('/+$', '')
  end
  return p
end

--- `file` relative to `root` with '/' separators, or nil when it is not inside `root`.
---@param root string
---@param file string
---@return string?
function M.relative(root, file)
  if file:sub(1, #root + 1) == root .. '/' then
    return file:sub(#root + 2)
  end
  return nil
end

--- A workspace path from the wire (relative, or absolute when outside the workspace) as an
--- absolute path.
---@param root string
---@param p string
---@return string
function M.absolute(root, p)
  if p:sub(1, 1) == '/' then
    return p
  end
  return root .. '/' .. p
end

--- The file a buffer shows, or nil for buffers that are not plain files (help, terminal,
--- quickfix, scratch, unnamed, URLs such as fugitive:// or oil://).
---@param bufnr integer
---@return string?
function M.buf_file(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  return M.normalize(name)
end

--- The loaded buffer that shows `file` (an absolute path), if any. Compares full names: bufnr()
--- would match patterns.
---@param file string
---@return integer?
function M.find_buf(file)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and M.buf_file(b) == file then
      return b
    end
  end
  return nil
end

--- Workspace roots the command line gave, by the folder asked about.
---@type table<string, string>
local workspaces = {}

--- The workspace of folder `dir` as the command line decides it (`takeback --workspace DIR list
--- --json`), so that the editor opens the journal the CLI, the hooks and the sidecar open: the rule
--- (the git root, else, outside git, the nearest folder whose journal recorded something) is the
--- command line's alone. Asked once per folder. The answer is a real path; it is given back under
--- the name `dir` goes by (Neovim names buffers through symbolic links). `dir` itself when the
--- command line cannot be run (kept too: a missing command is not asked again at every buffer).
---@param dir string absolute, normalized
---@return string
function M.workspace_of(dir)
  local known = workspaces[dir]
  if known then
    return known
  end
  local config = require('takeback.config')
  local cmd = vim.list_extend(config.cli(), { '--workspace', dir, 'list', '--json' })
  local ok, obj = pcall(function()
    return vim.system(cmd, { text = true, env = config.options.cmd_env }):wait(config.options.timeout_ms)
  end)
  local real = ok and obj.code == 0 and (function()
    local decoded_ok, r = pcall(vim.json.decode, obj.stdout or '')
    return decoded_ok and type(r) == 'table' and type(r.workspace) == 'string' and r.workspace or nil
  end)()
  local root = dir
  if real then
    root = real
    -- The same folder under the name `dir` goes by: `dir` or one of the folders above it.
    local d = dir
    while d do
      if vim.uv.fs_realpath(d) == real then
        root = d
        break
      end
      local up = vim.fs.dirname(d)
      d = up ~= d and up or nil
    end
  end
  workspaces[dir] = root
  return root
end

--- The workspace a path belongs to (see workspace_of): the workspace of the file's git work
--- tree when it is in one, else the current folder's. Nil when the file lies outside that
--- workspace.
---@param file string? absolute path of a file; nil for "the current folder's workspace"
---@return string?
function M.root_for(file)
  local git = file and vim.fs.find('.git', { path = vim.fs.dirname(file), upward = true, limit = 1 })[1]
  local root = M.workspace_of(git and M.normalize(vim.fs.dirname(git)) or M.normalize(vim.fn.getcwd()))
  if not file or file == root or M.relative(root, file) then
    return root
  end
  return nil
end

--- Re-reads an unmodified buffer whose file changed on disk (nothing when it did not change),
--- as an undoable step ('undoreload'). 'autoread' is set for the buffer while checking, so a user
--- without 'autoread' gets no W11 prompt; a modified buffer is never touched.
---@param bufnr integer
function M.reload(bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) or vim.bo[bufnr].modified then
    return
  end
  pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd(('setlocal autoread | silent! checktime %d | setlocal autoread<'):format(bufnr))
  end)
end

--- The plugin's messages in full, oldest first (at most `history_max`), for :Takeback messages.
---@type { msg: string, level: integer, time: integer }[]
M.history = {}
M.history_max = 50

--- Whether vim.notify is Neovim's own, which echoes into the message area (a plugin such as
--- nvim-notify, noice, snacks or fidget replaces it). Neovim's is defined in vim/_editor.lua, and
--- builds that ship the runtime as stripped bytecode (0.12) name no source at all.
---@return boolean
function M.is_builtin_notify()
  local info = debug.getinfo(vim.notify, 'S')
  local src = info and info.source or ''
  return src:match('vim/_editor%.lua$') ~= nil or src == '?' or src == '=?'
end

local more = ' … (:Takeback messages)'

--- `msg` on one line of at most `width` screen cells: line breaks become '; ', and a longer text
--- is cut and ends with a pointer to :Takeback messages, where it is whole.
---@param msg string
---@param width integer screen cells
---@return string
function M.fit(msg, width)
  msg = msg:gsub('%s*\n%s*', '; ')
  if vim.fn.strdisplaywidth(msg) <= width then
    return msg
  end
  local room = width - vim.fn.strdisplaywidth(more)
  if room < 1 then
    return vim.fn.strcharpart(msg, 0, math.max(width, 1))
  end
  local n = room
  local cut = vim.fn.strcharpart(msg, 0, n)
  while n > 0 and vim.fn.strdisplaywidth(cut) > room do
    n = n - 1
    cut = vim.fn.strcharpart(msg, 0, n)
  end
  return cut .. more
end

--- vim.notify with the plugin's prefix. The whole message is kept in M.history. With Neovim's own
--- vim.notify it is shown on one line that fits the command line (v:echospace): a taller message
--- would stop Neovim at "Press ENTER".
---@param msg string
---@param level? integer vim.log.levels.*
function M.notify(msg, level)
  level = level or vim.log.levels.INFO
  msg = 'takeback: ' .. msg
  table.insert(M.history, { msg = msg, level = level, time = os.time() })
  if #M.history > M.history_max then
    table.remove(M.history, 1)
  end
  if M.is_builtin_notify() then
    msg = M.fit(msg, vim.v.echospace)
  end
  vim.notify(msg, level, { title = 'takeback' })
end

--- Like notify, but only once per message (for problems that would nag on every buffer).
function M.notify_once(msg, level)
  level = level or vim.log.levels.WARN
  msg = 'takeback: ' .. msg
  if M.is_builtin_notify() then
    msg = M.fit(msg, vim.v.echospace)
  end
  vim.notify_once(msg, level, { title = 'takeback' })
end

--- A list of names as "a, b and c", shortened after `max`.
---@param names string[]
---@param max? integer
function M.join(names, max)
  max = max or 6
  local n = #names
  if n == 0 then
    return ''
  end
  if n > max then
    return table.concat(vim.list_slice(names, 1, max), ', ') .. (' and %d more'):format(n - max)
  end
  if n == 1 then
    return names[1]
  end
  return table.concat(vim.list_slice(names, 1, n - 1), ', ') .. ' and ' .. names[n]
end

--- "1 file" / "2 files".
function M.plural(n, word, words)
  return ('%d %s'):format(n, n == 1 and word or (words or word .. 's'))
end

--- Fires `User {pattern}` with data, for statuslines, tests and user autocommands.
function M.emit(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = data })
end

return M
