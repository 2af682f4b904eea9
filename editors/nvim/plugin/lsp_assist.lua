--- lsp-assist user commands. They exist as soon as the plugin is on the runtimepath;
--- the server starts only after require("lsp_assist").setup({...}).
if vim.g.loaded_lsp_assist then
  return
end
vim.g.loaded_lsp_assist = true

local function with_setup(fn)
  return function()
    local lsp_assist = require("lsp_assist")
    if not lsp_assist.is_setup() then
      vim.notify('lsp-assist: call require("lsp_assist").setup({}) first', vim.log.levels.WARN)
      return
    end
    lsp_assist[fn]()
  end
end

vim.api.nvim_create_user_command("LspAssistEscalate", with_setup("escalate"), { desc = "lsp-assist: ask the quality model" })
vim.api.nvim_create_user_command("LspAssistWarmup", with_setup("warmup"), { desc = "lsp-assist: warm the cache" })
vim.api.nvim_create_user_command("LspAssistStats", with_setup("stats"), { desc = "lsp-assist: latency stats" })
vim.api.nvim_create_user_command("LspAssistRestart", with_setup("restart"), { desc = "lsp-assist: restart the server" })
