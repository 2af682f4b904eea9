--- lsp_assist.next_edit: next-edit suggestions (an edit away from the cursor) for Neovim 0.10+.
---
--- After a change (debounced like completions) or a cursor move, asks the server with
--- `textDocument/copilotInlineEdit` (the method Copilot's language server and its Neovim clients
--- use) and shows the first edit of the answer with extmarks: the replaced text highlighted
--- (struck through), the new text as inline virtual text after it (further lines as virtual
--- lines), a sign on its line, and a hint at the end of the cursor's line while it is off
--- screen. The jump key moves the cursor to it, a second press applies it (only to the buffer
--- version it was computed for) and runs its command; the dismiss key sends the reject command.
--- Any further change clears it. Nothing here touches the completion's ghost text.
local config = require("lsp_assist.config")
local inline = require("lsp_assist.inline")

local M = {}

M.ns = vim.api.nvim_create_namespace("lsp_assist_next_edit")
M.method = "textDocument/copilotInlineEdit"

---@class lsp_assist.NextEditShown
---@field item table           the edit object as the server sent it
---@field client_id integer
---@field version integer      the LSP document version it was computed for
---@field tick integer         the buffer's changedtick when it was drawn
---@field row integer          0-based start row of the replaced range
---@field col integer          byte column of its start
---@field end_row integer
---@field end_col integer
---@field hint integer|nil     extmark id of the off-screen hint

---@class lsp_assist.NextEditState
---@field timer uv.uv_timer_t|nil
---@field req_id integer|nil
---@field req_client vim.lsp.Client|nil
---@field seq integer
---@field shown lsp_assist.NextEditShown|nil
---@field rejected table<string, boolean>  edits dismissed at a version: not shown again there

---@type table<integer, lsp_assist.NextEditState>
local states = {}
local uv = vim.uv or vim.loop

local function S(buf)
  local st = states[buf]
  if not st then
    st = { seq = 0, rejected = {} }
    states[buf] = st
  end
  return st
end

local function opts()
  local o = config.options.next_edit
  return type(o) == "table" and o or {}
end

--- True when the server advertises next edits (`experimental.nextEdit`).
function M.supported(client)
  local caps = client and client.server_capabilities
  local ne = caps and type(caps.experimental) == "table" and caps.experimental.nextEdit
  return type(ne) == "table" and ne.method == M.method
end

local function version_of(buf)
  return vim.lsp.util.buf_versions[buf] or vim.api.nvim_buf_get_changedtick(buf)
end

function M.visible(buf)
  local st = states[buf or vim.api.nvim_get_current_buf()]
  return st ~= nil and st.shown ~= nil
end

--- The edit shown in `buf` (the server's object), or nil.
function M.current(buf)
  local st = states[buf or vim.api.nvim_get_current_buf()]
  return st and st.shown and st.shown.item or nil
end

function M.cancel(buf)
  local st = states[buf]
  if not st then
    return
  end
  st.seq = st.seq + 1 -- a reply already on its way is dropped
  if st.timer then
    st.timer:stop()
  end
  if st.req_id and st.req_client then
    pcall(inline.client_cancel, st.req_client, st.req_id)
  end
  st.req_id, st.req_client = nil, nil
end

--- Remove what is drawn (no message to the server: typing over is not a rejection).
function M.clear(buf)
  local st = states[buf]
  if st then
    st.shown = nil
  end
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  end
end

local function key_of(item)
  local r = item.range
  return ("%s:%d:%d:%d:%d:%s"):format(
    tostring(item.textDocument and item.textDocument.version),
    r.start.line,
    r.start.character,
    r["end"].line,
    r["end"].character,
    item.text
  )
end

--- Byte positions of the item's range in the buffer as it is now, or nil when out of range.
local function byte_range(buf, item, encoding)
  local r = item.range
  local n = vim.api.nvim_buf_line_count(buf)
  if r.start.line >= n or r["end"].line >= n or r.start.line > r["end"].line then
    return nil
  end
  local first = vim.api.nvim_buf_get_lines(buf, r.start.line, r.start.line + 1, false)[1] or ""
  local last = vim.api.nvim_buf_get_lines(buf, r["end"].line, r["end"].line + 1, false)[1] or ""
  return r.start.line,
    inline.byte_col(first, r.start.character, encoding),
    r["end"].line,
    inline.byte_col(last, r["end"].character, encoding)
end

--- The hint at the end of the cursor's line while the edit is outside the window's view.
function M.refresh_hint(buf)
  local st = states[buf]
  if not st or not st.shown or vim.api.nvim_get_current_buf() ~= buf then
    return
  end
  local shown = st.shown
  if shown.hint then
    pcall(vim.api.nvim_buf_del_extmark, buf, M.ns, shown.hint)
    shown.hint = nil
  end
  local top, bottom = vim.fn.line("w0") - 1, vim.fn.line("w$") - 1
  if shown.row >= top and shown.row <= bottom then
    return
  end
  local cursor_row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local arrow = shown.row < top and "↑" or "↓"
  local key = (config.options.keymaps or {}).next_edit
  local text = ("  %s next edit at line %d%s"):format(arrow, shown.row + 1, key and (" (" .. key .. ")") or "")
  shown.hint = vim.api.nvim_buf_set_extmark(buf, M.ns, cursor_row, 0, {
    virt_text = { { text, "LspAssistNextEditHint" } },
    virt_text_pos = "eol",
    hl_mode = "combine",
  })
end

--- Draw `item` (its range resolved against the buffer now). Returns true when drawn.
local function render(buf, client, item)
  local row, col, end_row, end_col = byte_range(buf, item, client.offset_encoding)
  if not row then
    return false
  end
  M.clear(buf)
  local new_lines = vim.split(item.text or "", "\n", { plain = true })
  if end_row > row or end_col > col then
    vim.api.nvim_buf_set_extmark(buf, M.ns, row, col, {
      end_row = end_row,
      end_col = end_col,
      hl_group = "LspAssistNextEditDelete",
      priority = 4100, -- above syntax and diagnostics: the struck-through text must show
    })
  end
  local first = new_lines[1]
  local rest = vim.list_slice(new_lines, 2)
  local mark = {
    sign_text = opts().sign or "»",
    sign_hl_group = "LspAssistNextEditSign",
  }
  if first ~= "" then
    mark.virt_text = { { first, "LspAssistNextEditAdd" } }
    mark.virt_text_pos = "inline"
  end
  if #rest > 0 then
    mark.virt_lines = vim.tbl_map(function(l)
      return { { l, "LspAssistNextEditAdd" } }
    end, rest)
  end
  vim.api.nvim_buf_set_extmark(buf, M.ns, end_row, end_col, mark)
  S(buf).shown = {
    item = item,
    client_id = client.id,
    version = item.textDocument.version,
    tick = vim.api.nvim_buf_get_changedtick(buf),
    row = row,
    col = col,
    end_row = end_row,
    end_col = end_col,
  }
  M.refresh_hint(buf)
  return true
end

--- Handle a copilotInlineEdit answer for the request made at `version` (exposed for tests).
function M.on_result(buf, client, version, result)
  local edits = type(result) == "table" and result.edits or nil
  if type(edits) ~= "table" or #edits == 0 or not vim.api.nvim_buf_is_valid(buf) then
    return false
  end
  local item = edits[1] -- alternatives, not a sequence: the first one
  local doc = item.textDocument
  if type(doc) ~= "table" or type(item.range) ~= "table" or type(item.text) ~= "string" then
    return false
  end
  -- Never show an edit computed for another version of the buffer than the one it has now.
  if doc.version ~= version or version_of(buf) ~= version then
    return false
  end
  if doc.uri and doc.uri ~= vim.uri_from_bufnr(buf) then
    return false
  end
  if S(buf).rejected[key_of(item)] then
    return false
  end
  if not render(buf, client, item) then
    return false
  end
  inline.client_notify(client, "textDocument/didShowInlineEdit", { item = item })
  return true
end

--- Ask the server now (cancelling a request still on its way).
function M.request(buf)
  local client = inline.get_client(buf)
  if not client or not M.supported(client) or vim.api.nvim_get_current_buf() ~= buf then
    return
  end
  M.cancel(buf)
  local st = S(buf)
  local seq = st.seq
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local version = version_of(buf)
  params.textDocument.version = version
  local ok, id = inline.client_request(client, M.method, params, function(err, result)
    if seq ~= st.seq then
      return -- superseded or cancelled
    end
    st.req_id, st.req_client = nil, nil
    if err then
      return
    end
    M.on_result(buf, client, version, result)
  end, buf)
  if ok then
    st.req_id, st.req_client = id, client
  end
end

--- Ask after the debounce (the completion's `debounce_ms` unless `next_edit.debounce_ms`).
function M.schedule(buf)
  local st = S(buf)
  M.cancel(buf)
  st.timer = st.timer or uv.new_timer()
  local delay = opts().debounce_ms or config.options.debounce_ms or 30
  local seq = st.seq
  st.timer:start(
    delay,
    0,
    vim.schedule_wrap(function()
      if seq == st.seq and vim.api.nvim_buf_is_valid(buf) then
        M.request(buf)
      end
    end)
  )
end

local function client_of(buf)
  local st = states[buf]
  return st and st.shown and vim.lsp.get_client_by_id(st.shown.client_id) or nil
end

--- Apply the shown edit: only to the version it was computed for; then run its command.
--- Returns true when applied.
function M.accept(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local st = states[buf]
  local shown = st and st.shown
  local client = client_of(buf)
  if not shown or not client then
    return false
  end
  if version_of(buf) ~= shown.version or vim.api.nvim_buf_get_changedtick(buf) ~= shown.tick then
    M.clear(buf) -- stale: never applied to a changed buffer
    return false
  end
  local item = shown.item
  M.clear(buf)
  vim.lsp.util.apply_text_edits({ { range = item.range, newText = item.text } }, buf, client.offset_encoding)
  -- The cursor goes to the end of the new text, as after typing it.
  local new_lines = vim.split(item.text, "\n", { plain = true })
  local end_row = shown.row + #new_lines - 1
  local end_col = (#new_lines == 1 and shown.col or 0) + #new_lines[#new_lines]
  if vim.api.nvim_get_current_buf() == buf then
    pcall(vim.api.nvim_win_set_cursor, 0, { end_row + 1, end_col })
  end
  inline.exec_command(client, item.command, buf)
  return true
end

--- First press: move the cursor to the edit; second press (cursor on its line): apply it.
function M.jump_or_accept(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local st = states[buf]
  if not st or not st.shown then
    return false
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  if cursor[1] - 1 ~= st.shown.row then
    vim.api.nvim_win_set_cursor(0, { st.shown.row + 1, st.shown.col })
    M.refresh_hint(buf)
    return true
  end
  return M.accept(buf)
end

--- Hide the shown edit and tell the server it was rejected (`lspAssist.nextEdit.reject`).
function M.dismiss(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local st = states[buf]
  local shown = st and st.shown
  local client = client_of(buf)
  M.cancel(buf)
  M.clear(buf)
  if not shown or not client then
    return false
  end
  st.rejected[key_of(shown.item)] = true
  local id = shown.item.id or (shown.item.command and shown.item.command.arguments or {})[1]
  inline.client_request(client, "workspace/executeCommand", {
    command = "lspAssist.nextEdit.reject",
    arguments = { id },
  }, function() end, buf)
  return true
end

--- Normal-mode keys (insert mode goes through the completion's keys in init.lua, which fall
--- back to these actions when no ghost text is shown): each is its own key when nothing is shown.
local function set_keymaps(buf)
  local km = config.options.keymaps or {}
  local function map(mode, lhs, action, desc)
    if not lhs or lhs == "" then
      return
    end
    vim.keymap.set(mode, lhs, function()
      if M.visible(buf) then
        return ("<Cmd>lua require('lsp_assist.next_edit').%s()<CR>"):format(action)
      end
      return lhs
    end, { buffer = buf, expr = true, silent = true, desc = desc })
  end
  map("n", km.next_edit, "jump_or_accept", "lsp-assist: jump to the next edit, then accept it")
  map("n", km.next_edit_dismiss, "dismiss", "lsp-assist: dismiss the next edit")
  -- A key of its own in Insert mode only when it is not the completion's accept/dismiss key
  -- (those already try the next edit when no ghost text is shown).
  if km.next_edit and km.next_edit ~= km.accept then
    map("i", km.next_edit, "jump_or_accept", "lsp-assist: jump to the next edit, then accept it")
  end
end

local attached = {} ---@type table<integer, boolean>

function M.attach(buf)
  if attached[buf] or config.options.next_edit == false or opts().enabled == false then
    return
  end
  attached[buf] = true
  local group = vim.api.nvim_create_augroup("lsp_assist_next_edit_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "TextChangedP" }, {
    group = group,
    buffer = buf,
    callback = function()
      M.clear(buf) -- the buffer moved on: what is shown no longer applies
      M.schedule(buf)
    end,
  })
  vim.api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI" }, {
    group = group,
    buffer = buf,
    callback = function()
      if M.visible(buf) then
        M.refresh_hint(buf) -- keep it while the user goes to it
      else
        M.schedule(buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd("WinScrolled", {
    group = group,
    callback = function()
      if vim.api.nvim_get_current_buf() == buf then
        M.refresh_hint(buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "BufWipeout", "BufUnload" }, {
    group = group,
    buffer = buf,
    callback = function()
      M.cancel(buf)
      M.clear(buf)
      local st = states[buf]
      if st and st.timer then
        st.timer:close()
      end
      states[buf], attached[buf] = nil, nil
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
  set_keymaps(buf)
end

--- Struck-through red for the replaced text, green for the new text; explicit 256-colour and
--- truecolor values (terminals without truecolor show them too); a user's own groups win.
function M.define_highlights()
  local set = vim.api.nvim_set_hl
  set(0, "LspAssistNextEditDelete", {
    fg = "#d75f5f",
    ctermfg = 167,
    strikethrough = true,
    cterm = { strikethrough = true },
    default = true,
  })
  set(0, "LspAssistNextEditAdd", { fg = "#5faf5f", ctermfg = 71, default = true })
  set(0, "LspAssistNextEditSign", { fg = "#5faf5f", ctermfg = 71, bold = true, default = true })
  set(0, "LspAssistNextEditHint", {
    fg = "#808080",
    ctermfg = 244,
    italic = true,
    cterm = { italic = true },
    default = true,
  })
end

return M
