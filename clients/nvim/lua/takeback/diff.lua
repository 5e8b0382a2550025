-- Reading the unified diffs of undo/preview (3 lines of context, "now" → "after the step").

local M = {}

--- The hunks of a unified diff: { old_start, old_count, new_start, new_count, lines = {...} }.
---@param text string
function M.hunks(text)
  local hunks, cur = {}, nil
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines) -- the text ends with a newline
  end
  for _, line in ipairs(lines) do
    local os_, oc, ns, nc = line:match('^@@ %-(%d+),?(%d*) %+(%d+),?(%d*) @@')
    if os_ then
      cur = {
        old_start = tonumber(os_),
        old_count = oc == '' and 1 or tonumber(oc),
        new_start = tonumber(ns),
        new_count = nc == '' and 1 or tonumber(nc),
        lines = {},
      }
      table.insert(hunks, cur)
    elseif cur then
      -- Context lines start with ' ' (an empty line is taken as empty context, as some writers
      -- drop the space); '\ No newline at end of file' is kept and skipped by the readers.
      table.insert(cur.lines, line)
    end
  end
  return hunks
end

--- The lines of "now" that the step changes, as gitsigns shows a hunk: `add` for lines the
--- step removes and nothing replaces (the agent added them), `change` for lines it replaces,
--- `delete` after a line where it would bring back lines (the agent deleted them; line 0 means
--- above the first line). Line numbers are 1-based, in "now".
---@param text string
---@return { line: integer, kind: 'add'|'change'|'delete'|'topdelete' }[]
function M.marks(text)
  local out = {}
  for _, h in ipairs(M.hunks(text)) do
    local old = h.old_start
    if h.old_count == 0 then
      old = old + 1 -- "@@ -5,0" means after line 5
    end
    local i = 1
    local lines = h.lines
    while i <= #lines do
      local c = lines[i]:sub(1, 1)
      if c == '-' or c == '+' then
        local removed, added = {}, 0
        while i <= #lines and lines[i]:sub(1, 1) == '-' do
          table.insert(removed, old)
          old = old + 1
          i = i + 1
        end
        while i <= #lines and lines[i]:sub(1, 1) == '+' do
          added = added + 1
          i = i + 1
        end
        if #removed > 0 then
          local kind = added > 0 and 'change' or 'add'
          for _, l in ipairs(removed) do
            table.insert(out, { line = l, kind = kind })
          end
        elseif added > 0 then
          local above = old - 1
          if above < 1 then
            table.insert(out, { line = 1, kind = 'topdelete' })
          else
            table.insert(out, { line = above, kind = 'delete' })
          end
        end
      else
        if c ~= '\\' then
          old = old + 1
        end
        i = i + 1
      end
    end
  end
  return out
end

--- Applies a unified diff to `lines` ("now"), giving the text after the step. Nil when the
--- diff does not fit the lines (they changed since the preview).
---@param lines string[]
---@param text string
---@return string[]?
function M.apply(lines, text)
  local out, pos = {}, 1
  for _, h in ipairs(M.hunks(text)) do
    local start = h.old_count == 0 and h.old_start + 1 or h.old_start
    while pos < start do
      table.insert(out, lines[pos])
      pos = pos + 1
    end
    for _, l in ipairs(h.lines) do
      local c, body = l:sub(1, 1), l:sub(2)
      if c == ' ' or l == '' then
        if lines[pos] ~= body then
          return nil
        end
        table.insert(out, body)
        pos = pos + 1
      elseif c == '-' then
        if lines[pos] ~= body then
          return nil
        end
        pos = pos + 1
      elseif c == '+' then
        table.insert(out, body)
      end
    end
  end
  while pos <= #lines do
    table.insert(out, lines[pos])
    pos = pos + 1
  end
  return out
end

return M
