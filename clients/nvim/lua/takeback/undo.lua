-- :Takeback undo / redo: undo/apply through the sidecar, which sends the text edits back as
-- workspace/applyEdit so they land in Neovim's buffers (one undo step each: `u` brings the
-- agent's change back). Then the buffers it changed are written so the disk matches (but a
-- buffer that held unsaved text, which the sidecar merged the step into: that one is the
-- person's to save, and its :w finishes the step), buffers of files changed on disk are
-- reloaded, and the outcome is reported with vim.notify.

local client = require('takeback.client')
local config = require('takeback.config')
local selector = require('takeback.selector')
local util = require('takeback.util')

local M = {}

local levels = vim.log.levels

--- Reloads unmodified buffers of `root` whose file changed on disk (an agent wrote it), so
--- they show what is there now before anything compares them. Modified buffers are left alone:
--- their text is the user's, and the sidecar reports them as conflicts.
---@param root string
function M.reload(root)
  if not config.options.reload then
    return
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local file = vim.api.nvim_buf_is_loaded(b) and util.buf_file(b)
    if file and util.relative(root, file) and not vim.bo[b].modified then
      -- Only when the file is there: a file the agent removed keeps its buffer until the user
      -- closes it (checktime would only warn).
      if vim.uv.fs_stat(file) then
        util.reload(b)
      end
    end
  end
end

--- The buffers of `root` that hold unsaved text, by buffer number: the person's work.
---@param root string
---@return table<integer, boolean>
local function unsaved_buffers(root)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local file = vim.api.nvim_buf_is_loaded(b) and util.buf_file(b)
    if file and util.relative(root, file) and vim.bo[b].modified then
      out[b] = true
    end
  end
  return out
end

--- The paths of `result.applied` changed through the editor in a buffer that held unsaved text
--- before the step and that the step did not replace (not a conflict it forced): the sidecar
--- merged the step into that text, and the buffer is the person's to save.
---@param root string
---@param result table ApplyResult
---@param unsaved table<integer, boolean> unsaved_buffers() before the step
---@return table<string, boolean>
local function merged_into_unsaved(root, result, unsaved)
  local forced = {}
  for _, c in ipairs(result.conflicts or {}) do
    forced[c.path] = true
  end
  local out = {}
  for _, a in ipairs(result.applied or {}) do
    local b = a.via == 'editor' and util.find_buf(util.absolute(root, a.path))
    if b and unsaved[b] and not forced[a.path] then
      out[a.path] = true
    end
  end
  return out
end

--- Writes the buffers that `result.applied` says were changed through the editor, but those of
--- `keep` (a step merged into the person's unsaved text: theirs to save). Returns the paths that
--- could not be written, with the reason.
---@param root string
---@param result table ApplyResult
---@param keep table<string, boolean>
---@return string[] failed
local function write_buffers(root, result, c, keep)
  local failed = {}
  for _, a in ipairs(result.applied or {}) do
    if a.via == 'editor' and not keep[a.path] then
      local file = util.absolute(root, a.path)
      local b = util.find_buf(file)
      if b and vim.bo[b].modified then
        local ok, err = pcall(vim.api.nvim_buf_call, b, function()
          -- Create the folder of a file brought back into a folder that is gone.
          vim.fn.mkdir(vim.fs.dirname(file), 'p')
          -- The bytes the sidecar sent, not 'fixeol''s: a file without a final newline stays so.
          local fixeol = vim.bo[b].fixeol
          if not vim.bo[b].eol then
            vim.bo[b].fixeol = false
          end
          -- Without autocommands: a format-on-save (conform, an LSP formatter) would change the
          -- bytes the undo puts back. The sidecar still hears of the save (didSave below).
          local wok, werr = pcall(vim.cmd, 'silent noautocmd keepalt keepjumps write')
          vim.bo[b].fixeol = fixeol
          if not wok then
            error(werr, 0)
          end
        end)
        if ok then
          client.notify(c, 'textDocument/didSave', { textDocument = { uri = vim.uri_from_bufnr(b) } })
        else
          table.insert(failed, ('%s (%s)'):format(a.path, (tostring(err):gsub('^Vim%(%w+%):', ''))))
        end
      end
    end
  end
  return failed
end

--- Whether buffer `b` holds the bytes of `file`: its lines with the file's line ends, the last
--- one ended when 'eol' says so, and the byte-order mark when 'bomb' says so.
---@param b integer
---@param file string
---@return boolean
local function holds_file(b, file)
  local fd = io.open(file, 'rb')
  if not fd then
    return false
  end
  local bytes = fd:read('a')
  fd:close()
  local ff = vim.bo[b].fileformat
  local nl = ff == 'dos' and '\r\n' or ff == 'mac' and '\r' or '\n'
  local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), nl) .. (vim.bo[b].eol and nl or '')
  if vim.bo[b].bomb then
    text = '\239\187\191' .. text
  end
  return text == bytes
end

--- Brings buffers in line with what the sidecar wrote on disk itself (binary files, files it
--- removed or brought back without the editor): reload them, and close unmodified buffers of
--- files that are gone, as Neovim does for a DeleteFile edit. A modified buffer is left alone
--- unless it holds the very bytes written (the step's text typed, or brought back by `u`,
--- before it): then it is reloaded too, which loses nothing, so that it is not left modified
--- and Neovim does not take its file for one changed behind its back at the next write.
local function sync_disk_buffers(root, result)
  for _, a in ipairs(result.applied or {}) do
    if a.via ~= 'editor' then
      local file = util.absolute(root, a.path)
      local b = util.find_buf(file)
      if b and vim.bo[b].modified and vim.api.nvim_buf_is_loaded(b) and holds_file(b, file) then
        vim.bo[b].modified = false
      end
      if b and not vim.bo[b].modified then
        if vim.uv.fs_stat(file) then
          util.reload(b)
        elseif a.action == 'remove' then
          pcall(vim.api.nvim_buf_delete, b, { force = false })
        end
      end
    end
  end
end

local action_words = {
  undo = {
    ['put-back'] = nil,
    remove = 'removed',
    ['bring-back'] = 'brought back',
    ['restore-mode'] = 'mode restored',
    ['restore-link'] = 'link restored',
    none = 'already in place',
  },
}
action_words.redo = action_words.undo

--- "notes.md, src/new.ts (removed) and f.txt"
local function files_phrase(result)
  local names = {}
  local applied = result.applied or {}
  -- Folders that come and go with their files are not worth naming: leave out a path that is
  -- the folder of another one.
  local function is_parent(p)
    for _, other in ipairs(applied) do
      if other.path:sub(1, #p + 1) == p .. '/' then
        return true
      end
    end
    return false
  end
  for _, a in ipairs(applied) do
    if is_parent(a.path) then
      goto continue
    end
    local w = action_words[result.direction or 'undo'][a.action]
    table.insert(names, w and ('%s (%s)'):format(a.path, w) or a.path)
    ::continue::
  end
  return util.join(names)
end

--- A copy of a list of change ids, in numeric order.
---@param ids string[]
---@return string[]
local function sorted_ids(ids)
  local out = vim.deepcopy(ids)
  table.sort(out, function(a, b)
    return (tonumber(a) or 0) < (tonumber(b) or 0)
  end)
  return out
end

--- The undo that takes a conflict's later changes back too, as this plugin runs it ("`:Takeback
--- undo 2 5` takes both back"), from the ids the sidecar gives in `combined`; nil when there are none.
---@param c table Conflict or ConflictFile
---@return string|nil
function M.undo_hint(c)
  local ids = c.combined
  if type(ids) ~= 'table' or #ids == 0 then
    return nil
  end
  return ('`:Takeback undo %s` takes %s back'):format(table.concat(ids, ' '), #ids == 2 and 'both' or 'them all')
end

--- A conflict in words: its detail ("changed since by #5 (prettier, turn 3): line 8 …", "unsaved
--- in Neovim"), which begins with its reason (the reason alone when the detail is empty), then
--- the undo that takes the later changes back too, when there is one.
---@param c table Conflict or ConflictFile
---@return string
function M.conflict_detail(c)
  local text = (c.detail and c.detail ~= '') and c.detail or ((c.reason or ''):gsub('-', ' '))
  local hint = M.undo_hint(c)
  return hint and (text .. ' — ' .. hint) or text
end

--- The message for an ApplyResult; level and text.
---@param sel table
---@param result table ApplyResult
---@return string, integer
function M.describe(sel, result, failed)
  local verb = result.direction == 'redo' and 'redid' or 'undid'
  local what = selector.describe(sel)
  local parts, level = {}, levels.INFO
  local conflicts = result.conflicts or {}
  local failed_paths = result.failed or {}
  if #failed_paths > 0 then
    -- Some edits did not land: the sidecar recorded nothing and wrote nothing; the plugin wrote
    -- nothing either. What did land is unsaved in its buffer.
    local names = {}
    for _, x in ipairs(failed_paths) do
      table.insert(names, ('%s (%s)'):format(x.path, x.reason or 'did not land'))
    end
    level = levels.ERROR
    table.insert(
      parts,
      ('could not %s %s: %s; nothing was recorded or saved%s'):format(
        result.direction or 'undo',
        what,
        util.join(names),
        #(result.applied or {}) > 0 and ('; the edits that landed are unsaved in their buffers (`u` takes them back): ' .. files_phrase(result)) or ''
      )
    )
    return table.concat(parts, '; '), level
  end
  if not result.written and #conflicts > 0 then
    -- As git refuses: what did not happen, each file with its reason once and who changed it
    -- (the detail), then what to do. The file comes before its detail, so that a message cut to
    -- the command line still names it.
    local files = {}
    for _, c in ipairs(conflicts) do
      table.insert(files, ('%s %s'):format(c.path, M.conflict_detail(c)))
    end
    level = levels.WARN
    table.insert(
      parts,
      ('nothing %s for %s: %s. `:Takeback %s! %s` replaces later changes'):format(
        result.direction == 'redo' and 'redone' or 'undone',
        what,
        table.concat(files, '; '),
        result.direction or 'undo',
        selector.format(sel)
      )
    )
  elseif #(result.applied or {}) > 0 or #(result.sets or {}) > 0 then
    local sets = sorted_ids(result.sets or {})
    local left = M.left_out(result.skipped, result.direction or 'undo')
    -- The ids are named unless the selector named exactly those already ("undid change 8").
    local named = sel.ids and vim.deep_equal(sorted_ids(sel.ids), sets)
    table.insert(
      parts,
      ('%s %s%s: %s'):format(
        verb,
        what,
        #sets > 0 and not named and (' (%s %s)'):format(#sets == 1 and 'change' or 'changes', table.concat(sets, ', ')) or '',
        files_phrase(result)
      )
    )
    vim.list_extend(parts, left)
    if result.forced and #conflicts > 0 then
      local names = {}
      for _, c in ipairs(conflicts) do
        table.insert(names, c.path)
      end
      table.insert(parts, 'replaced later changes in ' .. util.join(names))
    end
  else
    local reasons = {}
    for _, s in ipairs(result.skipped or {}) do
      table.insert(reasons, ('change %s: %s'):format(s.id, s.reason))
    end
    table.insert(
      parts,
      ('nothing to %s for %s%s'):format(
        result.direction or 'undo',
        what,
        #reasons > 0 and (' (' .. table.concat(reasons, '; ') .. ')') or ''
      )
    )
  end
  local gaps = {}
  for _, g in ipairs(result.gaps or {}) do
    table.insert(gaps, ('%s (%s)'):format(g.path, g.reason))
  end
  if #gaps > 0 then
    level = math.max(level, levels.WARN)
    table.insert(parts, 'not kept, so not put back: ' .. util.join(gaps))
  end
  for _, n in ipairs(result.notes or {}) do
    table.insert(parts, n)
  end
  if failed and #failed > 0 then
    level = levels.ERROR
    table.insert(parts, 'could not write ' .. util.join(failed))
  end
  return table.concat(parts, '; '), level
end

local error_names = {
  [3001] = 'not found',
  [3002] = 'expired',
  [3003] = 'conflicts',
  [3004] = 'invalid id',
  [3005] = 'outside the workspace',
  [3006] = 'capture gap',
  [3007] = 'busy',
  [-32602] = 'invalid request',
}

--- The sets a turn's step left as they are (`skipped` of a preview or a result whose reason
--- begins "left as they are": the turn's edits no tool call made, the person's saves), one phrase
--- each with the command that takes it too, since only naming it by id does: "left as it is:
--- change 12, changed during the turn by no tool call (`:Takeback undo 12` takes it back)".
---@param skipped? { id: string, reason: string }[]
---@param direction 'undo'|'redo'
---@return string[]
function M.left_out(skipped, direction)
  local out = {}
  for _, s in ipairs(skipped or {}) do
    local why = s.reason:match('^left as they are: (.*)$')
    if why then
      table.insert(out, ('left as it is: change %s, %s (`:Takeback %s %s` takes it back)'):format(s.id, why, direction, s.id))
    end
  end
  return out
end

--- A message for an error answer.
---@param err table
function M.describe_error(err)
  local name = err.code and error_names[err.code]
  local msg = err.message or vim.inspect(err)
  return name and msg:lower():find(name, 1, true) == nil and ('%s: %s'):format(name, msg) or msg
end

--- Undo (or redo) the changes `sel` names. `opts.force` replaces later changes; `opts.on_done`
--- gets (err, result) when everything (writes included) is done. Also fires `User
--- TakebackApplied` with data { direction, selector, result, error, root }.
---@param direction 'undo'|'redo'
---@param sel table Selector
---@param opts? { force?: boolean, bufnr?: integer, on_done?: fun(err: table?, result: table?) }
function M.run(direction, sel, opts)
  opts = opts or {}
  local c, root = client.for_buf(opts.bufnr)
  local function finish(err, result)
    util.emit('TakebackApplied', {
      direction = direction,
      selector = sel,
      result = result,
      error = err,
      root = root,
    })
    if opts.on_done then
      opts.on_done(err, result)
    end
  end
  if not c or not root then
    return finish({ message = 'the sidecar is not running' }, nil)
  end
  M.reload(root)
  local unsaved = unsaved_buffers(root)
  local params = { selector = sel, direction = direction, force = opts.force or false }
  client.request(c, 'undo/apply', params, function(err, result)
    if err then
      -- "No change to undo" and an expired change are answers, not failures.
      local quiet = err.code == 3001 or err.code == 3002
      util.notify(M.describe_error(err), quiet and levels.WARN or levels.ERROR)
      return finish(err, nil)
    end
    result.direction = result.direction or direction
    local failed = {}
    local landed = result.written and #(result.failed or {}) == 0
    local keep = landed and merged_into_unsaved(root, result, unsaved) or {}
    if landed and config.options.write then
      failed = write_buffers(root, result, c, keep)
    end
    local kept = vim.tbl_keys(keep)
    if #kept > 0 then
      table.sort(kept)
      result.notes = result.notes or {}
      table.insert(
        result.notes,
        ('%s in the buffer, keeping your unsaved changes: :w %s to finish'):format(direction == 'undo' and 'put back' or 'made again', util.join(kept))
      )
    end
    if landed then
      sync_disk_buffers(root, result)
    end
    local unwritten = vim.tbl_filter(function(p)
      return not keep[p]
    end, result.pending or {})
    if landed and not config.options.write and #unwritten > 0 then
      result.notes = result.notes or {}
      table.insert(result.notes, 'not saved (write = false): :write ' .. util.join(unwritten) .. ' to finish')
    end
    local msg, level = M.describe(sel, result, failed)
    util.notify(msg, level)
    require('takeback.signs').schedule_refresh(root, 10)
    finish(nil, result)
  end)
end

return M
