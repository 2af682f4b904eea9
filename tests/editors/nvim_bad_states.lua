-- Headless harness for the bad-state checks in tests/editors/test_nvim.py: a missing server
-- gives one message, and a killed server is restarted with backoff (one message).
local env = vim.env
local results = { notes = {}, errors = {}, nvim = tostring(vim.version()) }
local out_path = assert(env.LSP_ASSIST_RESULTS)
local orig_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(results.notes, { msg = tostring(msg), level = level })
  return orig_notify(msg, level, opts)
end

local function finish()
  vim.fn.writefile({ vim.json.encode(results) }, out_path)
  vim.cmd("qa!")
end
vim.defer_fn(function()
  table.insert(results.errors, "deadline")
  finish()
end, 40000)

local function wait_then(pred, timeout_ms, next_step)
  local deadline = vim.uv.now() + timeout_ms
  local timer = vim.uv.new_timer()
  timer:start(20, 20, vim.schedule_wrap(function()
    if timer:is_closing() then return end
    local ok, v = pcall(pred)
    if (ok and v) or vim.uv.now() > deadline then
      timer:stop(); timer:close()
      if not (ok and v) then table.insert(results.errors, "timeout") ; return finish() end
      next_step(v)
    end
  end))
end

local inline = require("lsp_assist.inline")
local scenario = env.LSP_ASSIST_SCENARIO
if scenario == "missing" then
  require("lsp_assist").setup({ cmd = { "/nonexistent/lsp-assist", "serve" }, filetypes = { "python" } })
  for i = 1, 3 do
    vim.cmd.edit(env.LSP_ASSIST_DIR .. "/f" .. i .. ".py")
    vim.bo.filetype = "python"
  end
  vim.defer_fn(function()
    results.clients = #vim.lsp.get_clients({ name = "lsp_assist" })
    finish()
  end, 300)
else -- "crash"
  local pidfile = env.LSP_ASSIST_DIR .. "/server.pid"
  require("lsp_assist").setup({
    cmd = { "sh", "-c", 'echo $$ > "$0"; exec "$1" serve', pidfile, env.LSP_ASSIST_SERVER },
    init_options = { tiers = { fast = { provider = "offline" } } },
    filetypes = { "python" },
    restart = { max_restarts = 3, base_delay_ms = 200, max_delay_ms = 1000, stable_after_ms = 60000 },
  })
  vim.cmd.edit(env.LSP_ASSIST_DIR .. "/a.py")
  vim.bo.filetype = "python"
  local buf = vim.api.nvim_get_current_buf()
  wait_then(function()
    local c = inline.get_client(buf)
    return c and c.initialized and vim.fn.filereadable(pidfile) == 1 and c or nil
  end, 20000, function(first)
    results.first_id = first.id
    local pid = tonumber(vim.fn.readfile(pidfile)[1])
    vim.fn.delete(pidfile)
    vim.uv.kill(pid, "sigkill")
    wait_then(function()
      local c = inline.get_client(buf)
      return c and c.id ~= first.id and c.initialized and c or nil
    end, 20000, function(second)
      results.second_id = second.id
      results.attached = second.attached_buffers[buf] == true
      finish()
    end)
  end)
end
