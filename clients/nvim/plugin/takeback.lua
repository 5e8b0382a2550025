-- takeback: the :Takeback command only. Everything else loads on first use; the sidecar starts
-- when require('takeback').setup() has been called and a file is opened.
if vim.g.loaded_takeback then
  return
end
vim.g.loaded_takeback = 1

vim.api.nvim_create_user_command('Takeback', function(args)
  require('takeback.command').run(args)
end, {
  nargs = '*',
  bang = true,
  range = true,
  desc = 'takeback: list, pick, preview, undo or redo what an AI agent changed',
  complete = function(...)
    return require('takeback.command').complete(...)
  end,
})
