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

local state = { last = {} }

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

local watch = require("lsp_assist.rest_watch").new({
  name = "lsp_assist_cursor_rest",
  events = { "CursorMoved", "CursorMovedI", "BufEnter" },
  idle_ms = function()
    return M.idle_ms
  end,
  on_rest = function(buf)
    M.send(buf)
  end,
  on_detach = function(buf)
    state.last[buf] = nil
  end,
})

M.detach = watch.detach

--- Start watching `buf` (called from the plugin's on_attach; idempotent).
M.attach = watch.attach

return M
