-- Headless Neovim harness for tests/editors/test_nvim_cursor_rest.py (`nvim --headless --clean -u NONE`).
--
-- Opens $LSP_ASSIST_FILE with the lsp_assist plugin, waits until lsp-assist is attached, then
-- moves the cursor five times in quick succession (a jump, then a few keys of motion) and lets
-- it rest at ($LSP_ASSIST_ROW, $LSP_ASSIST_COL): the plugin's own idle timer must send one
-- lspAssist/cursorRest for the resting position. Then it asks the server's `lspAssist.stats`
-- what it received. Every wait is bounded; results go to $LSP_ASSIST_RESULTS as JSON.
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
  table.insert(results.errors, msg)
  finish()
end

vim.defer_fn(function()
  fail("deadline reached in step " .. tostring(results.step))
end, 40000)

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

local enabled = env.LSP_ASSIST_CURSOR_REST ~= "0"
require("lsp_assist").setup({
  cmd = { env.LSP_ASSIST_SERVER, "serve" },
  init_options = vim.json.decode(env.LSP_ASSIST_INIT_OPTIONS),
  editor_definitions = false,
  cursor_rest = enabled,
})
local rest = require("lsp_assist.cursor_rest")
local inline = require("lsp_assist.inline")
vim.cmd.edit(env.LSP_ASSIST_FILE)
local buf = vim.api.nvim_get_current_buf()
local row, col = tonumber(env.LSP_ASSIST_ROW), tonumber(env.LSP_ASSIST_COL)

local function stats(then_do)
  local client = inline.get_client(buf)
  local done = nil
  inline.client_request(client, "workspace/executeCommand", { command = "lspAssist.stats", arguments = {} }, function(err, result)
    done = { err = err, result = result }
  end, buf)
  wait("stats", function()
    return done
  end, 10000, function(d)
    if d.err then
      return fail("lspAssist.stats: " .. vim.inspect(d.err))
    end
    then_do(d.result)
  end)
end

wait("attached", function()
  return inline.get_client(buf)
end, 20000, function()
  vim.defer_fn(function()
    results.sent_before = rest.sent
    -- A jump and some motion, each well inside the idle time, then a rest.
    local moves = { { 1, 0 }, { 2, 0 }, { 2, 2 }, { 3, 1 }, { row + 1, col } }
    local i = 0
    local function step()
      i = i + 1
      vim.api.nvim_win_set_cursor(0, moves[i])
      vim.api.nvim_exec_autocmds("CursorMoved", { buffer = buf })
      if i < #moves then
        vim.defer_fn(step, 30)
        return
      end
      local t_rest = uv.now()
      wait("rest", function()
        return (not enabled and uv.now() - t_rest > 1500) or (enabled and rest.sent > results.sent_before and uv.now() - t_rest > 1200)
      end, 10000, function()
        results.sent = rest.sent - results.sent_before
        results.last_sent = rest.last_sent
        results.encoding = inline.get_client(buf).offset_encoding
        stats(function(s)
          results.server = s.cursorRest
          finish()
        end)
      end)
    end
    step()
  end, 300)
end)
