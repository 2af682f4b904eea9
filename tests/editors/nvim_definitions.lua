-- Headless Neovim harness for tests/editors/test_nvim_definitions.py (`nvim --headless --clean -u NONE`).
--
-- Opens $LSP_ASSIST_FILE with the lsp_assist plugin and a second language server
-- ($LSP_ASSIST_OTHER_CMD, JSON argv: the fake definition server or pyright), waits until both are
-- attached, rests the cursor at the end of row $LSP_ASSIST_ROW in insert mode (the plugin's idle
-- timer then resolves the names around it on the other server and sends lspAssist/definitions),
-- then types one character so that lsp-assist asks the model. Every wait is bounded; results go
-- to $LSP_ASSIST_RESULTS as JSON.
local env = vim.env
local results = { errors = {}, nvim = tostring(vim.version()) }
local out_path = assert(env.LSP_ASSIST_RESULTS, "LSP_ASSIST_RESULTS unset")
local finished = false
local uv = vim.uv or vim.loop

local function finish()
  if finished then
    return
  end
  finished = true
  results.messages = vim.fn.execute("messages")
  vim.fn.writefile({ vim.json.encode(results) }, out_path)
  vim.cmd("qa!")
end

local function fail(msg)
  local ok, d = pcall(require, "lsp_assist.definitions")
  if ok then
    results.debug = { runs = d.runs, known = d._state.known, nudges = results.nudges }
  end
  table.insert(results.errors, msg)
  finish()
end

vim.defer_fn(function()
  fail("deadline reached in step " .. tostring(results.step))
end, tonumber(env.LSP_ASSIST_DEADLINE_MS or "40000"))

local ok_defs, defs = pcall(require, "lsp_assist.definitions")
if not ok_defs then
  fail("require lsp_assist.definitions: " .. tostring(defs))
  return
end
local inline = require("lsp_assist.inline")
if env.LSP_ASSIST_BUDGET_MS then
  defs.budget_ms = tonumber(env.LSP_ASSIST_BUDGET_MS)
end

-- How many textDocument/definition requests were still unanswered when a run first sent its
-- definitions (counted, not timed: a run that waited for the slow answer sends with none).
local asked, answered = 0, 0
local real_client_request = inline.client_request
inline.client_request = function(client, method, params, handler, ...)
  if method ~= "textDocument/definition" then
    return real_client_request(client, method, params, handler, ...)
  end
  asked = asked + 1
  return real_client_request(client, method, params, function(...)
    answered = answered + 1
    return handler(...)
  end, ...)
end
local real_run = defs.run
defs.run = function(b, on_done)
  return real_run(b, function(params)
    if params ~= nil and results.unanswered_at_send == nil then
      results.unanswered_at_send = asked - answered
    end
    if on_done then
      on_done(params)
    end
  end)
end

local function wait(name, pred, timeout, then_do)
  results.step = name
  local t0 = uv.now()
  local function poll()
    if finished then
      return
    end
    local ok, v = pcall(pred)
    if not ok then
      return fail(name .. ": " .. tostring(v))
    end
    if v then
      return then_do(v)
    end
    if uv.now() - t0 > timeout then
      return fail(name .. ": timed out")
    end
    vim.defer_fn(poll, 20)
  end
  poll()
end

if env.LSP_ASSIST_LSP_DEBUG then
  vim.lsp.set_log_level("debug")
end
local other_cmd = vim.json.decode(env.LSP_ASSIST_OTHER_CMD)
local row = tonumber(env.LSP_ASSIST_ROW)
local enabled = env.LSP_ASSIST_EDITOR_DEFINITIONS ~= "0"

require("lsp_assist").setup({
  cmd = { env.LSP_ASSIST_SERVER, "serve" },
  init_options = vim.json.decode(env.LSP_ASSIST_INIT_OPTIONS),
  editor_definitions = enabled,
})
vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    vim.lsp.start({
      name = "other",
      cmd = other_cmd,
      root_dir = vim.fs.dirname(env.LSP_ASSIST_FILE),
      -- As nvim-lspconfig does for pyright: it analyses nothing until settings arrive.
      settings = {
        python = {
          analysis = { diagnosticMode = "openFilesOnly", extraPaths = vim.json.decode(env.LSP_ASSIST_EXTRA_PATHS or "[]") },
        },
      },
      on_init = function(client)
        local notify = vim.fn.has("nvim-0.11") == 1 and client.notify or function(_, ...)
          return client.notify(...)
        end
        notify(client, "workspace/didChangeConfiguration", { settings = client.settings })
      end,
    }, { bufnr = args.buf })
  end,
})
vim.cmd.edit(env.LSP_ASSIST_FILE)
local buf = vim.api.nvim_get_current_buf()

local function clients()
  local names = {}
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
    if c.initialized ~= false then
      names[c.name] = true
    end
  end
  return names
end

local function ghost()
  return #vim.api.nvim_buf_get_extmarks(buf, inline.ns, 0, -1, {}) > 0
end

wait("attached", function()
  local c = clients()
  return c.other and c[inline.client_name]
end, 20000, function()
  -- pyright answers only after it analysed the file: ask it once first (not timed).
  vim.defer_fn(function()
    vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
    results.run_started = uv.now()
    vim.api.nvim_feedkeys("A", "n", false) -- CursorMovedI: the plugin's idle timer starts
    local t_rest = uv.now()
    local nudged = uv.now()
    wait("sent", function()
      if not enabled then
        return uv.now() - t_rest > tonumber(env.LSP_ASSIST_REST_MS or "1500")
      end
      if not defs.last_sent and uv.now() - nudged > 1000 then
        -- The user moves on and rests again: names that timed out are asked again
        -- (a language server still analysing the file answers late at first).
        nudged = uv.now()
        results.nudges = (results.nudges or 0) + 1
        local key = results.nudges % 2 == 1 and "<Left>" or "<Right>" -- a real move: CursorMovedI
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), "n", false)
      end
      return defs.last_sent
    end, tonumber(env.LSP_ASSIST_SENT_TIMEOUT_MS or "15000"), function()
      results.sent = defs.last_sent
      results.sent_after_ms = uv.now() - t_rest
      results.runs = defs.runs
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<Esc>", true, false, true), "n", false)
      vim.defer_fn(function()
        vim.api.nvim_feedkeys("A" .. (env.LSP_ASSIST_TYPE or "g"), "n", false)
        wait("ghost", ghost, 15000, function()
          results.ghost = true
          finish()
        end)
      end, 100)
    end)
  end, tonumber(env.LSP_ASSIST_WARM_MS or "100"))
end)
