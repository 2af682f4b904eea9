--- lsp_assist: Neovim client for the lsp-assist language server (LLM ghost-text completions).
---
--- `setup()` starts `lsp-assist serve` with `vim.lsp.start` for the buffers it serves. On
--- Neovim 0.12+ suggestions come from the built-in `vim.lsp.inline_completion`; on 0.10/0.11
--- from `lsp_assist.inline`. Bad states (server missing, crashing) produce one message each and
--- a crashed server is restarted with exponential backoff.
local config = require("lsp_assist.config")
local inline = require("lsp_assist.inline")
local next_edit = require("lsp_assist.next_edit")

local M = {}

local uv = vim.uv or vim.loop
local levels = vim.log.levels

local state = {
  setup_done = false,
  stopping = false, -- Neovim is exiting or we stop the server on purpose
  crashes = 0,
  started_at = nil, ---@type integer|nil
  restart_pending = false,
  gave_up = false,
  notified = {}, ---@type table<string, boolean>
  buffers = {}, ---@type table<integer, boolean>
  status = {}, ---@type table
}

--- Shows each distinct message once (until `reset_notices`), so bad states do not storm.
local define_highlights

local function notify_once(key, msg, level)
  if state.notified[key] then
    return
  end
  state.notified[key] = true
  -- Scheduled: an ERROR notify inside someone's :edit (FileType autocmd) would otherwise
  -- abort their command with an exception.
  vim.schedule(function()
    vim.notify(msg, level or levels.WARN, { title = "lsp-assist" })
  end)
end

local function reset_notices()
  state.notified = {}
end

--- True when Neovim has the built-in inline completion (0.12+) and it is not disabled.
function M.use_builtin()
  if config.options.builtin == false then
    return false
  end
  return vim.lsp.inline_completion ~= nil and vim.lsp.inline_completion.enable ~= nil
end

local function root_for(buf)
  local fname = vim.api.nvim_buf_get_name(buf)
  local dir = fname ~= "" and vim.fs.dirname(fname) or uv.cwd()
  local found = vim.fs.find(config.options.root_markers, { path = dir, upward = true })[1]
  return found and vim.fs.dirname(found) or dir
end

-- <expr> mappings made with vim.keymap.set replace keycodes in what they return
-- (replace_keycodes defaults to true): return key notation, not termcodes.
local function termcodes(keys)
  return keys
end

--- Buffer-local insert-mode mappings. Each falls back to its own key when nothing is shown.
local function set_keymaps(buf)
  local km = config.options.keymaps
  local function map(lhs, rhs, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set("i", lhs, rhs, { buffer = buf, expr = true, silent = true, desc = desc })
    end
  end
  local builtin = M.use_builtin()
  -- In an <expr> mapping the buffer is locked (textlock): return a <Cmd> that does the edit.
  -- On 0.12 the built-in renderer shows the ghost; its get() runs our on_accept later
  -- (scheduled), outside the textlock.
  map(km.accept, function()
    if inline.visible(buf) then
      return termcodes("<Cmd>lua require('lsp_assist.inline').accept('all')<CR>")
    end
    if builtin and vim.lsp.inline_completion.get() then
      return ""
    end
    if km.next_edit == km.accept and next_edit.visible(buf) then
      return "<Cmd>lua require('lsp_assist.next_edit').jump_or_accept()<CR>"
    end
    return termcodes(km.accept)
  end, "lsp-assist: accept suggestion")
  map(km.accept_word, function()
    if inline.visible(buf) then
      return termcodes("<Cmd>lua require('lsp_assist.inline').accept('word')<CR>")
    end
    if builtin and require("lsp_assist.builtin").accept("word") then
      return ""
    end
    return termcodes(km.accept_word)
  end, "lsp-assist: accept next word")
  map(km.accept_line, function()
    if inline.visible(buf) then
      return termcodes("<Cmd>lua require('lsp_assist.inline').accept('line')<CR>")
    end
    if builtin and require("lsp_assist.builtin").accept("line") then
      return ""
    end
    return termcodes(km.accept_line)
  end, "lsp-assist: accept line")
  map(km.dismiss, function()
    -- Also while a request is on its way: its reply must not show a refused ghost.
    if inline.visible(buf) or inline.pending(buf) then
      return termcodes("<Cmd>lua require('lsp_assist.inline').dismiss()<CR>")
    end
    if builtin and require("lsp_assist.builtin").dismiss(buf) then
      return ""
    end
    if next_edit.visible(buf) then
      return "<Cmd>lua require('lsp_assist.next_edit').dismiss()<CR>"
    end
    return termcodes(km.dismiss)
  end, "lsp-assist: dismiss suggestion")
  map(km.next, function()
    if builtin and not inline.visible(buf) then
      return termcodes("<Cmd>lua vim.lsp.inline_completion.select({ count = 1 })<CR>")
    end
    return termcodes("<Cmd>lua require('lsp_assist.inline').next(1)<CR>")
  end, "lsp-assist: next suggestion")
  map(km.prev, function()
    if builtin and not inline.visible(buf) then
      return termcodes("<Cmd>lua vim.lsp.inline_completion.select({ count = -1 })<CR>")
    end
    return termcodes("<Cmd>lua require('lsp_assist.inline').next(-1)<CR>")
  end, "lsp-assist: previous suggestion")
  if km.escalate and km.escalate ~= "" then
    vim.keymap.set("i", km.escalate, function()
      M.escalate()
    end, { buffer = buf, silent = true, desc = "lsp-assist: escalate to the quality model" })
  end
end

local function status_changed()
  vim.schedule(function()
    pcall(vim.cmd.redrawstatus)
    pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "LspAssistStatus", modeline = false })
  end)
end

local function on_status(_, params)
  if type(params) ~= "table" then
    return
  end
  state.status = vim.tbl_extend("force", state.status, params)
  status_changed()
  -- `notified`: the server already showed it (window/showMessage reaches vim.notify).
  if (params.state == "warning" or params.state == "error") and not params.notified then
    notify_once(
      "status:" .. tostring(params.message),
      "lsp-assist: " .. (params.message or params.state),
      params.state == "error" and levels.ERROR or levels.WARN
    )
  end
end

--- `$/progress` from our server (loading the local model, warm-up, escalation): shown in the
--- status item while it runs ("lsp-assist loading the local model 40%"); a model load is
--- announced once with vim.notify too, as the first suggestions wait for it.
local progress = {} ---@type table<string, { title: string, message: string|nil, percentage: integer|nil }>
local function on_progress(ev)
  local data = ev.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= inline.client_name or type(data.params) ~= "table" then
    return
  end
  local token, value = tostring(data.params.token), data.params.value
  if type(value) ~= "table" then
    return
  end
  if value.kind == "begin" then
    local title = tostring(value.title or ""):gsub("^lsp%-assist:%s*", "")
    progress[token] = { title = title, message = value.message, percentage = value.percentage }
    if title:find("loading", 1, true) then
      notify_once("progress:" .. title, "lsp-assist: " .. title .. "...", levels.INFO)
    end
  elseif value.kind == "report" and progress[token] then
    progress[token].message = value.message or progress[token].message
    progress[token].percentage = value.percentage or progress[token].percentage
  elseif value.kind == "end" then
    progress[token] = nil
  end
  local shown = nil
  for _, p in pairs(progress) do
    shown = p.title
      .. ((p.message and p.message ~= "" and p.message ~= p.title) and (": " .. p.message) or "")
      .. (p.percentage and (" " .. p.percentage .. "%") or "")
  end
  state.status.progress = shown
  status_changed()
end

--- The server's messages through vim.notify (0.11's default handler only echoes them, which
--- notification plugins never see), at the message's level.
local message_levels = { levels.ERROR, levels.WARN, levels.INFO, levels.DEBUG }
local function on_show_message(_, params)
  if type(params) ~= "table" or type(params.message) ~= "string" then
    return
  end
  local level = message_levels[params.type] or levels.INFO
  vim.schedule(function()
    vim.notify(params.message, level, { title = "lsp-assist" })
  end)
  return params
end

local function on_attach(client, buf)
  state.buffers[buf] = true
  if M.use_builtin() then
    -- One renderer only: the built-in also shows escalations (the server answers the next
    -- request at that position with the stored quality suggestion).
    vim.lsp.inline_completion.enable(true, { bufnr = buf })
  elseif inline.client_supports(client, "textDocument/inlineCompletion", buf) then
    inline.attach(buf, true)
  else
    notify_once("nocap", "lsp-assist: the server does not advertise inline completion", levels.ERROR)
  end
  set_keymaps(buf)
  if next_edit.supported(client) then
    next_edit.attach(buf) -- edits away from the cursor (experimental.nextEdit)
  end
  if config.options.editor_definitions ~= false then
    require("lsp_assist.definitions").attach(buf) -- what the language's own server resolves
  end
  if config.options.cursor_rest ~= false then
    require("lsp_assist.cursor_rest").attach(buf) -- the server warms the model where it rests
  end
end

local schedule_restart

local function on_exit(code, signal, _client_id)
  if state.stopping or (code == 0 and (signal == 0 or signal == 15)) then
    return
  end
  local now = uv.now()
  if state.started_at and now - state.started_at >= config.options.restart.stable_after_ms then
    state.crashes = 0
  end
  state.started_at = nil
  state.crashes = state.crashes + 1
  schedule_restart()
end

schedule_restart = function()
  if state.restart_pending then
    return
  end
  local r = config.options.restart
  if state.crashes > r.max_restarts then
    state.gave_up = true
    notify_once(
      "gaveup",
      ("lsp-assist: the server crashed %d times in a row; not restarting. See :LspLog, fix, then :LspAssistRestart"):format(
        state.crashes
      ),
      levels.ERROR
    )
    return
  end
  local delay = math.min(r.base_delay_ms * 2 ^ (state.crashes - 1), r.max_delay_ms)
  notify_once("crash", ("lsp-assist: the server exited; restarting it (backoff from %d ms)"):format(delay), levels.WARN)
  state.restart_pending = true
  vim.defer_fn(function()
    state.restart_pending = false
    for buf in pairs(state.buffers) do
      if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf) then
        M.attach(buf)
      else
        state.buffers[buf] = nil
      end
    end
  end, delay)
end

--- Start (or reuse) the server for `buf` when it should be served.
function M.attach(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= "" then
    return nil
  end
  if vim.api.nvim_buf_get_name(buf) == "" or not config.serves_filetype(vim.bo[buf].filetype) then
    return nil
  end
  if state.gave_up then
    return nil
  end
  local root = root_for(buf)
  local cmd, why = config.resolve_cmd(root)
  if not cmd then
    notify_once("missing", "lsp-assist: server not found: " .. why, levels.ERROR)
    return nil
  end
  local ok, id = pcall(vim.lsp.start, {
    name = inline.client_name,
    cmd = cmd,
    root_dir = root,
    init_options = config.options.init_options,
    handlers = {
      ["lspAssist/status"] = on_status,
      ["window/showMessage"] = on_show_message,
      ["lspAssist/suggestionReady"] = function(_, params)
        if M.use_builtin() then
          -- The built-in draws the ghost: it asks again, the plugin draws nothing itself.
          require("lsp_assist.builtin").on_suggestion_ready(params)
        else
          inline.on_suggestion_ready(params)
        end
      end,
    },
    on_init = function()
      state.started_at = uv.now()
    end,
    on_attach = on_attach,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        on_exit(code, signal, client_id)
      end)
    end,
  }, { bufnr = buf })
  if not ok then
    notify_once("start", "lsp-assist: could not start the server: " .. tostring(id), levels.ERROR)
    return nil
  end
  return id
end

--- Send new server settings (same table shape as init_options) to running servers.
function M.update_config(init_options)
  config.options.init_options = vim.tbl_deep_extend("force", config.options.init_options, init_options or {})
  for _, client in ipairs(vim.lsp.get_clients({ name = inline.client_name })) do
    local params = { settings = { lspAssist = config.options.init_options } }
    if vim.fn.has("nvim-0.11") == 1 then
      client:notify("workspace/didChangeConfiguration", params)
    else
      client.notify("workspace/didChangeConfiguration", params)
    end
  end
end

local function current_client()
  local buf = vim.api.nvim_get_current_buf()
  local client = inline.get_client(buf)
  if not client then
    vim.notify("lsp-assist: no server attached to this buffer", levels.WARN, { title = "lsp-assist" })
  end
  return client, buf
end

local function execute(client, buf, command, arguments, handler)
  inline.client_request(client, "workspace/executeCommand", { command = command, arguments = arguments }, function(err, result)
    if err then
      vim.notify(("lsp-assist: %s failed: %s"):format(command, err.message or vim.inspect(err)), levels.ERROR)
      return
    end
    handler(result)
  end, buf)
end

--- Where to escalate from Normal mode: after the cursor's character, as `a` would insert
--- (the cursor sits on the last typed character there, not after it).
---@return integer row, integer col  0-based row, byte column
local function append_position(buf)
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  if col < #line then
    col = col + #vim.fn.matchstr(line:sub(col + 1), "^.") -- one (possibly multibyte) character
  end
  return row, col
end

--- Enter Insert mode with the cursor at (row, col) of the current buffer.
local function insert_at(row, col)
  local line = vim.api.nvim_buf_get_lines(0, row, row + 1, false)[1] or ""
  if col >= #line then
    vim.api.nvim_win_set_cursor(0, { row + 1, math.max(#line - 1, 0) })
    vim.cmd("startinsert!") -- append at the end of the line
  else
    vim.api.nvim_win_set_cursor(0, { row + 1, col })
    vim.cmd("startinsert")
  end
end

--- Enter Insert mode at (row, col) and ask for the suggestion there once it has begun.
local function insert_and_show(buf, client, text, row, col)
  vim.api.nvim_create_autocmd("InsertEnter", {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        inline.show(buf, client, text, row, col)
      end)
    end,
  })
  insert_at(row, col)
end

--- Ask the quality tier for this position; show its suggestion when it arrives.
--- From Normal mode (`:LspAssistEscalate`) the position is after the cursor's character, and
--- Insert mode starts there when the suggestion arrives, so that <Tab> can accept it.
function M.escalate(on_done)
  local client, buf = current_client()
  if not client then
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local from_normal = vim.fn.mode():sub(1, 1) ~= "i"
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  if from_normal then
    row, col = append_position(buf)
    params.position = {
      line = row,
      character = vim.lsp.util.character_offset(buf, row, col, client.offset_encoding),
    }
  end
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  execute(client, buf, "lspAssist.escalate", { params.textDocument.uri, params.position }, function(result)
    if not result or not result.text or result.text == "" then
      vim.notify("lsp-assist: the quality model had no suggestion", levels.INFO)
    elseif vim.api.nvim_get_current_buf() == buf and M.use_builtin() then
      -- The server stored the result for this position: the built-in's next request there
      -- returns it (entering Insert mode makes one).
      if from_normal and vim.fn.mode():sub(1, 1) == "n" then
        insert_at(row, col)
      else
        require("lsp_assist.builtin").refresh(buf)
      end
    elseif vim.api.nvim_get_current_buf() == buf then
      local unchanged = vim.api.nvim_buf_get_changedtick(buf) == tick
      local now = vim.api.nvim_win_get_cursor(0)
      if from_normal and vim.fn.mode():sub(1, 1) == "n" and unchanged then
        insert_and_show(buf, client, result.text, row, col)
      elseif not from_normal and unchanged and now[1] - 1 == row and now[2] == col then
        inline.show(buf, client, result.text, row, col)
      elseif vim.fn.mode():sub(1, 1) == "i" then
        -- The user moved on: the server stored the result, a request there may still use it.
        inline.request(buf, 1)
      end
    end
    if on_done then
      on_done(result)
    end
  end)
end

--- The warm-up summary in one line, and its level: WARN when an endpoint could not be
--- reached or the index had errors, ERROR when the warm-up itself failed.
---@return string, integer
function M.format_warmup(r)
  if type(r) ~= "table" then
    return "lsp-assist: warm-up finished without a summary", levels.WARN
  end
  if r.error then
    return "lsp-assist: warm-up failed: " .. tostring(r.error), levels.ERROR
  end
  local parts, bad = {}, false
  if r.files then
    table.insert(parts, ("%d files indexed (%d symbols)"):format(r.files, r.symbols or 0))
    if (tonumber(r.errors) or 0) > 0 then
      table.insert(parts, ("%d files could not be read"):format(r.errors))
      bad = true
    end
  elseif r.index then
    table.insert(parts, "index " .. tostring(r.index))
  end
  for _, tier in ipairs({ "fast", "quality", "backup" }) do
    local e = r.endpoints and r.endpoints[tier]
    if e then
      table.insert(parts, tier .. ": " .. e)
      if e ~= "ok" and e ~= "in process" and e ~= "local model" then
        bad = true
      end
    end
  end
  if r.local_model and r.local_model ~= "" then
    table.insert(parts, tostring(r.local_model))
  end
  table.insert(parts, ("%d suggestions precomputed"):format(tonumber(r.precomputed) or 0))
  local msg = ("lsp-assist: warm-up %s in %.1f s: %s"):format(
    bad and "done with problems" or "done",
    tonumber(r.total_seconds) or 0,
    table.concat(parts, "; ")
  )
  return msg, bad and levels.WARN or levels.INFO
end

function M.warmup(on_done)
  local client, buf = current_client()
  if not client then
    return
  end
  vim.notify("lsp-assist: warming up (index, connections, model)...", levels.INFO, { title = "lsp-assist" })
  execute(client, buf, "lspAssist.warmCache", {}, function(result)
    local msg, level = M.format_warmup(result)
    vim.notify(msg, level, { title = "lsp-assist" })
    if on_done then
      on_done(result, msg, level)
    end
  end)
end

function M.stats()
  local client, buf = current_client()
  if not client then
    return
  end
  execute(client, buf, "lspAssist.stats", {}, function(result)
    local report = type(result) == "table" and result.report or vim.inspect(result)
    vim.cmd("botright new")
    local out = vim.api.nvim_get_current_buf()
    vim.bo[out].buftype = "nofile"
    vim.bo[out].bufhidden = "wipe"
    vim.bo[out].swapfile = false
    vim.api.nvim_buf_set_lines(out, 0, -1, false, vim.split(report or "", "\n", { plain = true }))
    vim.bo[out].modifiable = false
    pcall(vim.api.nvim_buf_set_name, out, "lsp-assist://stats")
  end)
end

--- Stop the servers and start them again (also after the crash limit was reached).
function M.restart()
  state.stopping = true
  for _, client in ipairs(vim.lsp.get_clients({ name = inline.client_name })) do
    if vim.fn.has("nvim-0.11") == 1 then
      client:stop()
    else
      client.stop()
    end
  end
  state.crashes, state.gave_up = 0, false
  reset_notices()
  vim.defer_fn(function()
    state.stopping = false
    for buf in pairs(state.buffers) do
      if vim.api.nvim_buf_is_valid(buf) then
        M.attach(buf)
      end
    end
    if next(state.buffers) == nil then
      M.attach(vim.api.nvim_get_current_buf())
    end
  end, 500)
end

--- Last `lspAssist/status` from the server: { tier, lastLatencyMs, state, message }.
function M.get_status()
  return state.status
end

--- A short statusline string, e.g. "lsp-assist fast 42ms" or "⚠ lsp-assist: quota spent".
function M.statusline()
  local s = state.status
  if s.state == "warning" or s.state == "error" then
    return "⚠ " .. (s.message or s.state)
  end
  if s.progress then
    return "lsp-assist " .. s.progress
  end
  if s.tier then
    local ms = tonumber(s.lastLatencyMs)
    local shown = ""
    if ms and ms > 0 then
      -- Instant answers (typing-through, cache) take under a millisecond: one decimal below 10.
      shown = ms < 10 and (" %.1fms"):format(math.max(ms, 0.1)) or (" " .. math.floor(ms + 0.5) .. "ms")
    end
    return "lsp-assist " .. s.tier .. shown
  end
  return ""
end

--- With `statusline = true` and no 'statusline' of the user's own: the default status line's
--- look (file, flags, ruler) plus the lsp-assist item.
local function install_statusline()
  if not config.options.statusline or vim.go.statusline ~= "" then
    return
  end
  vim.go.statusline = "%<%f %h%w%m%r%=%{v:lua.require'lsp_assist'.statusline()}  %-14.(%l,%c%V%) %P"
end

--- LspAssistGhost: explicit colours for 256-colour terminals and truecolor, not a link to
--- Comment (0.11's default Comment has only a truecolor value, so in a terminal without
--- truecolor the ghost looked exactly like typed text). Grey, italic.
define_highlights = function()
  vim.api.nvim_set_hl(0, "LspAssistGhost", {
    fg = "#808080",
    ctermfg = 244,
    italic = true,
    cterm = { italic = true },
    default = true,
  })
  next_edit.define_highlights()
end

function M.is_setup()
  return state.setup_done
end

---@param opts table|nil see lsp_assist.config.defaults
function M.setup(opts)
  config.set(opts)
  state.setup_done = true
  define_highlights()
  install_statusline()
  local group = vim.api.nvim_create_augroup("lsp_assist", { clear = true })
  -- A colour scheme clears highlight groups: define ours again (default: a user's own wins).
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = define_highlights })
  vim.api.nvim_create_autocmd("LspProgress", { group = group, callback = on_progress })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      state.stopping = true
    end,
  })
  -- Buffers opened before setup() ran (e.g. lazy loading).
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype ~= "" then
      M.attach(buf)
    end
  end
end

return M
