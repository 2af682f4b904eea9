-- Headless Neovim scenarios for tests/editors/test_nvim_features.py (`nvim --headless --clean -u NONE`).
--
-- One scenario per run, chosen by $LSP_ASSIST_SCENARIO: "partial" (accept word, dismiss, next,
-- an edit brings the suggestion back, accept line), "escalate" (:LspAssistEscalate shows
-- the quality model's suggestion) and "ready" (lspAssist/suggestionReady turns the first
-- line into a multi-line ghost text that <Tab> inserts whole).
--
-- Keys go through feedkeys so that autocommands and the plugin's <expr> mappings run for
-- real; steps run from timers so the main loop keeps processing input and LSP messages.
-- Every wait has a timeout and the whole run has a deadline; results go to a JSON file.
local env = vim.env
local results = { steps = {}, errors = {}, seen = {}, nvim = tostring(vim.version()) }
local out_path = assert(env.LSP_ASSIST_RESULTS, "LSP_ASSIST_RESULTS unset")
local finished = false

local buf -- the buffer under test
local inline = require("lsp_assist.inline")

local function lines_now()
  return buf and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or {}
end

--- The ghost-text extmarks: position, inline text, and the virtual lines' texts.
local function ghost_marks()
  if not buf then
    return {}
  end
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, inline.ns, 0, -1, { details = true })) do
    local text = ""
    for _, chunk in ipairs(m[4].virt_text or {}) do
      text = text .. chunk[1]
    end
    local vlines = {}
    for _, vl in ipairs(m[4].virt_lines or {}) do
      local s = ""
      for _, chunk in ipairs(vl) do
        s = s .. chunk[1]
      end
      table.insert(vlines, s)
    end
    table.insert(out, { row = m[2], col = m[3], text = text, virt_lines = vlines })
  end
  return out
end

local function snapshot()
  return {
    mode = vim.fn.mode(),
    lines = lines_now(),
    cursor = vim.api.nvim_win_get_cursor(0),
    marks = ghost_marks(),
  }
end

local function finish()
  if finished then
    return
  end
  finished = true
  results.final = snapshot()
  results.messages = vim.fn.execute("messages")
  vim.fn.writefile({ vim.json.encode(results) }, out_path)
  vim.cmd("qa!")
end

local function fail(msg)
  table.insert(results.errors, msg)
  results.fail_state = snapshot()
  finish()
end

vim.defer_fn(function()
  fail("deadline reached in step " .. tostring(results.current))
end, tonumber(env.LSP_ASSIST_DEADLINE_MS or "25000"))

local function feed(keys, mode)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), mode or "n", false)
end

local function line(row)
  return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
end

local function ghost()
  return ghost_marks()[1]
end

--- Run `steps` in order. A step: { name, act = fn, wait = pred, timeout = ms, settle = ms,
--- record = fn(value) }. `wait` is polled every 10 ms until truthy (else the run fails);
--- `settle` then lets the editor run that long before `record` (to catch late changes).
local function run_steps(steps, i)
  i = i or 1
  local step = steps[i]
  if not step or finished then
    return finish()
  end
  results.current = step.name
  if step.act then
    local ok, err = pcall(step.act)
    if not ok then
      return fail(step.name .. ": act failed: " .. tostring(err))
    end
  end
  local function done(value)
    local function after()
      if finished then
        return
      end
      results.steps[step.name] = true
      if step.record then
        local ok, err = pcall(step.record, value)
        if not ok then
          return fail(step.name .. ": record failed: " .. tostring(err))
        end
      end
      run_steps(steps, i + 1)
    end
    if step.settle then
      vim.defer_fn(after, step.settle)
    else
      after()
    end
  end
  if not step.wait then
    return vim.schedule(done)
  end
  local deadline = vim.uv.now() + (step.timeout or 10000)
  local timer = vim.uv.new_timer()
  timer:start(
    10,
    10,
    vim.schedule_wrap(function()
      if timer:is_closing() or finished then
        return
      end
      local ok, value = pcall(step.wait)
      if ok and value then
        timer:stop()
        timer:close()
        done(value)
      elseif not ok then
        timer:stop()
        timer:close()
        fail(step.name .. ": " .. tostring(value))
      elseif vim.uv.now() > deadline then
        timer:stop()
        timer:close()
        fail("timed out waiting for " .. step.name)
      end
    end)
  )
end

local params = vim.json.decode(env.LSP_ASSIST_PARAMS or "{}")
local row = params.row -- 0-based row of the line to complete

local function enter_insert_at_end()
  vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
  feed("A") -- append at the end of the line: InsertEnter -> request
end

--- Waits until the ghost text (inline part) equals `text` and returns the mark.
local function ghost_is(text)
  return function()
    local g = ghost()
    return g and g.text == text and vim.fn.mode() == "i" and g or nil
  end
end

local scenarios = {}

scenarios.partial = {
  { name = "shown", act = enter_insert_at_end, wait = ghost_is(params.ghost), record = function(g)
    results.first = g
  end },
  {
    name = "accept_word",
    act = function()
      feed(params.word_key, "m")
    end,
    wait = function()
      return line(row) == params.after_word
    end,
    settle = 300, -- the remainder stays (and no late reply replaces it)
    record = function()
      results.after_word = snapshot()
    end,
  },
  {
    name = "dismiss",
    act = function()
      feed("<C-]>", "m")
    end,
    wait = function()
      return #ghost_marks() == 0
    end,
    settle = 300, -- stays dismissed while nothing is typed
    record = function()
      results.after_dismiss = snapshot()
    end,
  },
  {
    name = "next_brings_back",
    act = function()
      feed(params.next_key, "m") -- next/prev with one item asks the server again (Invoked)
    end,
    wait = ghost_is(params.ghost_after_word),
    record = function()
      results.after_next = snapshot()
    end,
  },
  {
    name = "dismiss_again",
    act = function()
      feed("<C-]>", "m")
    end,
    wait = function()
      return #ghost_marks() == 0
    end,
  },
  {
    name = "edit_brings_back",
    act = function()
      feed(params.type_after_dismiss)
    end,
    wait = ghost_is(params.ghost_after_edit),
    timeout = 10000,
    record = function()
      results.after_edit = snapshot()
    end,
  },
  {
    name = "accept_line",
    act = function()
      feed(params.line_key, "m")
    end,
    wait = function()
      return line(row) ~= results.after_edit.lines[row + 1]
    end,
    settle = 200,
    record = function()
      results.after_line = snapshot()
    end,
  },
}

scenarios.escalate = {
  { name = "shown", act = enter_insert_at_end, wait = ghost_is(params.ghost), record = function(g)
    results.first = g
  end },
  {
    name = "escalated",
    act = function()
      -- In insert mode through the command or the mapping, or from Normal mode (Esc first,
      -- then `:LspAssistEscalate`, the cursor on the line's last character).
      feed(params.escalate_keys, "m")
    end,
    wait = ghost_is(params.quality_ghost),
    timeout = 10000,
    record = function()
      results.after_escalate = snapshot()
    end,
  },
  {
    name = "accepted",
    act = function()
      feed("<Tab>", "m")
    end,
    wait = function()
      return line(row) ~= results.after_escalate.lines[row + 1]
    end,
    record = function()
      results.after_accept = snapshot()
    end,
  },
}

-- Records every distinct ghost state seen while waiting, so the test sees the first line
-- alone before the multi-line version.
local function track_seen()
  local g = ghost()
  local last = results.seen[#results.seen]
  if g then
    if not last or last.none or last.text ~= g.text or #last.virt_lines ~= #g.virt_lines then
      table.insert(results.seen, g)
    end
  elseif last and not last.none then
    table.insert(results.seen, { none = true }) -- the ghost went away (a flicker, if it comes back)
  end
  return g
end

scenarios.ready = {
  {
    name = "first_line",
    act = enter_insert_at_end,
    wait = function()
      return track_seen() and vim.fn.mode() == "i"
    end,
  },
  {
    name = "multi_line",
    wait = function()
      local g = track_seen()
      return g and #g.virt_lines >= (params.virt_lines or 1) and g
    end,
    timeout = 10000,
    record = function(g)
      results.multi = g
      results.notified = results.ready_notes
    end,
  },
  {
    name = "accepted",
    act = function()
      feed(params.accept_key or "<Tab>", "m")
    end,
    wait = function()
      return line(row) ~= params.line_before
    end,
    settle = params.accept_key and 300 or nil,
    record = function()
      results.after_accept = snapshot()
    end,
  },
}
if params.accept_key then
  -- Accept the first line, then the rest with <Tab>.
  table.insert(scenarios.ready, {
    name = "accepted_rest",
    act = function()
      feed("<Tab>", "m")
    end,
    wait = function()
      return #lines_now() ~= #results.after_accept.lines
    end,
    record = function()
      results.after_rest = snapshot()
    end,
  })
end

-- Invoked gives choices: the automatic ghost is one item; the next key with one item asks
-- the server (Invoked), which answers several; item 1 shows, the next key shows item 2.
local function choice_state()
  local texts, index = inline.choices(buf)
  local g = ghost()
  return { texts = texts, index = index, ghost = g and g.text or vim.NIL, virt_lines = g and g.virt_lines or {} }
end
scenarios.choices = {
  {
    name = "automatic",
    act = enter_insert_at_end,
    wait = function()
      return vim.fn.mode() == "i" and ghost() and not inline.pending(buf)
    end,
    settle = tonumber(params.settle_ms or 800), -- the stream ends (and its suggestionReady)
    record = function()
      results.automatic = choice_state()
    end,
  },
  {
    name = "invoked",
    act = function()
      feed(params.next_key, "m")
    end,
    wait = function()
      local texts = inline.choices(buf)
      return #texts >= 2 and ghost() and not inline.pending(buf)
    end,
    record = function()
      results.invoked = choice_state()
    end,
  },
  {
    name = "cycled",
    act = function()
      feed(params.next_key, "m")
    end,
    wait = function()
      local _, index = inline.choices(buf)
      return index == 2 and ghost()
    end,
    record = function()
      results.cycled = choice_state()
    end,
  },
  {
    name = "cycled_back",
    act = function()
      feed(params.prev_key, "m")
    end,
    wait = function()
      local _, index = inline.choices(buf)
      return index == 1 and ghost()
    end,
    record = function()
      results.cycled_back = choice_state()
    end,
  },
}

-- The screen rows (for the split check): `vim.fn.screenstring` after a redraw.
local function screen_rows()
  vim.cmd("redraw")
  local rows = {}
  for r = 1, vim.o.lines - 1 do
    local chars = {}
    for c = 1, vim.o.columns do
      table.insert(chars, vim.fn.screenstring(r, c))
    end
    table.insert(rows, (table.concat(chars):gsub("%s+$", "")))
  end
  return rows
end

-- Two splits of one buffer: the ghost shows in the window with the cursor only; records
-- its highlight group definition and extmark options too.
scenarios.window = {
  {
    name = "shown",
    act = function()
      vim.cmd("split")
      enter_insert_at_end()
    end,
    wait = ghost_is(params.ghost),
    record = function()
      local marks = vim.api.nvim_buf_get_extmarks(buf, inline.ns, 0, -1, { details = true })
      results.details = marks[1] and marks[1][4] or nil
      results.hl = vim.api.nvim_get_hl(0, { name = "LspAssistGhost", link = false })
      results.hl_raw = vim.api.nvim_get_hl(0, { name = "LspAssistGhost" })
      results.screen = screen_rows()
      results.windows = #vim.api.nvim_tabpage_list_wins(0)
    end,
  },
}

-- <C-]> while the request is on its way: nothing may show when the reply arrives.
scenarios.inflight = {
  {
    name = "pending",
    act = enter_insert_at_end,
    settle = tonumber(params.press_after_ms or 150), -- past the debounce: the request is out
  },
  {
    name = "dismissed",
    act = function()
      feed("<C-]>", "m")
    end,
    settle = tonumber(params.watch_ms or 1500), -- the fake model answers within this
    record = function()
      results.after = snapshot()
      results.pending_after = inline.pending ~= nil and inline.pending(buf)
    end,
  },
}

-- An unreachable model: one message naming the endpoint, at the first request's failure
-- (each note records how many inline requests had been sent when it came), and no more
-- while the user keeps typing.
results.notes = {}
local inline_requests = 0
local real_client_request = inline.client_request
inline.client_request = function(client, method, ...)
  if method == "textDocument/inlineCompletion" then
    inline_requests = inline_requests + 1
  end
  return real_client_request(client, method, ...)
end
local real_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(results.notes, { msg = tostring(msg), level = level, requests = inline_requests })
  return real_notify(msg, level, opts)
end
local function named_notes()
  local out = {}
  for _, n in ipairs(results.notes) do
    if n.msg:find(params.wanted or "\0", 1, true) then
      table.insert(out, n)
    end
  end
  return out
end
scenarios.unreachable = {
  {
    name = "typed",
    act = enter_insert_at_end,
    wait = function()
      return #named_notes() > 0
    end,
    timeout = 5000,
  },
  {
    name = "kept_typing",
    act = function()
      feed("ute")
    end,
    settle = 1500,
    record = function()
      results.named = named_notes()
      results.statusline = require("lsp_assist").statusline()
      results.after = snapshot()
    end,
  },
}

-- :LspAssistWarmup: progress in the status item while it runs, then one summary line that
-- names each tier's endpoint (and says "with problems" when one cannot be reached).
results.status_seen = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "LspAssistStatus",
  callback = function()
    local line = require("lsp_assist").statusline()
    if results.status_seen[#results.status_seen] ~= line then
      table.insert(results.status_seen, line)
    end
  end,
})
scenarios.warmup = {
  {
    name = "warmed",
    act = function()
      require("lsp_assist").warmup(function(result, msg, level)
        results.warm = { result = result, msg = msg, level = level }
      end)
    end,
    wait = function()
      return results.warm ~= nil
    end,
    timeout = 15000,
    settle = 300,
    record = function()
      results.statusline = require("lsp_assist").statusline()
    end,
  },
}

-- A new user on the embedded model (the README's lazy.nvim spec): the request made while the
-- model loads gets the rules' answer; the load shows in the status item; once the model is
-- ready, suggestionReady brings its suggestion without another keystroke.
scenarios.newuser = {
  {
    name = "typed",
    act = function()
      enter_insert_at_end()
    end,
    wait = function()
      return results.ready_notes > 0
    end,
    timeout = 60000,
    record = function()
      results.ready_at = vim.uv.hrtime() / 1e6
    end,
  },
  {
    name = "model_ghost",
    wait = function()
      local g = ghost()
      return g and g.text ~= "" and results.last_render_ms and results.last_render_ms >= results.ready_at and g
    end,
    timeout = 30000,
    record = function(g)
      results.ghost = g.text
      results.statusline_at_ghost = require("lsp_assist").statusline()
      results.after = snapshot()
    end,
  },
  {
    -- The server writes the status update after its reply (and at most one per 250 ms), so
    -- it may reach the editor a little after the ghost: wait for a lspAssist/status sent
    -- after the model's suggestion was announced that carries a latency, and for the
    -- status line to show it.
    name = "model_status",
    wait = function()
      local line = require("lsp_assist").statusline()
      return results.latency_notes_after_ready > 0 and line:match("^lsp%-assist fast [%d.]+ms$") and line
    end,
    timeout = 5000,
    record = function(line)
      results.statusline = line
    end,
  },
}

-- Neovim 0.12's built-in renderer, stubbed (no 0.12 binary here): the keys act on it and
-- suggestionReady asks it again instead of drawing a second ghost.
local stub = _G.lsp_assist_stub
local function offer(text)
  local cursor = vim.api.nvim_win_get_cursor(0)
  local r, c = cursor[1] - 1, cursor[2]
  stub.current = { insert_text = text, range = { start = { row = r, col = c }, end_ = { row = r, col = c } }, client_id = 1 }
end
scenarios.builtin = {
  {
    name = "insert",
    act = enter_insert_at_end,
    wait = function()
      return vim.fn.mode() == "i" and stub and stub.enabled[buf]
    end,
  },
  {
    name = "accept_word",
    act = function()
      offer(params.ghost)
      feed("<M-Right>", "m")
    end,
    wait = function()
      return line(row) == params.after_word
    end,
    record = function()
      results.after_word = snapshot()
    end,
  },
  {
    name = "accept_line",
    act = function()
      offer(params.ghost_after_word)
      feed("<M-l>", "m")
    end,
    wait = function()
      return line(row) == params.after_line
    end,
    record = function()
      results.after_line = snapshot()
    end,
  },
  {
    name = "dismiss",
    act = function()
      offer("never inserted")
      feed("<C-]>", "m")
    end,
    wait = function()
      return stub.current == nil
    end,
    settle = 100,
    record = function()
      results.after_dismiss = snapshot()
    end,
  },
  {
    name = "ready",
    act = function()
      local client = inline.get_client(buf)
      local cursor = vim.api.nvim_win_get_cursor(0)
      results.refreshes_before = stub.refreshes
      client.handlers["lspAssist/suggestionReady"](nil, {
        uri = vim.uri_from_bufnr(buf),
        version = vim.lsp.util.buf_versions[buf],
        position = { line = cursor[1] - 1, character = cursor[2] },
      }, { client_id = client.id, method = "lspAssist/suggestionReady" })
    end,
    wait = function()
      return stub.refreshes > results.refreshes_before
    end,
    settle = 300,
    record = function()
      results.after_ready = snapshot()
      results.refreshes_after = stub.refreshes
      results.get_calls = stub.get_calls
      results.own_marks_ever = stub.own_marks_ever
    end,
  },
}

-- Suggestion events (tests/editors/test_nvim_events.py): a word accepted then the rest
-- dismissed, an edit's suggestion accepted whole with <Tab>, one typed over on a new line,
-- then an edit inside the accepted text in Normal mode; then a wait for the retention
-- checkpoints (the server's clock is scaled by the test: 10 min after a few seconds).
scenarios.events = {
  { name = "shown", act = enter_insert_at_end, wait = ghost_is(params.ghost) },
  {
    name = "accept_word",
    act = function()
      feed("<M-Right>", "m")
    end,
    wait = function()
      return line(row) == params.after_word
    end,
    settle = 300,
  },
  {
    name = "dismiss",
    act = function()
      feed("<C-]>", "m")
    end,
    wait = function()
      return #ghost_marks() == 0
    end,
    settle = 200,
  },
  {
    name = "edit_brings_one",
    act = function()
      feed(params.type_after_dismiss)
    end,
    wait = ghost_is(params.ghost_after_edit),
  },
  {
    name = "accept_all",
    act = function()
      feed("<Tab>", "m")
    end,
    wait = function()
      return line(row) == params.full_line
    end,
    settle = 300,
  },
  {
    name = "new_line_suggestion",
    act = function()
      feed("<CR>")
    end,
    wait = ghost_is(params.new_line_ghost),
  },
  {
    name = "typed_over",
    act = function()
      feed(params.type_over)
    end,
    wait = function()
      return line(row + 1) == params.type_over and #ghost_marks() == 0
    end,
    settle = 300,
  },
  {
    name = "edit_accepted_text",
    act = function()
      feed("<Esc>")
      vim.schedule(function()
        vim.api.nvim_buf_set_text(buf, row, params.cut_from, row, params.cut_to, { "" })
      end)
    end,
    wait = function()
      return line(row) == params.after_cut and vim.fn.mode() == "n"
    end,
  },
  {
    -- Quitting ends the server: stay until it has written the last retention checkpoint of
    -- each accept (records in the audit log), however long this machine took to get here.
    name = "checkpoints_written",
    act = function() end,
    wait = function()
      local f = io.open(params.hold_until_file, "r")
      if not f then
        return false
      end
      local body = f:read("*a")
      f:close()
      local seen, from = 0, 1
      while true do
        local at = body:find(params.hold_until_text, from, true)
        if not at then
          break
        end
        seen, from = seen + 1, at + 1
      end
      return seen >= tonumber(params.hold_until_count or 1)
    end,
    timeout = 60000,
  },
}

local steps = scenarios[env.LSP_ASSIST_SCENARIO]
if not steps then
  fail("unknown scenario " .. tostring(env.LSP_ASSIST_SCENARIO))
  return
end

if env.LSP_ASSIST_SCENARIO == "builtin" then
  -- A stand-in for 0.12's vim.lsp.inline_completion with its public surface: enable(),
  -- is_enabled(), get({ on_accept }) (scheduled, hides the item, true when one is shown),
  -- select(); it re-requests on CursorMovedI like the real one (counted as refreshes).
  local s = { enabled = {}, current = nil, refreshes = 0, get_calls = {}, own_marks_ever = 0 }
  _G.lsp_assist_stub = s
  stub = s
  vim.lsp.inline_completion = {
    enable = function(on, filter)
      local b = filter and filter.bufnr or 0
      s.enabled[b] = on ~= false
      vim.api.nvim_create_autocmd("CursorMovedI", {
        buffer = b,
        callback = function()
          s.refreshes = s.refreshes + 1
          -- The plugin's own renderer must never draw on this branch.
          s.own_marks_ever = s.own_marks_ever + #vim.api.nvim_buf_get_extmarks(b, inline.ns, 0, -1, {})
        end,
      })
    end,
    is_enabled = function()
      return true
    end,
    select = function() end,
    get = function(opts)
      table.insert(s.get_calls, opts and opts.on_accept and "on_accept" or "default")
      if not s.current then
        return false
      end
      vim.schedule(function()
        local item = s.current
        s.current = nil
        if opts and opts.on_accept then
          opts.on_accept(item)
        end
      end)
      return true
    end,
  }
end

local ok_setup, err_setup = pcall(function()
  require("lsp_assist").setup({
    cmd = { env.LSP_ASSIST_SERVER, "serve" },
    init_options = vim.json.decode(env.LSP_ASSIST_INIT_OPTIONS),
    filetypes = { "python" },
    debounce_ms = 20,
  })
end)
if not ok_setup then
  fail("setup failed: " .. tostring(err_setup))
  return
end

-- When the ghost was first drawn (CLOCK_MONOTONIC, the clock of the fake model's token
-- times): the test compares it with the first token of the stream it came from.
local real_render = inline.render
inline.render = function(...)
  local shown = real_render(...)
  if shown and not results.first_ghost_mono then
    results.first_ghost_mono = vim.uv.hrtime() / 1e9
  end
  if shown then
    results.last_render_ms = vim.uv.hrtime() / 1e6
  end
  return shown
end

-- Count the server's suggestionReady notifications (the plugin's handler looks the
-- function up on the module at call time, so wrapping it here sees every one).
results.ready_notes = 0
local on_ready = inline.on_suggestion_ready
inline.on_suggestion_ready = function(...)
  results.ready_notes = results.ready_notes + 1
  return on_ready(...)
end

-- Every lspAssist/status notification the client gets (its handler is looked up on the
-- client at each notification), and how many carried a latency after the first
-- suggestionReady: the status of a request made for the model's suggestion.
results.status_notes = {}
results.latency_notes_after_ready = 0
local function watch_status_notes(client)
  local handle = client.handlers["lspAssist/status"]
  client.handlers["lspAssist/status"] = function(err, params, ...)
    local p = type(params) == "table" and params or {}
    local ms = tonumber(p.lastLatencyMs)
    table.insert(results.status_notes, { outcome = p.outcome, lastLatencyMs = ms, after_ready = results.ready_notes > 0 })
    if results.ready_notes > 0 and ms and ms > 0 then
      results.latency_notes_after_ready = results.latency_notes_after_ready + 1
    end
    if handle then
      return handle(err, params, ...)
    end
  end
end

vim.cmd.edit(env.LSP_ASSIST_FILE)
vim.bo.filetype = "python"
buf = vim.api.nvim_get_current_buf()

table.insert(steps, 1, {
  name = "initialized",
  wait = function()
    local client = inline.get_client(buf)
    return client and client.initialized and client
  end,
  timeout = 15000,
  record = watch_status_notes,
})
run_steps(steps)
