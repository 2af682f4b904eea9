-- Headless Neovim scenario for tests/editors/test_nvim_next_edit.py (`nvim --headless --clean -u NONE`).
--
-- The real plugin and the real server on a real Python file: rename a parameter with `ciw`,
-- wait for the next-edit extmarks at the next occurrence, scroll it off screen (the hint),
-- <Tab> jumps, <Tab> accepts, <Esc> dismisses the next one; then a second rename whose edit
-- must not be applied once the buffer changed; then a third rename left in Insert mode, where
-- the completion's <Tab> jumps to and applies the next edit when no ghost text is shown. Every message to and from the server is
-- recorded by wrapping the client's RPC (method, params, reply, times). Keys go through
-- feedkeys so the plugin's mappings and autocommands run as for a user; every wait is bounded.
local env = vim.env
local params = vim.json.decode(env.LSP_ASSIST_PARAMS)
local buf
local next_edit = require("lsp_assist.next_edit")
local inline = require("lsp_assist.inline")
local snapshot -- defined below
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_steps.lua")(function()
  return snapshot()
end)
local results, feed, screen, now_ms, fail = H.results, H.feed, H.screen, H.now_ms, H.fail

local function marks()
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, next_edit.ns, 0, -1, { details = true })) do
    local d = m[4]
    local text = ""
    for _, chunk in ipairs(d.virt_text or {}) do
      text = text .. chunk[1]
    end
    table.insert(out, {
      row = m[2],
      col = m[3],
      end_row = d.end_row,
      end_col = d.end_col,
      hl = d.hl_group,
      text = text,
      pos = d.virt_text_pos,
      sign = d.sign_text and vim.trim(d.sign_text) or nil,
    })
  end
  return out
end

snapshot = function()
  return {
    mode = vim.fn.mode(),
    cursor = vim.api.nvim_win_get_cursor(0),
    marks = buf and marks() or {},
    item = buf and next_edit.current(buf) or nil,
    version = buf and vim.lsp.util.buf_versions[buf] or nil,
  }
end

local function line(row)
  return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
end

-- When the next edit was drawn (the module's render is local: watch on_result's outcome).
local on_result = next_edit.on_result
next_edit.on_result = function(...)
  local shown = on_result(...)
  if shown then
    results.shown_at = results.shown_at or {}
    table.insert(results.shown_at, now_ms())
  end
  return shown
end

local function shown_at(row)
  return function()
    local m = marks()
    for _, mk in ipairs(m) do
      if mk.row == row and mk.hl == "LspAssistNextEditDelete" then
        return m
      end
    end
    return nil
  end
end

local function rename(row, col, new)
  return function()
    vim.api.nvim_win_set_cursor(0, { row + 1, col })
    results.rename_started = results.rename_started or {}
    table.insert(results.rename_started, now_ms())
    feed("ciw" .. new .. "<Esc>", "n")
  end
end

local steps = {
  {
    name = "initialized",
    wait = function()
      local client = inline.get_client(buf)
      return client and client.initialized and next_edit.supported(client) and client or nil
    end,
    timeout = 15000,
    record = function(client)
      H.wrap_rpc(client)
      results.capability = client.server_capabilities.experimental.nextEdit
    end,
  },
  {
    name = "rename_shows_next_edit",
    act = rename(params.def_row, params.col, params.new),
    wait = shown_at(params.next_row),
    record = function()
      results.after_rename = snapshot()
      results.after_rename.line = line(params.def_row)
      results.screen_shown = screen()
    end,
  },
  {
    name = "off_screen_hint",
    act = function()
      vim.cmd("normal! zb") -- the cursor's line at the bottom: the edit below is off screen
    end,
    wait = function()
      for _, m in ipairs(marks()) do
        if m.pos == "eol" and m.text:find("next edit", 1, true) then
          return m
        end
      end
    end,
    record = function(m)
      results.hint = m
      results.screen_hint = screen()
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
    settle = 100, -- the edit stays shown after the jump
    record = function()
      results.after_jump = snapshot()
      results.screen_jump = screen()
    end,
  },
  {
    name = "tab_accepts",
    act = function()
      results.before_accept = line(params.next_row)
      feed("<Tab>")
    end,
    wait = function()
      return line(params.next_row) ~= results.before_accept
    end,
    record = function()
      results.after_accept = snapshot()
      results.after_accept.line = line(params.next_row)
    end,
  },
  {
    name = "accept_command_replied",
    wait = function()
      for _, e in ipairs(results.sent) do
        if e.method == "workspace/executeCommand" and e.params.command == "lspAssist.nextEdit.accept" then
          return e.t_reply and e or nil
        end
      end
    end,
  },
  {
    name = "next_one_shown",
    wait = function()
      local m = marks()
      return next_edit.current(buf) and #m > 0 and m or nil
    end,
    record = function()
      results.second = snapshot()
    end,
  },
  {
    name = "esc_dismisses",
    act = function()
      feed("<Esc>")
    end,
    wait = function()
      return #marks() == 0
    end,
    settle = 300, -- and it stays dismissed while nothing changes
    record = function()
      results.after_dismiss = snapshot()
    end,
  },
  {
    name = "second_rename_shows",
    act = rename(params.def2_row, params.col2, params.new2),
    wait = shown_at(params.next2_row),
    record = function()
      results.third = snapshot()
      results.third.line = line(params.next2_row)
    end,
  },
  {
    name = "stale_never_applied",
    act = function()
      -- The buffer changes (a far line gets a space) and accept runs before any autocommand
      -- could clear the edit: the version check alone must refuse it.
      local last = vim.api.nvim_buf_line_count(buf) - 1
      vim.api.nvim_buf_set_text(buf, last, 0, last, 0, { " " })
      results.stale_accept = next_edit.accept(buf)
      results.stale_line = line(params.next2_row)
      -- A late answer computed for the old version is never shown either.
      local client = inline.get_client(buf)
      local item = results.third.item
      results.stale_result_shown = next_edit.on_result(buf, client, item.textDocument.version, { edits = { item } })
    end,
    settle = 200,
    record = function()
      results.after_stale = snapshot()
      results.after_stale.line = line(params.next2_row)
    end,
  },
  {
    name = "insert_mode_rename_shows",
    act = function()
      vim.api.nvim_win_set_cursor(0, { params.def3_row + 1, params.col3 })
      feed("ciw" .. params.new, "n") -- and stay in Insert mode
    end,
    wait = function()
      return vim.fn.mode() == "i" and shown_at(params.next3_row)()
    end,
    record = function()
      results.insert_shown = snapshot()
    end,
  },
  {
    name = "insert_mode_tab_jumps",
    act = function()
      feed("<Tab>") -- the completion's accept key: no ghost text is shown, so the next edit
    end,
    wait = function()
      return vim.fn.mode() == "i" and vim.api.nvim_win_get_cursor(0)[1] - 1 == params.next3_row
    end,
    record = function()
      results.insert_jump = snapshot()
    end,
  },
  {
    name = "insert_mode_tab_accepts",
    act = function()
      results.before_insert_accept = line(params.next3_row)
      feed("<Tab>")
    end,
    wait = function()
      return line(params.next3_row) ~= results.before_insert_accept
    end,
    record = function()
      results.insert_accept = snapshot()
      results.insert_accept.line = line(params.next3_row)
      feed("<Esc>")
    end,
  },
  {
    name = "health",
    act = function()
      vim.cmd("checkhealth lsp_assist")
      results.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    end,
  },
}

-- `next_edit = { enabled = false }`: the rename, then a pause; nothing may be asked or drawn.
if params.disabled then
  steps = {
    steps[1],
    {
      name = "rename_then_nothing",
      act = rename(params.def_row, params.col, params.new),
      wait = function()
        return line(params.def_row):find(params.new, 1, true) ~= nil
      end,
      settle = 500, -- well past the debounce and the rules' few milliseconds
      record = function()
        results.after_rename = snapshot()
        results.after_rename.line = line(params.def_row)
      end,
    },
  }
end

local ok_setup, err_setup = pcall(function()
  require("lsp_assist").setup({
    cmd = { env.LSP_ASSIST_SERVER, "serve" },
    init_options = vim.json.decode(env.LSP_ASSIST_INIT_OPTIONS),
    filetypes = { "python" },
    debounce_ms = 20,
    next_edit = { enabled = not params.disabled },
  })
end)
if not ok_setup then
  fail("setup failed: " .. tostring(err_setup))
  return
end
vim.cmd.edit(env.LSP_ASSIST_FILE)
vim.bo.filetype = "python"
buf = vim.api.nvim_get_current_buf()
H.run(steps)
