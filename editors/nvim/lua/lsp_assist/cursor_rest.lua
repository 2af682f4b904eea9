--- lsp_assist.cursor_rest: tell the server where the cursor rests, so typing there starts warm.
---
--- When the cursor stays put for `idle_ms` (its own timer, not the user's 'updatetime') in a
--- buffer lsp-assist serves, the `lspAssist/cursorRest` notification carries
--- `{ textDocument = { uri, version }, position }`; the server reads that position's prompt
--- into the embedded model's cache while the model is idle (docs/embedded-latency.md). A rest
--- at the position already sent is not sent again. A server that does not know the
--- notification ignores it. Off with `cursor_rest = false`.
local inline = require("lsp_assist.inline")

local M = {}

M.idle_ms = 200
M.sent = 0 -- notifications sent (for tests and :lua inspection)
M.last_sent = nil -- the last notification's params

local uv = vim.uv or vim.loop
local state = { timers = {}, last = {}, attached = {} }

local function notify(client, method, params)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Send the rest position of `buf`'s cursor now (when it is the current buffer).
function M.send(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.api.nvim_get_current_buf() ~= buf then
    return false
  end
  local client = inline.get_client(buf)
  if not client then
    return false
  end
  local pos = vim.api.nvim_win_get_cursor(0)
  local row, col = pos[1] - 1, pos[2]
  local version = (vim.lsp.util.buf_versions and vim.lsp.util.buf_versions[buf]) or vim.b[buf].changedtick
  local key = table.concat({ version, row, col }, ":")
  if state.last[buf] == key then
    return false
  end
  state.last[buf] = key
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf), version = version },
    position = { line = row, character = vim.lsp.util.character_offset(buf, row, col, client.offset_encoding) },
  }
  notify(client, "lspAssist/cursorRest", params)
  M.sent = M.sent + 1
  M.last_sent = params
  return true
end

local function schedule(buf)
  local timer = state.timers[buf]
  if not timer then
    timer = uv.new_timer()
    state.timers[buf] = timer
  end
  timer:stop()
  timer:start(M.idle_ms, 0, vim.schedule_wrap(function()
    M.send(buf)
  end))
end

function M.detach(buf)
  local timer = state.timers[buf]
  if timer then
    timer:stop()
    timer:close()
  end
  state.timers[buf], state.last[buf], state.attached[buf] = nil, nil, nil
end

--- Start watching `buf` (called from the plugin's on_attach; idempotent).
function M.attach(buf)
  if state.attached[buf] then
    return
  end
  state.attached[buf] = true
  local group = vim.api.nvim_create_augroup("lsp_assist_cursor_rest_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "BufEnter" }, {
    group = group,
    buffer = buf,
    callback = function()
      schedule(buf)
    end,
  })
  vim.api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = group,
    buffer = buf,
    callback = function()
      M.detach(buf)
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
end

return M
