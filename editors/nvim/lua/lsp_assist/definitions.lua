--- lsp_assist.definitions: definitions the language's own server resolves, sent to lsp-assist.
---
--- When the cursor rests (`idle_ms`) in a buffer lsp-assist serves, the names of the function
--- around the cursor (nearest first, at most `max_names`) are resolved with
--- `textDocument/definition` on the OTHER LSP clients attached to the buffer (pyright, gopls,
--- tsserver...), all asked at once; whatever has not answered after `budget_ms` is cancelled.
--- The first lines of each definition in another file are sent with the `lspAssist/definitions`
--- notification (see the README, "Definitions from the editor's language server"). Async and
--- bounded: nothing here is on the inline-completion path. Off with `editor_definitions = false`.
local inline = require("lsp_assist.inline")

local M = {}

M.max_names = 8
M.budget_ms = 150
M.idle_ms = 250
M.max_text_lines = 8
M.max_text_chars = 480
local ABOVE, BELOW, NEAR_ABOVE = 40, 4, 12
local FORGET_AFTER_VERSIONS = 100
local MAX_FILE_BYTES = 2000000

local uv = vim.uv or vim.loop

local state = {
  known = {}, -- buf -> name -> version answered at (not asked again)
  running = {}, -- buf -> true while a run is in flight
}
M.last_sent = nil -- the last notification's params (for tests and :lua inspection)
M.runs = 0
M._state = state -- for tests

local KEYWORDS = {}
for word in (
  "and as assert async await break case catch class const continue def default del delete do elif else "
  .. "enum except export extends false finally for from func function global go if impl import in interface "
  .. "is lambda let match mut new nil nonlocal none not null or package pass private protected pub public raise "
  .. "return self static struct super switch this throw true try type typeof undefined use var void while with "
  .. "yield None True False fn mod crate where loop defer chan map range select int str float bool string local then end"
):gmatch("%S+") do
  KEYWORDS[word] = true
end

local DEFINITION_WORDS = {
  def = true, class = true, ["function"] = true, func = true, fn = true, impl = true, interface = true,
  type = true, struct = true, public = true, private = true, protected = true, static = true, ["local"] = true,
}

local function indent_of(line)
  return #(line:match("^%s*") or "")
end

local function starts_definition(line)
  local words = {}
  for w in line:gmatch("[%a_]+") do
    table.insert(words, w)
    if #words == 3 then
      break
    end
  end
  for _, w in ipairs(words) do
    if DEFINITION_WORDS[w] then
      return true
    end
    if w ~= "export" and w ~= "async" and w ~= "pub" then
      return false
    end
  end
  return false
end

--- Names used around the cursor, nearest first (0-based rows, byte columns): the rows near the
--- cursor, then the rest of the enclosing function (by indentation); no keywords, one-letter
--- names, members after a dot, or the word being typed.
---@param lines string[] rows `first`.. of the buffer
---@param first integer 0-based row of lines[1]
---@param row integer 0-based cursor row
---@param col integer 0-based byte column of the cursor
---@return { name: string, row: integer, col: integer }[]
function M.names_near_cursor(lines, first, row, col)
  local function at(r)
    return lines[r - first + 1]
  end
  local cur = at(row)
  if not cur then
    return {}
  end
  local cursor_indent = indent_of(cur)
  local top = math.max(first, row - ABOVE)
  for r = row - 1, math.max(first, row - ABOVE), -1 do
    local text = at(r) or ""
    if text:match("%S") and indent_of(text) < cursor_indent and starts_definition(text) then
      top = r
      break
    end
  end
  local bottom = math.min(first + #lines - 1, row + BELOW)
  local found = {}
  for r = top, bottom do
    local text = at(r) or ""
    local pos = 1
    while true do
      local s, e = text:find("[%a_$][%w_$]*", pos)
      if not s then
        break
      end
      pos = e + 1
      local name = text:sub(s, e)
      local c = s - 1
      local typed = r == row and c <= col and e >= col
      if #name >= 2 and not KEYWORDS[name] and text:sub(s - 1, s - 1) ~= "." and not typed then
        local distance = (r < row - NEAR_ABOVE) and (1000 + row - r) or math.abs(r - row)
        local prev = found[name]
        if not prev or distance < prev.distance then
          found[name] = { name = name, row = r, col = c, distance = distance }
        end
      end
    end
  end
  local out = vim.tbl_values(found)
  table.sort(out, function(a, b)
    if a.distance ~= b.distance then
      return a.distance < b.distance
    end
    if a.row ~= b.row then
      return a.row < b.row
    end
    return a.col < b.col
  end)
  return out
end

--- The declaration line and the lines indented deeper (its signature's continuation, docstring,
--- first members): whole lines, at most `max_text_lines` and `max_text_chars`.
---@param lines string[]
---@return string
function M.definition_text(lines)
  local first = lines[1]
  if not first or not first:match("%S") then
    return ""
  end
  local base = indent_of(first)
  local out, used = {}, 0
  for i, raw in ipairs(lines) do
    if #out >= M.max_text_lines then
      break
    end
    local text = raw:gsub("%s+$", "")
    if i > 1 and text:match("%S") and indent_of(text) <= base and not text:match("^%s*[%)%]]") then
      break
    end
    local cost = #text + (#out > 0 and 1 or 0)
    if used + cost > M.max_text_chars then
      break
    end
    table.insert(out, text)
    used = used + cost
  end
  while #out > 0 and not out[#out]:match("%S") do
    table.remove(out)
  end
  return table.concat(out, "\n")
end

--- Rows `start`.. (0-based, `count` of them) of a file: a loaded buffer's text, else read from disk.
local function read_lines(uri, start, count)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok or not fname then
    return nil
  end
  local bufnr = vim.fn.bufnr(fname)
  if bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, start, start + count, false)
  end
  local stat = uv.fs_stat(fname)
  if not stat or stat.type ~= "file" or stat.size > MAX_FILE_BYTES then
    return nil
  end
  local f = io.open(fname, "r")
  if not f then
    return nil
  end
  local out, i = {}, 0
  for text in f:lines() do
    if i >= start + count then
      break
    end
    if i >= start then
      table.insert(out, (text:gsub("\r$", "")))
    end
    i = i + 1
  end
  f:close()
  return out
end

--- The first target of a definition answer (Location, Location[], LocationLink[]) in another file.
local function target_of(result, own_uri)
  if type(result) ~= "table" then
    return nil
  end
  local list = result.uri and { result } or result.targetUri and { result } or result
  for _, loc in ipairs(list) do
    local uri = loc.targetUri or loc.uri
    local range = loc.targetRange or loc.range
    if type(uri) == "string" and uri ~= own_uri and type(range) == "table" and range.start then
      return uri, range
    end
  end
  return nil
end

local function other_clients(buf)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local out = {}
  for _, client in ipairs(get({ bufnr = buf })) do
    if client.name ~= inline.client_name and inline.client_supports(client, "textDocument/definition", buf) then
      table.insert(out, client)
    end
  end
  return out
end

local function notify(client, method, params)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Resolve, read and send for `buf` now; `on_done(params|nil)` is called once (tests use it).
function M.run(buf, on_done)
  on_done = on_done or function() end
  local ours = inline.get_client(buf)
  if state.running[buf] or not ours or not vim.api.nvim_buf_is_valid(buf) then
    return on_done(nil)
  end
  local servers = other_clients(buf)
  if #servers == 0 then
    return on_done(nil)
  end
  local server = servers[1]
  local uri = vim.uri_from_bufnr(buf)
  local version = (vim.lsp.util.buf_versions and vim.lsp.util.buf_versions[buf]) or vim.b[buf].changedtick
  local known = state.known[buf] or {}
  state.known[buf] = known
  for name, v in pairs(known) do
    if version - v > FORGET_AFTER_VERSIONS then
      known[name] = nil
    end
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  if vim.api.nvim_win_get_buf(0) ~= buf then
    return on_done(nil)
  end
  local row, col = cursor[1] - 1, cursor[2]
  local first = math.max(0, row - ABOVE)
  local lines = vim.api.nvim_buf_get_lines(buf, first, row + BELOW + 1, false)
  local names = {}
  for _, n in ipairs(M.names_near_cursor(lines, first, row, col)) do
    if known[n.name] == nil then
      table.insert(names, n)
      if #names >= M.max_names then
        break
      end
    end
  end
  if #names == 0 then
    return on_done(nil)
  end
  state.running[buf] = true
  M.runs = M.runs + 1
  local pending, finished = #names, false
  local ids, entries = {}, {}
  local timer = uv.new_timer()
  local function finish()
    if finished then
      return
    end
    finished = true
    state.running[buf] = nil
    timer:stop()
    timer:close()
    for _, id in pairs(ids) do
      pcall(inline.client_cancel, server, id) -- too slow: asked again at the next rest
    end
    if #entries == 0 then
      return on_done(nil)
    end
    table.sort(entries, function(a, b)
      return a.name < b.name
    end)
    local params = { uri = uri, version = version, definitions = entries }
    local client = inline.get_client(buf)
    if client then
      notify(client, "lspAssist/definitions", params)
      M.last_sent = params
    end
    on_done(params)
  end
  timer:start(M.budget_ms, 0, vim.schedule_wrap(finish))
  for i, n in ipairs(names) do
    local params = {
      textDocument = { uri = uri },
      position = { line = n.row, character = vim.lsp.util.character_offset(buf, n.row, n.col, server.offset_encoding) },
    }
    local ok, id = inline.client_request(server, "textDocument/definition", params, function(err, result)
      ids[i] = nil
      if finished then
        return
      end
      local turi, range = nil, nil
      if not err then
        turi, range = target_of(result, uri)
      end
      if err or not turi then
        known[n.name] = version -- nothing elsewhere (or this file): not asked again
      else
        local text = M.definition_text(read_lines(turi, range.start.line, M.max_text_lines * 3) or {})
        known[n.name] = version
        if text ~= "" then
          table.insert(entries, { name = n.name, uri = turi, range = range, text = text })
        end
      end
      pending = pending - 1
      if pending == 0 then
        finish()
      end
    end, buf)
    if ok and id then
      ids[i] = id
    else
      pending = pending - 1
    end
  end
  if pending == 0 then
    finish()
  end
end

local watch = require("lsp_assist.rest_watch").new({
  name = "lsp_assist_definitions",
  events = { "CursorMoved", "CursorMovedI", "TextChangedI" },
  idle_ms = function()
    return M.idle_ms
  end,
  on_rest = function(buf)
    if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_get_current_buf() == buf then
      M.run(buf)
    end
  end,
  on_detach = function(buf)
    state.known[buf], state.running[buf] = nil, nil
  end,
})

M.detach = watch.detach

--- Start watching `buf` (called from the plugin's on_attach; idempotent).
M.attach = watch.attach

return M
