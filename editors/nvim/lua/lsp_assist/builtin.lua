--- lsp_assist.builtin: the plugin's keys and notifications on Neovim 0.12's built-in renderer.
---
--- On 0.12 `vim.lsp.inline_completion` requests and draws the ghost text; this module makes
--- accept word / accept line / dismiss act on what it shows, and turns
--- `lspAssist/suggestionReady` into a new request of the built-in (never a second ghost of
--- the plugin's own renderer). Only public API is used: `get({ on_accept })` hands over the
--- shown item (and hides it), which is how partial accept and dismiss work.
---
--- The item's shape changed during 0.12's development (`range` a Range4 list, a vim.Range
--- with `start.row`, or one with `start_row`), so the accessors below accept each form.
local inline = require("lsp_assist.inline")

local M = {}

local function api()
  return vim.lsp.inline_completion
end

---@return string
local function item_text(item)
  local t = item.insert_text
  if t == nil then
    t = item.value -- pre-release shape
  end
  if type(t) == "table" then
    t = t.value
  end
  return type(t) == "string" and t or ""
end

--- 0-based row and byte column where the item's text starts (nil: at the cursor).
---@return integer|nil, integer|nil
local function item_start(item)
  local r = item.range
  if r == nil then
    return nil, nil
  end
  if r[1] ~= nil then
    return r[1], r[2]
  end
  if r.start_row ~= nil then
    return r.start_row, r.start_col
  end
  if type(r.start) == "table" and r.start.row ~= nil then
    return r.start.row, r.start.col
  end
  return nil, nil
end

--- Insert the next word or line of `item` at the cursor; the rest comes back with the
--- built-in's next request (the server answers it from its typing-through index).
---@param item table
---@param kind "word"|"line"
---@return boolean inserted
function M.insert_partial(item, kind)
  local text = item_text(item)
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  local srow, scol = item_start(item)
  local typed = ""
  if srow ~= nil and srow == row and scol <= col then
    local line = vim.api.nvim_buf_get_lines(0, row, row + 1, false)[1] or ""
    typed = line:sub(scol + 1, col)
    if text:sub(1, #typed) ~= typed then
      return false -- the user typed something else since
    end
  end
  local ghost = text:sub(#typed + 1)
  if ghost == "" then
    return false
  end
  local part = inline.partial(ghost, kind)
  local lines = vim.split(part, "\n", { plain = true })
  vim.api.nvim_buf_set_text(0, row, col, row, col, lines)
  local new_row = row + #lines - 1
  local new_col = (#lines == 1 and col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { new_row + 1, new_col })
  return true
end

--- <M-Right> / <M-l>: true when the built-in showed an item (it is accepted in part).
---@param kind "word"|"line"
---@return boolean
function M.accept(kind)
  return api().get({
    on_accept = function(item)
      M.insert_partial(item, kind)
      return nil -- newer 0.12 builds apply a returned item; nil: we did it ourselves
    end,
  }) == true
end

--- Cancel this buffer's inline-completion requests still on their way (a reply arriving
--- after <C-]> would draw the ghost the user just refused). Returns how many.
---@param buf integer
---@return integer
function M.cancel_pending(buf)
  local n = 0
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf, name = inline.client_name })) do
    for id, req in pairs(client.requests or {}) do
      if req.method == "textDocument/inlineCompletion" and req.type == "pending" and (req.bufnr == nil or req.bufnr == buf) then
        pcall(inline.client_cancel, client, id)
        n = n + 1
      end
    end
  end
  return n
end

--- <C-]>: hide the built-in's item (get() with an on_accept that inserts nothing) and cancel
--- what is in flight. True when there was something to dismiss.
---@param buf integer
---@return boolean
function M.dismiss(buf)
  local shown = api().get({
    on_accept = function()
      return nil
    end,
  }) == true
  local cancelled = M.cancel_pending(buf)
  return shown or cancelled > 0
end

--- Ask the built-in for a new suggestion here: it requests on CursorMovedI (after its own
--- debounce), so fire that for this buffer.
---@param buf integer
function M.refresh(buf)
  if vim.api.nvim_buf_is_valid(buf) and vim.fn.mode():sub(1, 1) == "i" then
    vim.api.nvim_exec_autocmds("CursorMovedI", { buffer = buf, modeline = false })
  end
end

--- `lspAssist/suggestionReady` on 0.12: a longer suggestion is ready for this position; the
--- built-in asks again. Nothing is drawn by the plugin itself.
---@param params table
---@return boolean refreshed
function M.on_suggestion_ready(params)
  local buf = vim.api.nvim_get_current_buf()
  if not params or params.uri ~= vim.uri_from_bufnr(buf) or vim.fn.mode():sub(1, 1) ~= "i" then
    return false
  end
  local version = vim.lsp.util.buf_versions and vim.lsp.util.buf_versions[buf]
  if params.version and version and params.version ~= version then
    return false
  end
  M.refresh(buf)
  return true
end

return M
