vim9script
# takeback for Vim 9: undo for AI coding agents. This file only defines :Takeback; the client
# (autoload/takeback.vim) loads on first use, so starting Vim costs nothing.

if exists('g:loaded_takeback') || v:version < 900
  finish
endif
g:loaded_takeback = 1

import autoload 'takeback.vim'

# :Takeback list [all | TURN] | preview [SEL] | undo[!] [SEL] | redo[!] [SEL]
# SEL: ID... | turn T | last | after T, and % for the current file only (default: last).
command! -bang -nargs=* -complete=customlist,takeback#Complete Takeback takeback.Command(<q-args>, <bang>false)
