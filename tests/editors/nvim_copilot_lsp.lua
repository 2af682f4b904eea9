-- Headless Neovim scenario for tests/editors/test_nvim_copilot_lsp.py: copilot-lsp, a
-- Copilot-style next-edit client (vendored unchanged under tests/editors/vendor/copilot-lsp),
-- pointed at lsp-assist the way its users configure it (vim.lsp.config + vim.lsp.enable, with
-- lsp-assist's command) and its README's normal-mode <Tab> mapping, verbatim. Renames a
-- parameter, waits for copilot-lsp's own extmarks, then <Tab> jumps and <Tab> applies.
-- The lsp-assist plugin is not loaded.
local env = vim.env
local params = vim.json.decode(env.LSP_ASSIST_PARAMS)
local buf
local snapshot
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_steps.lua")(function()
  return snapshot()
end)
local results, feed, fail = H.results, H.feed, H.fail
local ns = vim.api.nvim_create_namespace("copilotlsp.nes")

local function marks()
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local d = m[4]
    local vlines = {}
    for _, vl in ipairs(d.virt_lines or {}) do
      local s = ""
      for _, chunk in ipairs(vl) do
        s = s .. chunk[1]
      end
      table.insert(vlines, s)
    end
    local text = ""
    for _, chunk in ipairs(d.virt_text or {}) do
      text = text .. chunk[1]
    end
    table.insert(out, { row = m[2], col = m[3], end_row = d.end_row, end_col = d.end_col, hl = d.hl_group, text = text, virt_lines = vlines })
  end
  return out
end

local function line(row)
  return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
end

snapshot = function()
  return {
    mode = vim.fn.mode(),
    cursor = vim.api.nvim_win_get_cursor(0),
    marks = buf and marks() or {},
    nes_state = buf and vim.b[buf].nes_state or nil,
  }
end

local function client()
  return vim.lsp.get_clients({ name = "copilot_ls", bufnr = buf })[1]
end

local steps = {
  {
    name = "attached",
    wait = function()
      local c = client()
      return c and c.initialized and c or nil
    end,
    timeout = 15000,
    record = function(c)
      H.wrap_rpc(c)
      results.capability = (c.server_capabilities.experimental or {}).nextEdit
    end,
  },
  {
    name = "rename_shows_next_edit",
    act = function()
      vim.api.nvim_win_set_cursor(0, { params.def_row + 1, params.col })
      H.feed("ciw" .. params.new .. "<Esc>", "n")
    end,
    wait = function()
      return vim.b[buf].nes_state and #marks() > 0
    end,
    record = function()
      results.shown = snapshot()
      results.screen_shown = H.screen()
    end,
  },
  {
    name = "tab_jumps",
    act = function()
      feed("<Tab>")
    end,
    wait = function()
      return vim.api.nvim_win_get_cursor(0)[1] - 1 == params.next_row
    end,
    record = function()
      results.after_jump = snapshot()
    end,
  },
  {
    name = "tab_applies",
    act = function()
      results.before_apply = line(params.next_row)
      feed("<Tab>")
    end,
    wait = function()
      return line(params.next_row) ~= results.before_apply
    end,
    settle = 200,
    record = function()
      results.after_apply = snapshot()
      results.after_apply.line = line(params.next_row)
    end,
  },
}

-- The user's configuration, as copilot-lsp's README has it, with lsp-assist as the server.
vim.opt.rtp:prepend(env.LSP_ASSIST_VENDOR)
vim.g.copilot_nes_debounce = 50
vim.cmd.runtime("plugin/copilot-lsp.lua")
vim.lsp.config("copilot_ls", {
  cmd = { env.LSP_ASSIST_SERVER, "serve" },
  init_options = vim.json.decode(env.LSP_ASSIST_INIT_OPTIONS),
})
vim.lsp.enable("copilot_ls")
vim.keymap.set("n", "<tab>", function()
  local bufnr = vim.api.nvim_get_current_buf()
  local state = vim.b[bufnr].nes_state
  if state then
    -- Try to jump to the start of the suggestion edit.
    -- If already at the start, then apply the pending suggestion and jump to the end of the edit.
    local _ = require("copilot-lsp.nes").walk_cursor_start_edit()
      or (require("copilot-lsp.nes").apply_pending_nes() and require("copilot-lsp.nes").walk_cursor_end_edit())
    return nil
  else
    -- Resolving the terminal's inability to distinguish between `TAB` and `<C-i>` in normal mode
    return "<C-i>"
  end
end, { desc = "Accept Copilot NES suggestion", expr = true })

vim.cmd.edit(env.LSP_ASSIST_FILE)
vim.bo.filetype = "python"
buf = vim.api.nvim_get_current_buf()
if not vim.lsp.config then
  fail("no vim.lsp.config")
end
H.run(steps)
