-- Options of require('takeback').setup(), with their defaults and their validation.
-- See :help takeback-config.

local M = {}

---@class takeback.Config
M.defaults = {
  --- The sidecar: a command that speaks the protocol on stdio.
  cmd = { 'takeback', 'serve' },
  --- The one-shot command line (for :checkhealth: --version, doctor). nil: `cmd` without its
  --- trailing 'serve'.
  cli = nil,
  --- Extra environment for the sidecar (e.g. { TAKEBACK_HOME = '...' }).
  cmd_env = nil,
  --- Attach the sidecar to file buffers as they are opened (it starts with the first one).
  autostart = true,
  --- After an undo or redo through the editor, write the buffers it changed so the disk matches.
  write = true,
  --- Reload (:checktime) unmodified buffers whose file changed on disk when the journal changes
  --- and before an undo, so buffers show what the agent wrote.
  reload = true,
  --- Milliseconds to wait for the sidecar in synchronous places (:checkhealth).
  timeout_ms = 10000,
  list = {
    --- Open the quickfix window after :Takeback list.
    open = true,
  },
  preview = {
    --- 'diff': a unified diff in a scratch buffer; 'split': the file and its text after the step
    --- side by side in diff mode when the step touches the current buffer (else 'diff').
    layout = 'diff',
    --- The command that opens the preview window.
    open_cmd = 'tabnew',
  },
  signs = {
    enabled = true,
    --- 'turn': the lines the agent's latest turn changed in the file; 'last': its latest change.
    scope = 'turn',
    priority = 6,
    add = '┃',
    change = '┃',
    delete = '▁',
    topdelete = '▔',
    --- Also highlight the line numbers.
    numhl = false,
  },
}

---@type takeback.Config
M.options = vim.deepcopy(M.defaults)

local function is_list_of_strings(v)
  if type(v) ~= 'table' or #v == 0 then
    return false
  end
  for _, s in ipairs(v) do
    if type(s) ~= 'string' then
      return false
    end
  end
  return true
end

local function one_of(...)
  local allowed = { ... }
  return function(v)
    return vim.tbl_contains(allowed, v), table.concat(allowed, ' | ')
  end
end

-- Each option: a type name for vim.validate, or a predicate returning ok, expected.
local schema = {
  cmd = function(v)
    return is_list_of_strings(v), 'a non-empty list of strings'
  end,
  cli = function(v)
    return v == nil or is_list_of_strings(v), 'nil or a non-empty list of strings'
  end,
  cmd_env = function(v)
    return v == nil or type(v) == 'table', 'nil or a table'
  end,
  autostart = 'boolean',
  write = 'boolean',
  reload = 'boolean',
  timeout_ms = function(v)
    return type(v) == 'number' and v > 0, 'a positive number'
  end,
  list = { open = 'boolean' },
  preview = {
    layout = one_of('diff', 'split'),
    open_cmd = 'string',
  },
  signs = {
    enabled = 'boolean',
    scope = one_of('turn', 'last'),
    priority = 'number',
    add = 'string',
    change = 'string',
    delete = 'string',
    topdelete = 'string',
    numhl = 'boolean',
  },
}

local function check(spec, value, name)
  if type(spec) == 'table' then
    if type(value) ~= 'table' then
      error(('takeback: option %s: expected a table, got %s'):format(name, type(value)), 0)
    end
    for k in pairs(value) do
      if spec[k] == nil then
        error(('takeback: unknown option %s.%s'):format(name, k), 0)
      end
    end
    for k, sub in pairs(spec) do
      check(sub, value[k], name .. '.' .. k)
    end
  elseif type(spec) == 'function' then
    local ok, expected = spec(value)
    if not ok then
      error(('takeback: option %s: expected %s, got %s'):format(name, expected, vim.inspect(value)), 0)
    end
  elseif type(value) ~= spec then
    error(('takeback: option %s: expected %s, got %s'):format(name, spec, vim.inspect(value)), 0)
  end
end

--- Merges `opts` over the defaults, validates the result and makes it current. Raises an error
--- naming the first bad option; the current options are left as they were.
---@param opts? table
---@return takeback.Config
function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= 'table' then
    error('takeback: setup() takes a table of options', 0)
  end
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- Lists replace, they do not merge element by element.
  if opts.cmd then
    merged.cmd = vim.deepcopy(opts.cmd)
  end
  if opts.cli then
    merged.cli = vim.deepcopy(opts.cli)
  end
  for k in pairs(merged) do
    if schema[k] == nil then
      error(('takeback: unknown option %s'):format(k), 0)
    end
  end
  for k, spec in pairs(schema) do
    check(spec, merged[k], k)
  end
  M.options = merged
  return merged
end

--- The one-shot command line, as a list: `cli`, else `cmd` without a trailing 'serve'.
---@return string[]
function M.cli()
  local o = M.options
  if o.cli then
    return vim.deepcopy(o.cli)
  end
  local c = vim.deepcopy(o.cmd)
  if c[#c] == 'serve' and #c > 1 then
    table.remove(c)
  end
  return c
end

return M
