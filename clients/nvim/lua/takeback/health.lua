-- :checkhealth takeback — Neovim, the options, the binary and its version, the handshake with
-- the sidecar (a running client, or one started for the check), where the journal is, and the
-- agents' hooks here and for the user.

local M = {}

local health = vim.health

---@param cmd string[]
---@param timeout integer
---@return boolean ok, string out, string err
local function run(cmd, timeout)
  local ok, obj = pcall(function()
    return vim.system(cmd, { text = true }):wait(timeout)
  end)
  if not ok then
    return false, '', tostring(obj)
  end
  if obj.code ~= 0 then
    return false, obj.stdout or '', (obj.stderr ~= '' and obj.stderr) or ('exit code ' .. tostring(obj.code))
  end
  return true, obj.stdout or '', obj.stderr or ''
end

function M.check()
  local config = require('takeback.config')
  local client = require('takeback.client')
  local util = require('takeback.util')
  local opts = config.options
  local timeout = opts.timeout_ms

  health.start('takeback: Neovim')
  if vim.fn.has('nvim-0.10') == 1 then
    local v = vim.version()
    health.ok(('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch))
  else
    health.error('Neovim 0.10 or newer is needed')
  end
  local group_ok = pcall(vim.api.nvim_get_autocmds, { group = 'takeback' })
  if group_ok then
    health.ok("setup() has run (autocommand group 'takeback')")
  else
    health.warn("setup() has not run: buffers are not attached", { "call require('takeback').setup()" })
  end

  -- doc/tags comes with the plugin; a copy of doc/ without it (or an old one) fails with E149.
  local src = debug.getinfo(1, 'S').source:gsub('^@', '')
  local doc = vim.fs.normalize(vim.fs.dirname(src) .. '/../../doc')
  if #vim.fn.getcompletion('takeback-config', 'help') > 0 then
    health.ok('the help tags are found (doc/tags)')
  else
    health.warn('no help tags found: :help takeback fails (E149)', { ('run :helptags %s'):format(doc) })
  end
  local ui_select = debug.getinfo(vim.ui.select, 'S').source
  if ui_select:match('vim/ui%.lua$') or ui_select == '?' or ui_select == '=?' then
    health.info(":Takeback pick uses Neovim's own vim.ui.select (a numbered list)")
  else
    health.info((':Takeback pick uses the vim.ui.select of %s'):format(ui_select:gsub('^@', '')))
  end

  health.start('takeback: the binary')
  local exe = opts.cmd[1]
  local path = vim.fn.exepath(exe)
  if path == '' then
    health.error(('%s not found on PATH'):format(exe), {
      'put takeback on PATH (npm i -g . in a clone of takeback), or set `cmd` in setup()',
    })
    return
  end
  health.ok(('sidecar: %s (%s)'):format(table.concat(opts.cmd, ' '), path))
  local cli = config.cli()
  local vcmd = vim.list_extend(vim.deepcopy(cli), { '--version' })
  local vok, vout, verr = run(vcmd, timeout)
  local cli_version = vim.trim(vout)
  if vok and cli_version ~= '' then
    health.ok(('version: %s (`%s`)'):format(cli_version, table.concat(vcmd, ' ')))
  else
    health.error(('`%s` failed: %s'):format(table.concat(vcmd, ' '), vim.trim(verr)))
  end

  health.start('takeback: the sidecar')
  local root = util.root_for(nil)
  local c = root and client.get(root)
  local started = false
  if not c and root then
    c = client.ensure(root, nil)
    started = c ~= nil
  end
  if not c then
    health.error('the sidecar could not be started', { 'run `' .. table.concat(opts.cmd, ' ') .. '` by hand to see why' })
  else
    local ready = vim.wait(timeout, function()
      return c.initialized or (client.get(root) == nil)
    end, 20)
    if ready and c.initialized then
      local info = client.server_info(c) or {}
      local desc = ('%s %s'):format(info.name or '?', info.version or '?')
      health.ok(
        ('handshake: serverInfo %s, workspace %s (%s)'):format(
          desc,
          root,
          started and 'started for this check' or ('running client id ' .. c.id)
        )
      )
      if info.name ~= 'takeback' then
        health.warn(('the server calls itself %q, not "takeback"'):format(tostring(info.name)))
      end
      if cli_version ~= '' and info.version and info.version ~= cli_version then
        health.warn(
          ('the sidecar is version %s but `%s` is %s'):format(info.version, table.concat(cli, ' '), cli_version),
          { 'restart Neovim after upgrading takeback' }
        )
      end
    else
      health.error(('no answer to initialize within %d ms'):format(timeout), {
        'see :LspLog, and run `' .. table.concat(opts.cmd, ' ') .. '` by hand',
      })
    end
    for _, other in ipairs(client.all()) do
      if other.id ~= c.id then
        local info = client.server_info(other) or {}
        health.info(('also running: client id %d for %s (%s %s)'):format(other.id, other.config.root_dir, info.name or '?', info.version or '?'))
      end
    end
    if started then
      if util.has_011 then
        c:stop()
      else
        c.stop()
      end
    end
  end

  health.start('takeback: the journal')
  local dcmd = vim.list_extend(vim.deepcopy(cli), { '--workspace', root or vim.fn.getcwd(), 'doctor', '--json' })
  local dok, dout, derr = run(dcmd, timeout)
  if not dok and dout == '' then
    health.error(('`%s` failed: %s'):format(table.concat(dcmd, ' '), vim.trim(derr)))
    return
  end
  local jok, doc = pcall(vim.json.decode, dout, { luanil = { object = true, array = true } })
  if not jok or type(doc) ~= 'table' then
    health.error(('`%s` did not print JSON'):format(table.concat(dcmd, ' ')))
    return
  end
  health.ok(('journal: %s'):format(doc.journal or '?'))
  if doc.workspace then
    health.info(('workspace: %s'):format(doc.workspace))
  end
  if doc.log then
    health.info(('hook log: %s'):format(doc.log))
  end
  -- The file watcher the capture daemon and the sidecar use (doctor's `watcher`).
  if type(doc.watcher) == 'table' then
    if doc.watcher.kind == 'watchman' then
      health.info(('file watcher: Watchman %s (syncs without batching)'):format(doc.watcher.version or '?'))
    elseif doc.watcher.kind == 'none' then
      health.info(('file watcher: none (%s: every scan walks the workspace)'):format(doc.watcher.why or 'off'))
    else
      health.info(('file watcher: @parcel/watcher (%s)'):format(doc.watcher.why or 'Watchman not used'))
    end
  end
  if doc.capture and doc.capture.commands == false then
    health.warn(('commands are not captured here: %s'):format(doc.capture.reason or 'workspace too large'))
  end
  for _, p in ipairs(doc.problems or {}) do
    health.warn(type(p) == 'table' and (p.message or vim.inspect(p)) or tostring(p))
  end

  -- Each settings file an agent reads here or for the user that holds takeback's hooks, as
  -- `takeback doctor` checked it (installed for every event, current, trusted by the agent).
  health.start('takeback: agent hooks')
  local hooked = false
  for _, a in ipairs(doc.agents or {}) do
    if a.installed ~= 'none' then
      hooked = true
      local what = ('%s (%s: %s)'):format(a.agent, a.scope, a.file)
      local bad = {}
      if a.installed == 'some' then
        table.insert(bad, 'some events only')
      end
      if a.current == false then
        table.insert(bad, 'another takeback than this one, or an older command')
      end
      if a.trusted == false then
        table.insert(bad, 'not trusted: ' .. (a.trust or '?'))
      end
      if #bad == 0 then
        health.ok(what .. ': every event, current' .. (a.trusted == true and ', trusted' or ''))
      else
        local flag = a.scope == 'user' and ' --user' or ''
        if a.agent == 'claude-code' and a.scope == 'workspace' and a.file:match('/settings%.json$') then
          flag = ' --shared'
        end
        health.warn(what .. ': ' .. table.concat(bad, '; '), { ('run `takeback init %s%s` again'):format(a.agent, flag) })
      end
    end
  end
  if not hooked then
    health.warn('no agent is hooked here: run takeback init claude-code (or codex, gemini, qwen-code, copilot, cline, opencode, kilo; --user for every folder)')
  end
end

return M
