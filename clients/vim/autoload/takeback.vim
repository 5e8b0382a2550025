vim9script
# The takeback client for Vim 9: `takeback serve` as a job on an LSP channel (Vim's `lsp` channel
# mode does the framing), one per workspace, beside any language server the user runs. The
# sidecar plans every step; this file only shows its answers and applies the text edits it sends
# (`workspace/applyEdit`) to Vim's buffers, so `u` brings the agent's change back.
#
# Open buffers reach the sidecar as documents (didOpen/didChange/didSave/didClose) so unsaved
# text counts as a conflict. Their text is sent before each request and after each edit, not on
# every keystroke: the sidecar reads documents only while it answers a request.

# Per workspace root: { job, ch, ready: bool, queue: list<func>, docs: dict<number> (buffer ->
# version sent) }.
var clients: dict<dict<any>> = {}
# Per workspace root: the last ListResult, for completion.
var lists: dict<any> = {}

const subcommands = ['list', 'preview', 'undo', 'redo']
const levels = {info: 'None', warn: 'WarningMsg', error: 'ErrorMsg'}

# Only the public API is exported: an exported function of an autoload script is global
# (takeback#Name), and a call by its short name inside the script can resolve to a user's global
# function of the same name.

# ---------------------------------------------------------------------------------------------
# Messages

# Shows `msg` ("takeback: " before it) and keeps it in the message history. A line wider than
# the command line is shown from its start, cut at the end with " … (:messages)": Vim would cut
# it in the middle, where the files a conflict names are. The history keeps it whole.
def Notify(msg: string, level: string = 'info')
  execute 'echohl' levels[level]
  var lines = split('takeback: ' .. msg, "\n")
  for line in lines
    echomsg line
  endfor
  if len(lines) == 1 && strdisplaywidth(lines[0]) > v:echospace
    var fitted = Fit(lines[0], v:echospace)
    if fitted != ''
      echo fitted
    endif
  endif
  echohl None
enddef

# The start of `text` and " … (:messages)" in at most `width` display cells, or '' when the
# width leaves no room for some of the text.
def Fit(text: string, width: number): string
  const tail = ' … (:messages)'
  var room = width - strdisplaywidth(tail)
  if room < 10
    return ''
  endif
  var s = strcharpart(text, 0, room)
  while strdisplaywidth(s) > room
    s = strcharpart(s, 0, strcharlen(s) - 1)
  endwhile
  return s .. tail
enddef

# "a", "a and b", "a, b and c".
def Join(names: list<string>): string
  if len(names) <= 1
    return join(names, '')
  endif
  return join(names[: -2], ', ') .. ' and ' .. names[-1]
enddef

def Plural(n: number, word: string): string
  return printf('%d %s%s', n, word, n == 1 ? '' : 's')
enddef

# ---------------------------------------------------------------------------------------------
# Files, workspaces, URIs

# The workspace of a file (or of the current folder when `file` is empty): the top of the git
# work tree around it (the sidecar takes the same root), else the folder itself.
def Root(file: string): string
  var dir = file == '' ? getcwd() : fnamemodify(file, ':h')
  dir = resolve(fnamemodify(dir, ':p'))->substitute('/\+$', '', '')
  var d = dir
  while true
    if isdirectory(d .. '/.git') || filereadable(d .. '/.git')
      return d
    endif
    var up = fnamemodify(d, ':h')
    if up == d
      return dir
    endif
    d = up
  endwhile
  return dir
enddef

# The absolute, resolved file of a normal buffer, or '' for other buffers.
def BufFile(b: number): string
  if getbufvar(b, '&buftype') != '' || bufname(b) == ''
    return ''
  endif
  return resolve(fnamemodify(bufname(b), ':p'))
enddef

# `file` relative to `root`, or '' when it is not inside it.
def Relative(root: string, file: string): string
  return stridx(file, root .. '/') == 0 ? file[len(root) + 1 :] : ''
enddef

# A file: URI, every byte outside the unreserved set and '/' percent-encoded.
def FileToUri(file: string): string
  return 'file://' .. substitute(file, '[^A-Za-z0-9/._~-]', (m) => printf('%%%02X', char2nr(m[0], true)), 'g')
enddef

def UriToFile(uri: string): string
  var p = substitute(uri, '^file://', '', '')
  return substitute(p, '%\(\x\x\)', (m) => nr2char(str2nr(m[1], 16)), 'g')
enddef

# The buffer of a file, or -1.
def FindBuf(file: string): number
  for info in getbufinfo()
    if info.name != '' && BufFile(info.bufnr) == file
      return info.bufnr
    endif
  endfor
  return -1
enddef

# Runs an Ex command with buffer `b` current: in a window that shows it, or else in the current
# window for the time of the command (the window gets its buffer and view back).
def InBuffer(b: number, cmd: string)
  var win = bufwinid(b)
  if win != -1
    win_execute(win, cmd)
    return
  endif
  var cur = bufnr()
  var view = winsaveview()
  execute 'noautocmd keepalt keepjumps hide buffer' b
  try
    execute cmd
  finally
    execute 'noautocmd keepalt keepjumps hide buffer' cur
    winrestview(view)
  endtry
enddef

# ---------------------------------------------------------------------------------------------
# Buffers as documents

def LineEnd(b: number): string
  var ff = getbufvar(b, '&fileformat')
  return ff == 'dos' ? "\r\n" : ff == 'mac' ? "\r" : "\n"
enddef

# The text a buffer holds, as the bytes of its file: its lines with the file's line ends, the
# last one ended only when 'eol' says so ('fixeol' is left out: the plugin's own writes turn it
# off for such a buffer, so a file without a final line end stays so), no byte-order mark (as
# Neovim sends it). One empty line, unchanged, is an empty file when the file on disk is empty
# (Vim shows both the same way).
def Text(b: number): string
  var lines = getbufline(b, 1, '$')
  if lines == [''] && !getbufvar(b, '&modified') && getfsize(BufFile(b)) <= 0
    return ''
  endif
  var nl = LineEnd(b)
  return join(lines, nl) .. (getbufvar(b, '&eol') ? nl : '')
enddef

def Notification(c: dict<any>, method: string, params: dict<any>)
  if ch_status(c.ch) == 'open'
    ch_sendexpr(c.ch, {method: method, params: params})
  endif
enddef

# Tells the sidecar what buffer `b` holds: didOpen the first time, didChange when its text
# changed since (b:changedtick is the version).
def SyncBuffer(c: dict<any>, b: number)
  var file = BufFile(b)
  if file == '' || Relative(c.root, file) == '' || !bufloaded(b)
    return
  endif
  var version = getbufvar(b, 'changedtick')
  var key = string(b)
  if !has_key(c.docs, key)
    Notification(c, 'textDocument/didOpen', {textDocument: {
      uri: FileToUri(file), languageId: getbufvar(b, '&filetype') ?? 'plaintext', version: version, text: Text(b)}})
  elseif c.docs[key] != version
    Notification(c, 'textDocument/didChange', {textDocument: {uri: FileToUri(file), version: version},
      contentChanges: [{text: Text(b)}]})
  else
    return
  endif
  c.docs[key] = version
enddef

def SyncAll(c: dict<any>)
  for info in getbufinfo({bufloaded: 1})
    SyncBuffer(c, info.bufnr)
  endfor
enddef

def ClientOfBuf(b: number): dict<any>
  var file = BufFile(b)
  for c in values(clients)
    if file != '' && Relative(c.root, file) != ''
      return c
    endif
  endfor
  return {}
enddef

def OnBufEvent(event: string, b: number)
  var c = ClientOfBuf(b)
  if empty(c) || !c.ready
    return
  endif
  if event == 'unload'
    var key = string(b)
    if has_key(c.docs, key)
      remove(c.docs, key)
      Notification(c, 'textDocument/didClose', {textDocument: {uri: FileToUri(BufFile(b))}})
    endif
    return
  endif
  SyncBuffer(c, b)
  if event == 'write'
    Notification(c, 'textDocument/didSave', {textDocument: {uri: FileToUri(BufFile(b))}})
  endif
enddef

# Closes the open undo block of a buffer (:help undo-break), so the edits that follow are an
# undo step of their own: a reload of the file the agent changed, made without typing in
# between, would otherwise share it, and `u` would take back more than the undo.
def BreakUndo(b: number)
  setbufvar(b, '&undolevels', getbufvar(b, '&l:undolevels'))
enddef

# Reloads the unmodified buffers of `root` whose file changed on disk (an agent wrote it), so
# they show what is there before anything compares them. Modified buffers are the user's: the
# sidecar reports them as conflicts. The reload is an undo step ('undoreload').
def Reload(root: string)
  for info in getbufinfo({bufloaded: 1})
    var file = BufFile(info.bufnr)
    if file == '' || Relative(root, file) == '' || info.changed || !filereadable(file)
      continue
    endif
    if readfile(file, 'b') != split(Text(info.bufnr), "\n", true)
      BreakUndo(info.bufnr)
      InBuffer(info.bufnr, 'silent! keepalt keepjumps edit')
      BreakUndo(info.bufnr)
    endif
  endfor
enddef

# ---------------------------------------------------------------------------------------------
# workspace/applyEdit

# Character `ch` of a line (LSP counts UTF-16 units; Vim counts characters here, which differ
# only after a character outside the Basic Multilingual Plane) as a byte index.
def ByteOf(line: string, ch: number): number
  var i = byteidx(line, ch)
  return i < 0 ? len(line) : i
enddef

# Applies LSP TextEdits to buffer `b` as one undo step, changing only the lines that differ.
def ApplyTextEdits(b: number, edits: list<any>)
  var nl = LineEnd(b)
  var old = getbufline(b, 1, '$')
  var text = Text(b)
  var lines = split(text, nl, true)
  var starts = [0]
  for l in lines
    starts->add(starts[-1] + len(l) + len(nl))
  endfor
  def Offset(pos: dict<any>): number
    if pos.line >= len(lines)
      return len(text)
    endif
    return min([starts[pos.line] + ByteOf(lines[pos.line], pos.character), len(text)])
  enddef
  var sorted = copy(edits)->sort((x, y) => Offset(y.range.start) - Offset(x.range.start))
  for e in sorted
    var s = Offset(e.range.start)
    var t = Offset(e.range.end)
    text = (s > 0 ? text[: s - 1] : '') .. e.newText .. text[t :]
  endfor
  var eol = text != '' && text[-len(nl) :] == nl
  var new = text == '' ? [] : split(eol ? text[: -len(nl) - 1] : text, nl, true)
  if text == '' && old == ['']
    return
  endif
  # The lines that differ: old[p : len(old) - q - 1] become new[p : len(new) - q - 1].
  var p = 0
  while p < len(old) && p < len(new) && old[p] ==# new[p]
    p += 1
  endwhile
  var q = 0
  while q < len(old) - p && q < len(new) - p && old[-1 - q] ==# new[-1 - q]
    q += 1
  endwhile
  var gone = len(old) - p - q
  var come = new[p : len(new) - q - 1]
  var both = min([gone, len(come)])
  if both > 0
    setbufline(b, p + 1, come[: both - 1])
  endif
  if gone > both
    deletebufline(b, p + both + 1, p + gone)
  elseif len(come) > both
    appendbufline(b, p + both, come[both :])
  endif
  if text != '' && eol != !!getbufvar(b, '&eol')
    setbufvar(b, '&eol', eol)
  endif
enddef

# The edits of a WorkspaceEdit by buffer ('changes', and the text edits of 'documentChanges').
def EditsByFile(edit: dict<any>): dict<list<any>>
  var out: dict<list<any>> = {}
  for [uri, edits] in items(get(edit, 'changes', {}) ?? {})
    out[UriToFile(uri)] = edits
  endfor
  for change in get(edit, 'documentChanges', []) ?? []
    if has_key(change, 'textDocument')
      out[UriToFile(change.textDocument.uri)] = change.edits
    endif
  endfor
  return out
enddef

# Applies the text edits through the buffers (loading files that are not), then tells the
# sidecar what each buffer holds before answering, so it can check what landed.
def ApplyEdit(c: dict<any>, params: dict<any>): dict<any>
  var bufs: list<number> = []
  try
    for [file, edits] in items(EditsByFile(get(params, 'edit', {})))
      var b = FindBuf(file)
      if b == -1
        b = bufadd(file)
      endif
      bufload(b)
      BreakUndo(b)
      ApplyTextEdits(b, edits)
      BreakUndo(b)
      bufs->add(b)
    endfor
  catch
    for b in bufs
      SyncBuffer(c, b)
    endfor
    return {applied: false, failureReason: v:exception}
  endtry
  for b in bufs
    SyncBuffer(c, b)
  endfor
  return {applied: true}
enddef

# ---------------------------------------------------------------------------------------------
# The sidecar

def OnMessage(root: string, msg: any)
  if type(msg) != v:t_dict || !has_key(msg, 'method') || !has_key(clients, root)
    return
  endif
  var c = clients[root]
  var params = get(msg, 'params', {}) ?? {}
  if has_key(msg, 'id')
    if msg.method == 'workspace/applyEdit'
      ch_sendexpr(c.ch, {id: msg.id, result: ApplyEdit(c, params)})
    else
      ch_sendexpr(c.ch, {id: msg.id, error: {code: -32601, message: 'not handled by the Vim client: ' .. msg.method}})
    endif
  elseif msg.method == 'window/showMessage'
    Notify(get(params, 'message', ''), get(params, 'type', 3) == 1 ? 'error' : get(params, 'type', 3) == 2 ? 'warn' : 'info')
  elseif msg.method == 'changes/didChange'
    Reload(root)
    if exists('#User#TakebackChanged')
      g:takeback_changed = {root: root, reason: get(params, 'reason', '')}
      doautocmd <nomodeline> User TakebackChanged
    endif
  endif
enddef

def OnExit(root: string, code: number)
  if !has_key(clients, root)
    return
  endif
  var c = remove(clients, root)
  var queue = c.queue
  c.queue = []
  for F in queue
    F(printf('the sidecar exited (code %d)', code))
  endfor
  if code != 0
    Notify(printf('the sidecar exited (code %d)%s', code, empty(c.stderr) ? '' : ': ' .. join(c.stderr[-3 :], ' | ')), 'error')
  endif
enddef

# The client of `root`, started if need be; {} (and a message) when it cannot be started.
def Ensure(root: string): dict<any>
  if has_key(clients, root)
    return clients[root]
  endif
  var cmd = get(g:, 'takeback_cmd', ['takeback', 'serve'])
  var c: dict<any> = {root: root, ready: false, queue: [], docs: {}, stderr: []}
  var job = job_start(cmd, {
    cwd: root,
    in_mode: 'lsp',
    out_mode: 'lsp',
    err_mode: 'nl',
    out_cb: (_, msg) => OnMessage(root, msg),
    err_cb: (_, line) => add(c.stderr, line),
    exit_cb: (_, code) => OnExit(root, code),
    noblock: true,
  })
  if job_status(job) != 'run'
    Notify(printf('cannot start the sidecar %s: is takeback installed? Set g:takeback_cmd', join(cmd, ' ')), 'error')
    return {}
  endif
  c.job = job
  c.ch = job_getchannel(job)
  clients[root] = c
  augroup takeback
    autocmd!
    autocmd BufReadPost,BufNewFile,FileChangedShellPost * OnBufEvent('sync', str2nr(expand('<abuf>')))
    autocmd BufWritePost * OnBufEvent('write', str2nr(expand('<abuf>')))
    autocmd BufUnload * OnBufEvent('unload', str2nr(expand('<abuf>')))
  augroup END
  var params = {
    processId: getpid(),
    clientInfo: {name: 'vim', version: string(v:version)},
    rootUri: FileToUri(root),
    workspaceFolders: [{uri: FileToUri(root), name: root}],
    # applyEdit without documentChanges: the sidecar sends plain text edits of files that
    # exist and writes files to bring back or remove itself.
    capabilities: {workspace: {applyEdit: true, workspaceEdit: {documentChanges: false}}},
  }
  ch_sendexpr(c.ch, {method: 'initialize', params: params}, {callback: (_, msg) => {
    if has_key(msg, 'error')
      Notify('the sidecar refused to start: ' .. get(msg.error, 'message', ''), 'error')
      return
    endif
    Notification(c, 'initialized', {})
    c.ready = true
    var queue = c.queue
    c.queue = []
    for F in queue
      F('')
    endfor
  }})
  return c
enddef

# Sends a request once the handshake is done, with every buffer's text first. Cb(err, result):
# err is the LSP error ({code, message, data}), or {message} of this client's own, or null.
def Request(root: string, method: string, params: dict<any>, Cb: func(any, any))
  var c = Ensure(root)
  if empty(c)
    Cb({message: 'the sidecar is not running'}, null)
    return
  endif
  var Send = (err: string) => {
    if err != ''
      Cb({message: err}, null)
      return
    endif
    SyncAll(c)
    ch_sendexpr(c.ch, {method: method, params: params}, {callback: (_, msg) => Cb(get(msg, 'error', null), get(msg, 'result', null))})
  }
  if c.ready
    Send('')
  else
    c.queue->add(Send)
  endif
enddef

# ---------------------------------------------------------------------------------------------
# Selectors: ID... | turn T | last | after T, and % for the current file

# The selector of the words after the subcommand, or a string saying what is wrong.
def ParseSelector(words: list<string>, root: string): any
  var sel: dict<any> = {}
  var kinds = 0
  var i = 0
  while i < len(words)
    var w = words[i]
    if w == 'last'
      sel.last = true
      kinds += 1
    elseif w == 'turn' || w == 'after'
      if i + 1 >= len(words)
        return printf('%s needs a turn (e.g. `%s 2`)', w, w)
      endif
      sel[w == 'turn' ? 'turn' : 'afterTurn'] = words[i + 1]
      kinds += 1
      i += 1
    elseif w == '%' || w == 'file'
      var rel = Relative(root, BufFile(bufnr()))
      if rel == ''
        return 'the current buffer is not a file in the workspace'
      endif
      sel.paths = get(sel, 'paths', []) + [rel]
    elseif w =~ '^\d\+$'
      if !has_key(sel, 'ids')
        sel.ids = []
        kinds += 1
      endif
      sel.ids->add(w)
    else
      return printf('unknown selector "%s": use ID..., turn T, last or after T', w)
    endif
    i += 1
  endwhile
  if kinds > 1
    return 'give one kind of selector: ID..., turn T, last or after T'
  endif
  if kinds == 0
    sel.last = true
  endif
  return sel
enddef

# The selector in :Takeback's words ("turn 2", "3 4", "last").
def FormatSelector(sel: dict<any>): string
  return has_key(sel, 'ids') ? join(sel.ids) : has_key(sel, 'turn') ? 'turn ' .. sel.turn
    : has_key(sel, 'afterTurn') ? 'after ' .. sel.afterTurn : 'last'
enddef

# The selector for people ("turn 2", "change 3", "the last change").
def DescribeSelector(sel: dict<any>): string
  var s = has_key(sel, 'ids') ? (len(sel.ids) == 1 ? 'change ' : 'changes ') .. join(sel.ids, ', ')
    : has_key(sel, 'turn') ? 'turn ' .. sel.turn
    : has_key(sel, 'afterTurn') ? 'everything after turn ' .. sel.afterTurn : 'the last change'
  return s .. (empty(get(sel, 'paths', [])) ? '' : ' to ' .. Join(sel.paths))
enddef

# "change 3" or "changes 2, 3" for the ids `sets`, or '' when `sel` names exactly those ids
# already: a message says each id once.
def SetsPhrase(sel: dict<any>, sets: list<string>): string
  var sorted = sets->copy()->sort('N')
  if empty(sets) || get(sel, 'ids', [])->copy()->sort('N') == sorted
    return ''
  endif
  return (len(sets) == 1 ? 'change ' : 'changes ') .. join(sorted, ', ')
enddef

# ---------------------------------------------------------------------------------------------
# :Takeback list

const status_words = {created: 'created', modified: 'modified', deleted: 'deleted', mode: 'mode changed', type: 'type changed'}

# The sets of a ListResult in runs of one turn, newest first: a new run starts wherever the turn
# changes, so changes outside any turn sit among the turns by their time, as `takeback list`
# shows them. Returns [{key: turn id or '', sets: [ChangeSetSummary]}].
def Runs(list: dict<any>): list<dict<any>>
  var runs: list<dict<any>> = []
  for set in list.sets
    var key = set.turn ?? ''
    if empty(runs) || runs[-1].key != key
      runs->add({key: key, sets: []})
    endif
    runs[-1].sets->add(set)
  endfor
  return runs
enddef

# How many turns of a ListResult changed something (a turn with no change set is left out).
def TurnsWithChanges(list: dict<any>): number
  var seen: dict<bool> = {}
  for set in list.sets
    if (set.turn ?? '') != ''
      seen[set.turn] = true
    endif
  endfor
  return len(seen)
enddef

# The quickfix items of a ListResult: a heading per run of one turn (see Runs()), under it one
# entry per file of each change, which opens the file. Entries are at line 0 until Locate()
# finds the lines of their changes.
def ListItems(root: string, list: dict<any>): list<any>
  var turns: dict<any> = {}
  for t in list.turns
    turns[t.id] = t
  endfor
  var items = []
  for run in Runs(list)
    var key = run.key
    var head = 'Outside any turn'
    if key != ''
      var t = get(turns, key, {})
      head = printf('Turn %s', get(t, 'seq', key))
      if get(t, 'label', null) != null
        head ..= ' · ' .. t.label
      endif
      if get(t, 'agent', null) != null
        head ..= ' · ' .. t.agent
      endif
    endif
    items->add({text: head, valid: 0})
    for set in run.sets
      var state = set.state != 'applied' ? printf(' [%s]', set.state) : ''
      for f in set.files
        # A mv is one entry, at its new path, as `takeback list` shows it: the old path is gone
        # (nothing to open) and both halves count no lines. A folder with a capture gap (a skipped
        # folder a command changed) is an entry: what an undo leaves is always named.
        if (f.type == 'dir' && get(f, 'gap', null) == null) || get(f, 'renamedTo', null) != null
          continue
        endif
        var what = get(f, 'renamedFrom', null) != null ? 'renamed from ' .. f.renamedFrom
          : printf('%s +%d −%d', get(status_words, f.status, f.status), f.added, f.removed)
        items->add({filename: root .. '/' .. f.path, lnum: 0, valid: 1,
          text: printf('#%s %s · %s%s%s%s', set.id, set.label, what, state, f.undone && set.state != 'undone' ? ' (undone)' : '',
            get(f, 'gap', null) != null ? printf(' (not kept: %s)', f.gap) : ''),
          user_data: {set: set.id, turn: set.turn, path: f.path, state: set.state}})
      endfor
    endfor
  endfor
  return items
enddef

# The line of the file now where a unified diff of undo/preview ("now" against after the step)
# first changes it, or 0 when it has no hunk.
def FirstChangedLine(diff: string): number
  var line = -1
  for l in split(diff, "\n")
    var m = matchlist(l, '^@@ -\(\d\+\)\%(,\(\d\+\)\)\? +')
    if !empty(m)
      # "@@ -5,0" means after line 5.
      line = str2nr(m[1]) + (m[2] == '0' ? 1 : 0)
    elseif line < 0 || l[0] == '\'
      continue
    elseif l[0] == '-'
      return line
    elseif l[0] == '+'
      # Lines the step brings back go after the line above them.
      return max([line - 1, 1])
    else
      line += 1
    endif
  endfor
  return 0
enddef

# Moves the quickfix entries of one change set (`id`, in `state`) to the lines where its change is
# in their files now: from its undo/preview (a redo preview for an undone set). Then Finish().
def LocateSet(root: string, id: string, state: string, entries: list<any>, Finish: func())
  Request(root, 'undo/preview', {selector: {ids: [id]}, direction: state == 'undone' ? 'redo' : 'undo'}, (err, p) => {
    if err == null && p != null
      var first: dict<number> = {}
      for f in p.files
        if f.diff != null
          first[f.path] = FirstChangedLine(f.diff)
        endif
      endfor
      for it in entries
        it.lnum = get(first, it.user_data.path, 0)
      endfor
    endif
    Finish()
  })
enddef

# Moves each file entry of the quickfix `items` to the line of its change (LocateSet(), one
# preview per change set), then Done(items) once every set has answered.
def Locate(root: string, items: list<any>, Done: func(list<any>))
  var by_set: dict<dict<any>> = {}
  for it in items
    var u = get(it, 'user_data', {})
    if type(u) == v:t_dict && has_key(u, 'path') && u.state != 'expired'
      if !has_key(by_set, u.set)
        by_set[u.set] = {state: u.state, items: []}
      endif
      by_set[u.set].items->add(it)
    endif
  endfor
  # One more than the sets, taken off once every request is sent: Done runs once, at the end.
  var waiting = {n: len(by_set) + 1}
  var Finish = () => {
    waiting.n -= 1
    if waiting.n == 0
      Done(items)
    endif
  }
  for [id, s] in items(by_set)
    LocateSet(root, id, s.state, s.items, Finish)
  endfor
  Finish()
enddef

# Fills the quickfix list from changes/list (and opens it), then moves each entry to the line of
# its change (Locate()) and fires `User TakebackListed` { root, list }.
def List(root: string, params: dict<any>)
  Request(root, 'changes/list', params, (err, list) => {
    if err != null
      Notify(DescribeError(err), 'error')
      return
    endif
    lists[root] = list
    var title = printf('takeback: %s in %s', Plural(len(list.sets), 'change'), Plural(TurnsWithChanges(list), 'turn'))
    var items = ListItems(root, list)
    setqflist([], ' ', {title: title, items: items})
    var qf = getqflist({id: 0}).id
    if empty(list.sets)
      Notify('no changes recorded in ' .. root)
    else
      botright copen
    endif
    Locate(root, items, (located) => {
      # The list as it is unless another listing replaced it meanwhile.
      if getqflist({id: qf}).id == qf
        setqflist([], 'r', {id: qf, items: located})
      endif
      Emit('TakebackListed', {root: root, list: list})
    })
  })
enddef

# ---------------------------------------------------------------------------------------------
# :Takeback preview

# The lines of the preview buffer: what the step would do to each file, with its diff.
def PreviewLines(sel: dict<any>, direction: string, p: dict<any>): list<string>
  var named = SetsPhrase(sel, p.sets)
  var out = [printf('# takeback: %s of %s%s', direction, DescribeSelector(sel),
    empty(p.sets) ? ': nothing to ' .. direction : named == '' ? '' : ': ' .. named)]
  if p.conflicts > 0
    out->add(printf('# %s changed since (`:Takeback %s! %s` replaces later changes):', Plural(p.conflicts, 'file'), direction, FormatSelector(sel)))
  endif
  for f in p.files
    if f.conflict != null
      out->add(printf('# conflict: %s: %s', f.path, ConflictDetail(f.conflict)))
    endif
  endfor
  for g in p.gaps
    out->add(printf('# not kept, so not put back: %s (%s)', g.path, g.reason))
  endfor
  for f in p.files
    if f.diff != null
      out += split(f.diff, "\n")
    elseif f.note != null
      out->add(printf('# %s: %s', f.path, f.note))
    endif
  endfor
  return out
enddef

def Preview(root: string, sel: dict<any>, direction: string)
  Request(root, 'undo/preview', {selector: sel, direction: direction}, (err, p) => {
    if err != null
      Notify(DescribeError(err), 'warn')
      return
    endif
    var lines = PreviewLines(sel, direction, p)
    var name = 'takeback://preview'
    var b = bufnr(name)
    if b == -1 || bufwinid(b) == -1
      execute 'botright new' name
      setlocal buftype=nofile bufhidden=wipe noswapfile nobuflisted filetype=diff
    else
      win_gotoid(bufwinid(b))
    endif
    setlocal modifiable
    silent deletebufline(bufnr(), 1, '$')
    setline(1, lines)
    setlocal nomodifiable nomodified
    Emit('TakebackPreviewed', {root: root, selector: sel, preview: p})
  })
enddef

# ---------------------------------------------------------------------------------------------
# :Takeback undo / redo

const action_words = {remove: 'removed', 'bring-back': 'brought back', 'restore-mode': 'mode restored',
  'restore-link': 'link restored', none: 'already in place'}

# "notes.md, src/new.ts (removed) and f.txt" (folders that come and go with their files left out).
def FilesPhrase(applied: list<any>): string
  var names = []
  for a in applied
    if applied->copy()->filter((_, o) => stridx(o.path, a.path .. '/') == 0)->empty()
      names->add(has_key(action_words, a.action) ? printf('%s (%s)', a.path, action_words[a.action]) : a.path)
    endif
  endfor
  return Join(names)
enddef

const error_names = {'3001': 'not found', '3002': 'expired', '3003': 'conflicts', '3004': 'invalid id',
  '3005': 'outside the workspace', '3006': 'capture gap', '3007': 'busy', '-32602': 'invalid request'}

def DescribeError(err: dict<any>): string
  var msg = get(err, 'message', string(err))
  var name = get(error_names, string(get(err, 'code', '')), '')
  return name != '' && stridx(tolower(msg), name) < 0 ? name .. ': ' .. msg : msg
enddef

# The undo that takes a conflict's later changes back too, as this plugin runs it ("`:Takeback
# undo 2 5` takes both back"), from the ids the sidecar gives in `combined`; '' when there are none.
def UndoHint(c: dict<any>): string
  var ids = get(c, 'combined', [])
  if type(ids) != v:t_list || empty(ids)
    return ''
  endif
  return printf('`:Takeback undo %s` takes %s back', join(ids), len(ids) == 2 ? 'both' : 'them all')
enddef

# A conflict in words: its detail ("changed since by #5 (prettier, turn 3): line 8 …", "unsaved
# in Vim"), which begins with its reason (the reason alone when the detail is empty), then the
# undo that takes the later changes back too, when there is one.
def ConflictDetail(c: dict<any>): string
  var detail = get(c, 'detail', '')
  var text = type(detail) == v:t_string && detail != '' ? detail : substitute(c.reason, '-', ' ', 'g')
  var hint = UndoHint(c)
  return hint == '' ? text : text .. ' — ' .. hint
enddef

# The message for an ApplyResult, and its level.
def Describe(sel: dict<any>, r: dict<any>, unwritten: list<string>): list<string>
  var direction = r.direction
  var what = DescribeSelector(sel)
  var failed = get(r, 'failed', []) ?? []
  if !empty(failed)
    var names = failed->copy()->map((_, x) => printf('%s (%s)', x.path, x.reason))
    return [printf('could not %s %s: %s; nothing was recorded or saved', direction, what, Join(names)), 'error']
  endif
  var parts = []
  var level = 'info'
  if !r.written && !empty(r.conflicts)
    # As git refuses: what did not happen, each file with its reason once and who changed it (the
    # detail), then what to do. The file comes before its detail, so that a message cut to the
    # command line still names it.
    var files = r.conflicts->copy()->map((_, x) => x.path .. ' ' .. ConflictDetail(x))
    parts->add(printf('nothing %s for %s: %s. `:Takeback %s! %s` replaces later changes',
      direction == 'redo' ? 'redone' : 'undone', what, join(files, '; '), direction, FormatSelector(sel)))
    level = 'warn'
  elseif !empty(r.applied) || !empty(r.sets)
    var sets = SetsPhrase(sel, r.sets)
    parts->add(printf('%s %s%s: %s', direction == 'redo' ? 'redid' : 'undid', what,
      sets == '' ? '' : printf(' (%s)', sets), FilesPhrase(r.applied)))
    if r.forced && !empty(r.conflicts)
      parts->add('replaced later changes in ' .. Join(r.conflicts->copy()->map((_, x) => x.path)))
    endif
  else
    var reasons = r.skipped->copy()->map((_, s) => printf('change %s: %s', s.id, s.reason))
    parts->add(printf('nothing to %s for %s%s', direction, what, empty(reasons) ? '' : ' (' .. join(reasons, '; ') .. ')'))
  endif
  if !empty(r.gaps)
    parts->add('not kept, so not put back: ' .. Join(r.gaps->copy()->map((_, g) => printf('%s (%s)', g.path, g.reason))))
    level = level == 'info' ? 'warn' : level
  endif
  parts += r.notes
  if !empty(unwritten)
    parts->add('could not write ' .. Join(unwritten))
    level = 'error'
  endif
  return [join(parts, '; '), level]
enddef

# The buffers of `root` that hold unsaved text, by number: the person's work.
def UnsavedBuffers(root: string): dict<bool>
  var out: dict<bool> = {}
  for info in getbufinfo({bufloaded: 1})
    var file = BufFile(info.bufnr)
    if file != '' && Relative(root, file) != '' && info.changed
      out[string(info.bufnr)] = true
    endif
  endfor
  return out
enddef

# The paths of `r.applied` changed through the editor in a buffer that held unsaved text before
# the step (`unsaved`: UnsavedBuffers() then) and that the step did not replace (not a conflict
# it forced): the sidecar merged the step into that text, and the buffer is the person's to save.
def MergedIntoUnsaved(root: string, r: dict<any>, unsaved: dict<bool>): list<string>
  var forced = r.conflicts->copy()->map((_, x) => x.path)
  var out = []
  for a in r.applied
    var b = get(a, 'via', '') == 'editor' ? FindBuf(root .. '/' .. a.path) : -1
    if b != -1 && has_key(unsaved, string(b)) && index(forced, a.path) < 0
      out->add(a.path)
    endif
  endfor
  return sort(out)
enddef

# Writes the buffers the sidecar changed through the editor, as the agent saved its files:
# without autocommands (a format-on-save would change the bytes the undo puts back) and with the
# file's own last line end; but not those of `keep` (merged into the person's unsaved text).
# Returns the paths not written, with the reason.
def WriteBuffers(c: dict<any>, r: dict<any>, keep: list<string>): list<string>
  var failed = []
  for a in r.applied
    var b = get(a, 'via', '') == 'editor' && index(keep, a.path) < 0 ? FindBuf(c.root .. '/' .. a.path) : -1
    if b == -1 || !getbufvar(b, '&modified')
      continue
    endif
    var fixeol = getbufvar(b, '&fixeol')
    if !getbufvar(b, '&eol')
      setbufvar(b, '&fixeol', false)
    endif
    try
      mkdir(fnamemodify(c.root .. '/' .. a.path, ':h'), 'p')
      InBuffer(b, 'silent noautocmd keepalt keepjumps write')
      SyncBuffer(c, b)
      Notification(c, 'textDocument/didSave', {textDocument: {uri: FileToUri(BufFile(b))}})
    catch
      failed->add(printf('%s (%s)', a.path, substitute(v:exception, '^Vim(\w\+):', '', '')))
    finally
      setbufvar(b, '&fixeol', fixeol)
    endtry
  endfor
  return failed
enddef

# Brings buffers in line with what the sidecar wrote on disk itself: reloaded, or closed when
# their file is gone. A modified buffer is left alone unless it holds the very bytes written
# (the step's text typed or brought back by `u` before it): then it is reloaded too, which
# loses nothing, so that it is not left modified and Vim does not take the file for one changed
# behind its back at the next write.
def SyncDiskBuffers(c: dict<any>, r: dict<any>)
  for a in r.applied
    var file = c.root .. '/' .. a.path
    var b = get(a, 'via', '') != 'editor' ? FindBuf(file) : -1
    if b == -1
      continue
    endif
    var modified = getbufvar(b, '&modified')
    if modified && !(filereadable(file) && Text(b) == join(readfile(file, 'b'), "\n"))
      continue
    endif
    if filereadable(file)
      BreakUndo(b)
      InBuffer(b, modified ? 'silent! keepalt keepjumps edit!' : 'silent! keepalt keepjumps edit')
      BreakUndo(b)
    elseif a.action == 'remove' && bufwinid(b) == -1
      execute 'silent! bdelete' b
    endif
  endfor
enddef

def Emit(name: string, data: dict<any>)
  g:takeback_event = data
  if exists('#User#' .. name)
    execute 'doautocmd <nomodeline> User' name
  endif
enddef

# Undo (or redo) the changes `sel` names; `force` replaces later changes. Fires `User
# TakebackApplied` with g:takeback_event = {direction, selector, result, error, root}.
def Run(root: string, direction: string, sel: dict<any>, force: bool)
  Reload(root)
  var unsaved = UnsavedBuffers(root)
  Request(root, 'undo/apply', {selector: sel, direction: direction, force: force}, (err, r) => {
    if err != null
      Notify(DescribeError(err), get(err, 'code', 0) == 3001 || get(err, 'code', 0) == 3002 ? 'warn' : 'error')
      Emit('TakebackApplied', {direction: direction, selector: sel, result: null, error: err, root: root})
      return
    endif
    var unwritten = []
    if r.written && empty(get(r, 'failed', []) ?? [])
      var keep = MergedIntoUnsaved(root, r, unsaved)
      unwritten = WriteBuffers(clients[root], r, keep)
      SyncDiskBuffers(clients[root], r)
      if !empty(keep)
        r.notes += [printf('%s in the buffer, keeping your unsaved changes: :w %s to finish', direction == 'undo' ? 'put back' : 'made again', Join(keep))]
      endif
    endif
    var [msg, level] = Describe(sel, r, unwritten)
    Notify(msg, level)
    Emit('TakebackApplied', {direction: direction, selector: sel, result: r, error: null, root: root})
  })
enddef

# ---------------------------------------------------------------------------------------------
# :Takeback

# :Takeback {args}: `args` is the command line after the name ("undo! turn 2 %"), `bang` the
# command's own !. Errors (an unknown subcommand or selector) are messages, not exceptions.
export def Command(args: string, bang: bool)
  var words = split(args)
  var sub = empty(words) ? 'list' : remove(words, 0)
  var force = bang
  if sub =~ '!$'
    force = true
    sub = sub[: -2]
  endif
  if !empty(words) && words[-1] == '!'
    force = true
    remove(words, -1)
  endif
  var root = Root(BufFile(bufnr()))
  if sub == 'list'
    var params: dict<any> = {}
    for w in words
      if w == 'all'
        params.all = true
      else
        params.turn = w
      endif
    endfor
    List(root, params)
    return
  endif
  if index(subcommands, sub) < 0
    Notify(printf('unknown subcommand "%s": use %s', sub, join(subcommands, ', ')), 'error')
    return
  endif
  var sel = ParseSelector(words, root)
  if type(sel) == v:t_string
    Notify(sel, 'error')
    return
  endif
  if sub == 'preview'
    Preview(root, sel, 'undo')
  else
    Run(root, sub, sel, force)
  endif
enddef

# Completion of :Takeback (-complete=customlist): subcommands, then selector words and the ids
# and turn numbers of the workspace's last listing.
export def Complete(lead: string, line: string, _: number): list<string>
  var words = split(line, '\s\+', true)
  var n = len(words)
  var cands: list<string> = []
  if n <= 2
    cands = subcommands
  else
    var sub = substitute(words[1], '!$', '', '')
    var list = get(lists, Root(BufFile(bufnr())), {})
    if sub == 'list'
      cands = ['all']
    elseif index(subcommands, sub) < 0
      cands = []
    elseif words[n - 2] == 'turn' || words[n - 2] == 'after'
      cands = get(list, 'turns', [])->copy()->map((_, t) => string(t.seq))
    else
      cands = ['last', 'turn', 'after', '%'] + get(list, 'sets', [])->copy()->map((_, s) => s.id)
    endif
  endif
  return cands->copy()->filter((_, s) => stridx(s, lead) == 0)
enddef

# The text buffer `b` holds, as the bytes of its file (see Text above), for scripts and tests.
export def BufferText(b: number): string
  return Text(b)
enddef

# Stops every sidecar this Vim started (for tests, and before a restart with other options).
export def Stop()
  for c in values(clients)
    job_stop(c.job)
  endfor
  clients = {}
enddef
