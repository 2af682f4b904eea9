--- lsp_assist.inline: ghost text for Neovim 0.10/0.11 (no built-in inline completion there).
---
--- Requests `textDocument/inlineCompletion` itself (debounced, cancelling the previous request),
--- renders the suggestion with extmarks (first line as inline virt_text at the cursor, further
--- lines as virt_lines) and applies accept (whole, word, line), dismiss and next/prev.
--- A suggestion is kept in a normalized form anchored in byte columns, so that it stays valid
--- while the user types characters it predicted.
local config = require("lsp_assist.config")

local M = {}

M.ns = vim.api.nvim_create_namespace("lsp_assist_ghost")
M.client_name = "lsp_assist"

local has_011 = vim.fn.has("nvim-0.11") == 1
local uv = vim.uv or vim.loop

-- Compatibility: 0.11 made client methods take `self`; 0.10 uses plain functions.

---@return boolean, integer|nil
function M.client_request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.client_notify(client, method, params)
  if has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.client_cancel(client, id)
  if has_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

function M.client_supports(client, method, bufnr)
  if has_011 then
    return client:supports_method(method, bufnr)
  end
  return client.supports_method(method, { bufnr = bufnr })
end

--- Run a server command (e.g. the item's `lspAssist.accepted`) the way 0.12's built-in does.
function M.exec_command(client, command, bufnr, handler)
  if not command then
    return
  end
  if has_011 and client.exec_cmd then
    client:exec_cmd(command, { bufnr = bufnr }, handler)
    return
  end
  M.client_request(
    client,
    "workspace/executeCommand",
    { command = command.command, arguments = command.arguments },
    handler or function() end,
    bufnr
  )
end

---@param buf integer
---@return vim.lsp.Client|nil
function M.get_client(buf)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, client in ipairs(get({ bufnr = buf, name = M.client_name })) do
    if client.initialized ~= false and not (client.is_stopped and client:is_stopped()) then
      return client
    end
  end
  return nil
end

--- LSP character offset (in the negotiated encoding) -> byte column in `line`.
---@param line string
---@param character integer
---@param encoding string
---@return integer
function M.byte_col(line, character, encoding)
  if encoding == nil or encoding == "utf-8" then
    return math.min(character, #line)
  end
  local ok, col = pcall(function()
    if has_011 then
      return vim.str_byteindex(line, encoding, character, false)
    end
    return vim.str_byteindex(line, character, encoding == "utf-16")
  end)
  if ok and col then
    return math.min(col, #line)
  end
  return math.min(character, #line)
end

---@class lsp_assist.Suggestion
---@field text string        the text replacing [start_col, end) on `row`
---@field row integer        0-based
---@field start_col integer  byte column where `text` starts
---@field end_from_eol integer bytes between the replaced range's end and the end of the line
---@field command table|nil
---@field client_id integer

---@class lsp_assist.BufState
---@field timer uv.uv_timer_t|nil
---@field req_id integer|nil
---@field req_client integer|nil
---@field seq integer
---@field items lsp_assist.Suggestion[]|nil
---@field index integer
---@field shown { sugg: lsp_assist.Suggestion, typed: string, ghost: string, end_col: integer }|nil
---@field dismissed boolean

---@type table<integer, lsp_assist.BufState>
local states = {}

---@param buf integer
---@return lsp_assist.BufState
local function S(buf)
  local st = states[buf]
  if not st then
    st = { seq = 0, index = 1, dismissed = false }
    states[buf] = st
  end
  return st
end

local function current_line(buf, row)
  return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
end

local function item_text(item)
  local t = item.insertText
  if type(t) == "table" then
    -- A snippet: show and insert its plain text (placeholders are not expanded here).
    t = t.value or ""
  end
  return t or ""
end

--- Normalize one protocol item, anchored on the line as it was when the request was made.
local function normalize(item, client, req_row, req_col, req_line)
  local row, start_col, end_col = req_row, req_col, req_col
  local range = item.range
  if range and range.start and range.start.line == req_row and range["end"].line == req_row then
    start_col = M.byte_col(req_line, range.start.character, client.offset_encoding)
    end_col = M.byte_col(req_line, range["end"].character, client.offset_encoding)
    if end_col < req_col then
      end_col = req_col
    end
  end
  local args = item.command and item.command.arguments
  return {
    text = item_text(item),
    row = row,
    start_col = start_col,
    end_from_eol = #req_line - end_col,
    command = item.command,
    client_id = client.id,
    sid = type(args) == "table" and type(args[1]) == "string" and args[1] or nil,
    base = 0,
  }
end

-- Suggestion events (the server's telemetry/events.py): shown when the extmark is drawn,
-- accepted whole or in part, dismissed, typed over; by suggestion id, never any text.
-- `st.events[sid]` is "shown" or "done" (resolved), so each is reported once.

local MAX_EVENT_IDS = 200

local function event_state(st)
  if not st.events or st.event_count > MAX_EVENT_IDS then
    st.events, st.event_count = {}, 0
  end
  return st.events
end

--- Report `event` for the suggestion `sugg` (no-op without an id or when already resolved).
--- Accepts go as a request (Neovim sends the pending didChange first), the rest as notifications.
local function report(buf, sugg, event, extra)
  local st = states[buf]
  if not st or not sugg or not sugg.sid then
    return
  end
  local seen = event_state(st)
  local state = seen[sugg.sid]
  if state == "done" or (event == "shown" and state == "shown") then
    return
  end
  if event ~= "shown" and state == nil and not vim.startswith(event, "accepted") then
    return -- never shown: nothing to resolve
  end
  if state == nil then
    st.event_count = st.event_count + 1
  end
  seen[sugg.sid] = (event == "shown" or event == "accepted_partial") and "shown" or "done"
  local client = vim.lsp.get_client_by_id(sugg.client_id)
  if not client then
    return
  end
  local params = vim.tbl_extend("force", { id = sugg.sid, event = event }, extra or {})
  if vim.startswith(event, "accepted") then
    params.uri = vim.uri_from_bufnr(buf)
    M.exec_command(client, { title = "event", command = "lspAssist.suggestionEvent", arguments = { params } }, buf)
  else
    pcall(M.client_notify, client, "lspAssist/suggestionEvent", params)
  end
end

M.report = report

--- Show this namespace's marks only in `win` (a buffer shown in two splits gets the ghost
--- text only where the cursor is). 0.11 has nvim__ns_set, 0.10 nvim__win_add_ns, which
--- scopes only marks set with `scoped = true` (an option 0.11 no longer accepts); on older
--- builds the marks show in every window of the buffer. Returns the extmark options to add.
local function scope_to_window(win)
  local api = vim.api
  if api.nvim__ns_set then
    pcall(api.nvim__ns_set, M.ns, { wins = { win } })
  elseif api.nvim__win_add_ns and api.nvim__win_del_ns then
    for _, other in ipairs(api.nvim_list_wins()) do
      if other ~= win then
        pcall(api.nvim__win_del_ns, other, M.ns)
      end
    end
    pcall(api.nvim__win_add_ns, win, M.ns)
    return { scoped = true }
  end
  return {}
end

--- Remove the ghost text (keeps the suggestion list unless `forget`).
function M.hide(buf)
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  end
  local st = states[buf]
  if st then
    st.shown = nil
  end
end

local function stop_timer(st)
  if st.timer then
    st.timer:stop()
    if not st.timer:is_closing() then
      st.timer:close()
    end
    st.timer = nil
  end
end

function M.cancel(buf)
  local st = states[buf]
  if not st then
    return
  end
  stop_timer(st)
  st.seq = st.seq + 1 -- any late reply is stale now
  if st.req_id and st.req_client then
    local client = vim.lsp.get_client_by_id(st.req_client)
    if client then
      pcall(M.client_cancel, client, st.req_id)
    end
  end
  st.req_id, st.req_client = nil, nil
end

--- Forget the suggestion, hide it and cancel anything in flight.
function M.clear(buf)
  M.cancel(buf)
  M.hide(buf)
  local st = states[buf]
  if st then
    st.items = nil
    st.index = 1
  end
end

--- Draw the current suggestion if it still fits the line and cursor; else hide it.
function M.render(buf)
  M.hide(buf)
  local st = states[buf]
  if not st or not st.items or st.dismissed then
    return false
  end
  local sugg = st.items[st.index]
  if not sugg or vim.api.nvim_get_current_buf() ~= buf then
    return false
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  if row ~= sugg.row or col < sugg.start_col then
    report(buf, sugg, "dismissed") -- the cursor moved away from it
    return false
  end
  local line = current_line(buf, row)
  local typed = line:sub(sugg.start_col + 1, col)
  if sugg.text:sub(1, #typed) ~= typed then
    report(buf, sugg, "typed_over")
    return false
  end
  local ghost = sugg.text:sub(#typed + 1)
  if ghost == "" then
    return false
  end
  local end_col = math.max(col, #line - sugg.end_from_eol)
  local lines = vim.split(ghost, "\n", { plain = true })
  local first = lines[1]
  -- Text after the cursor that the suggestion replaces (e.g. an auto-closed paren): the
  -- suggestion already ends with it, so do not show it twice.
  local replaced = line:sub(col + 1, end_col)
  if #lines == 1 and replaced ~= "" and first:sub(-#replaced) == replaced then
    first = first:sub(1, #first - #replaced)
  end
  local hl = config.options.hl_group
  -- "replace": the ghost keeps its own colours; "combine" would pick up the highlight under
  -- it (the bracket match after a ")" is bold on grey) and look like typed code.
  local opts = { hl_mode = "replace", priority = 200 }
  if first ~= "" then
    opts.virt_text = { { first, hl } }
    opts.virt_text_pos = "inline"
  end
  if #lines > 1 then
    local virt_lines = {}
    for i = 2, #lines do
      table.insert(virt_lines, { { lines[i], hl } })
    end
    opts.virt_lines = virt_lines
  end
  opts = vim.tbl_extend("force", opts, scope_to_window(vim.api.nvim_get_current_win()))
  vim.api.nvim_buf_set_extmark(buf, M.ns, row, col, opts)
  st.shown = { sugg = sugg, typed = typed, ghost = ghost, end_col = end_col }
  report(buf, sugg, "shown")
  return true
end

---@return boolean
function M.visible(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local st = states[buf]
  return st ~= nil and st.shown ~= nil
end

--- True while a request is scheduled or in flight for `buf`.
---@return boolean
function M.pending(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local st = states[buf]
  return st ~= nil and (st.timer ~= nil or st.req_id ~= nil)
end

--- The ghost text currently shown (for tests and statuslines), or nil.
function M.shown_text(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local st = states[buf]
  return st and st.shown and st.shown.ghost or nil
end

--- Request inline completions now. `trigger_kind`: 1 Invoked, 2 Automatic (default).
--- `refresh`: the answer adds to the items shown (an Invoked answer's choices, gathered later).
function M.request(buf, trigger_kind, on_done, refresh)
  buf = buf or vim.api.nvim_get_current_buf()
  local client = M.get_client(buf)
  if not client or vim.api.nvim_get_current_buf() ~= buf then
    return false
  end
  M.cancel(buf)
  local st = S(buf)
  local seq = st.seq
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = trigger_kind or 2 }
  local cursor = vim.api.nvim_win_get_cursor(0)
  local req_row, req_col = cursor[1] - 1, cursor[2]
  local req_line = current_line(buf, req_row)
  local ok, id = M.client_request(client, "textDocument/inlineCompletion", params, function(err, result)
    if seq ~= st.seq or not vim.api.nvim_buf_is_valid(buf) then
      return -- superseded or cancelled
    end
    st.req_id, st.req_client = nil, nil
    local items = {}
    if not err and result then
      for _, item in ipairs(result.items or result) do
        local sugg = normalize(item, client, req_row, req_col, req_line)
        if sugg.text ~= "" then
          table.insert(items, sugg)
        end
      end
    end
    if #items == 0 then
      if trigger_kind ~= 1 then
        st.items = nil
        M.hide(buf)
      end
    else
      local index = 1
      if refresh and st.items then
        -- The choices gathered after an Invoked answer: the items shown keep their order
        -- and the one on screen stays; the new ones are appended for cycling.
        local merged, seen = {}, {}
        for _, it in ipairs(st.items) do
          table.insert(merged, it)
          seen[it.text] = true
        end
        for _, it in ipairs(items) do
          if not seen[it.text] then
            table.insert(merged, it)
          end
        end
        items, index = merged, st.index or 1
      end
      st.items, st.index, st.dismissed = items, index, false
      st.invoked = trigger_kind == 1
      M.render(buf)
    end
    if on_done then
      on_done(err, items)
    end
  end, buf)
  if ok then
    st.req_id, st.req_client = id, client.id
  end
  return ok
end

--- Show `text` as the suggestion inserted at (row, col) (0-based row, byte column), e.g. the
--- escalate command's result, without another round trip.
function M.show(buf, client, text, row, col)
  M.cancel(buf)
  local st = S(buf)
  local line = current_line(buf, row)
  st.items = {
    { text = text, row = row, start_col = col, end_from_eol = #line - col, client_id = client.id },
  }
  st.index, st.dismissed = 1, false
  return M.render(buf)
end

--- Debounced automatic request (TextChangedI / CursorMovedI / InsertEnter).
function M.schedule(buf)
  local st = S(buf)
  stop_timer(st)
  local timer = uv.new_timer()
  st.timer = timer
  timer:start(
    config.options.debounce_ms,
    0,
    vim.schedule_wrap(function()
      if st.timer == timer then
        stop_timer(st)
      end
      if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_get_current_buf() == buf and vim.fn.mode():sub(1, 1) == "i" then
        M.request(buf, 2)
      end
    end)
  )
end

--- The part of `ghost` that accepting a "word" or a "line" inserts.
---@param ghost string
---@param kind "word"|"line"
---@return string
function M.partial(ghost, kind)
  if kind == "word" then
    return ghost:match("^%s*[%w_]+") or ghost:match("^%s*[^%w_%s]+") or ghost:match("^%s+") or ghost
  end
  return ghost:match("^[^\n]+") or ghost:match("^\n[^\n]*") or ghost
end

--- Accept the shown suggestion: `kind` = "all" (default), "word" or "line". Returns false if none.
function M.accept(kind)
  kind = kind or "all"
  local buf = vim.api.nvim_get_current_buf()
  local st = states[buf]
  local shown = st and st.shown
  if not shown then
    return false
  end
  local sugg = shown.sugg
  local client = vim.lsp.get_client_by_id(sugg.client_id)
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  -- Where the accepted text starts (the cursor, in the client's encoding) and how much of
  -- the item was already in the buffer before it: the server measures that span.
  local function accepted_at()
    if not client then
      return nil
    end
    return vim.lsp.util.make_position_params(0, client.offset_encoding).position
  end
  if kind == "all" then
    local at = accepted_at()
    M.clear(buf)
    local lines = vim.split(sugg.text, "\n", { plain = true })
    vim.api.nvim_buf_set_text(buf, sugg.row, sugg.start_col, sugg.row, shown.end_col, lines)
    local last_row = sugg.row + #lines - 1
    local last_col = (#lines == 1 and sugg.start_col or 0) + #lines[#lines]
    vim.api.nvim_win_set_cursor(0, { last_row + 1, last_col })
    if sugg.sid then
      report(buf, sugg, "accepted", {
        chars = vim.fn.strchars(shown.ghost),
        offset = sugg.base + vim.fn.strchars(shown.typed),
        position = at,
      })
    elseif client and sugg.command then
      M.exec_command(client, sugg.command, buf)
    end
    return true
  end
  local ghost = shown.ghost
  local part = M.partial(ghost, kind)
  local rest = ghost:sub(#part + 1)
  local at = accepted_at()
  local offset = sugg.base + vim.fn.strchars(shown.typed)
  local lines = vim.split(part, "\n", { plain = true })
  vim.api.nvim_buf_set_text(buf, row, col, row, col, lines)
  local new_row = row + #lines - 1
  local new_col = (#lines == 1 and col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { new_row + 1, new_col })
  M.cancel(buf)
  if rest == "" then
    M.clear(buf)
    if sugg.sid then
      report(buf, sugg, "accepted", { chars = vim.fn.strchars(part), offset = offset, position = at })
    elseif client and sugg.command then
      M.exec_command(client, sugg.command, buf)
    end
    return true
  end
  report(buf, sugg, "accepted_partial", {
    chars = vim.fn.strchars(part),
    offset = offset,
    position = at,
    unit = kind,
  })
  -- Re-anchor the remainder at the new cursor; it stays shown while typing matches it.
  local line = current_line(buf, new_row)
  st.items = {
    {
      text = rest,
      row = new_row,
      start_col = new_col,
      end_from_eol = #line - new_col,
      command = sugg.command,
      client_id = sugg.client_id,
      sid = sugg.sid,
      base = offset + vim.fn.strchars(part),
    },
  }
  st.index = 1
  M.render(buf)
  return true
end

--- Dismiss what is shown and cancel what is on its way (a reply arriving after <C-]> must
--- not show a ghost the user already refused).
function M.dismiss()
  local buf = vim.api.nvim_get_current_buf()
  local st = states[buf]
  if st and st.shown then
    report(buf, st.shown.sugg, "dismissed")
  end
  local had = M.visible(buf) or M.pending(buf)
  M.clear(buf)
  S(buf).dismissed = true
  return had
end

--- The texts of the current items and the index shown (an Invoked answer has several).
function M.choices(buf)
  local st = S(buf or vim.api.nvim_get_current_buf())
  local texts = {}
  for _, sugg in ipairs(st.items or {}) do
    table.insert(texts, sugg.text)
  end
  return texts, st.index
end

--- Cycle through the items; with one item, ask the server for alternatives (Invoked).
function M.next(count)
  local buf = vim.api.nvim_get_current_buf()
  local st = S(buf)
  st.dismissed = false
  if st.items and #st.items > 1 then
    st.index = ((st.index - 1 + (count or 1)) % #st.items) + 1
    M.render(buf)
    return
  end
  M.request(buf, 1)
end

--- `lspAssist/suggestionReady`: a longer suggestion is ready for this position; ask again now.
function M.on_suggestion_ready(params)
  local buf = vim.api.nvim_get_current_buf()
  if not params or params.uri ~= vim.uri_from_bufnr(buf) then
    return
  end
  if vim.fn.mode():sub(1, 1) ~= "i" then
    return
  end
  local version = vim.lsp.util.buf_versions and vim.lsp.util.buf_versions[buf]
  if params.version and version and params.version ~= version then
    return -- the user typed since: a fresh request is already on its way
  end
  local st = S(buf)
  if st.dismissed then
    return
  end
  -- A request on its way answers the latest text anyway (re-requesting would cancel it: an
  -- Invoked request's choices would be lost), and while the user cycles an Invoked answer's
  -- choices a re-request would collapse them to one.
  if M.pending(buf) or (st.items and #st.items > 1 and not params.choices) then
    return
  end
  if params.choices then
    -- The server answered the user's Invoked request at its first line and has gathered the
    -- other choices since: fetch them (Invoked, answered from what the server kept).
    if not st.invoked or not st.items or #st.items >= params.choices then
      return
    end
  end
  local client = M.get_client(buf)
  if client and params.position then
    -- Only for the position it was computed for: after a cursor move, the move's own
    -- request is the one that counts.
    local here = vim.lsp.util.make_position_params(0, client.offset_encoding).position
    if here.line ~= params.position.line or here.character ~= params.position.character then
      return
    end
  end
  M.request(buf, params.choices and 1 or 2, nil, params.choices ~= nil)
end

local attached = {}

--- Install the autocommands for one buffer. `auto`: request while typing.
function M.attach(buf, auto)
  if attached[buf] then
    return
  end
  attached[buf] = true
  local group = vim.api.nvim_create_augroup("lsp_assist_inline_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChangedI", "TextChangedP" }, {
    group = group,
    buffer = buf,
    callback = function()
      S(buf).dismissed = false
      M.render(buf)
      if auto and config.options.auto_trigger then
        M.schedule(buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertEnter", "CursorMovedI" }, {
    group = group,
    buffer = buf,
    callback = function()
      M.render(buf)
      if auto and config.options.auto_trigger and not S(buf).dismissed then
        M.schedule(buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave", "WinLeave" }, {
    group = group,
    buffer = buf,
    callback = function()
      local st = states[buf]
      if st and st.shown then
        report(buf, st.shown.sugg, "dismissed") -- left insert mode (or the window) with it shown
      end
      M.clear(buf)
    end,
  })
  vim.api.nvim_create_autocmd({ "BufWipeout", "BufUnload" }, {
    group = group,
    buffer = buf,
    callback = function()
      M.clear(buf)
      states[buf] = nil
      attached[buf] = nil
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
end

function M.detach(buf)
  M.clear(buf)
  if attached[buf] then
    pcall(vim.api.nvim_del_augroup_by_name, "lsp_assist_inline_" .. buf)
    attached[buf] = nil
  end
end

return M
