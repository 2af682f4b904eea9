-- Shared by the headless Neovim scenarios nvim_next_edit.lua and nvim_copilot_lsp.lua: the
-- results file, a bounded step runner, keys through feedkeys, a screen capture, and a wrapper
-- that records every message the LSP client sends (and each reply, with times).
--
-- `local H = dofile(".../nvim_steps.lua")(snapshot_fn)`; H.results is written to
-- $LSP_ASSIST_RESULTS by H.finish() (also on the first failure and at the deadline).
return function(snapshot)
  local env = vim.env
  local H = {}
  local results = { steps = {}, errors = {}, sent = {}, nvim = tostring(vim.version()) }
  H.results = results
  local out_path = assert(env.LSP_ASSIST_RESULTS, "LSP_ASSIST_RESULTS unset")
  local finished = false

  function H.finish()
    if finished then
      return
    end
    finished = true
    local ok, snap = pcall(snapshot)
    results.final = ok and snap or tostring(snap)
    results.messages = vim.fn.execute("messages")
    vim.fn.writefile({ vim.json.encode(results) }, out_path)
    vim.cmd("qa!")
  end

  function H.fail(msg)
    table.insert(results.errors, msg)
    local ok, snap = pcall(snapshot)
    results.fail_state = ok and snap or tostring(snap)
    H.finish()
  end

  vim.defer_fn(function()
    H.fail("deadline reached in step " .. tostring(results.current))
  end, tonumber(env.LSP_ASSIST_DEADLINE_MS or "25000"))

  function H.now_ms()
    return vim.uv.hrtime() / 1e6
  end

  function H.feed(keys, mode)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), mode or "m", false)
  end

  function H.screen()
    vim.cmd("redraw")
    local rows = {}
    for r = 1, vim.o.lines do
      local chars = {}
      for c = 1, vim.o.columns do
        table.insert(chars, vim.fn.screenstring(r, c))
      end
      table.insert(rows, (table.concat(chars):gsub("%s+$", "")))
    end
    return rows
  end

  --- Run `steps` in order. A step: { name, act = fn, wait = pred, timeout = ms, settle = ms,
  --- record = fn(value) }; `wait` is polled every 5 ms until truthy, else the run fails.
  function H.run(steps, i)
    i = i or 1
    local step = steps[i]
    if not step or finished then
      return H.finish()
    end
    results.current = step.name
    if step.act then
      local ok, err = pcall(step.act)
      if not ok then
        return H.fail(step.name .. ": act failed: " .. tostring(err))
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
            return H.fail(step.name .. ": record failed: " .. tostring(err))
          end
        end
        H.run(steps, i + 1)
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
    local deadline = vim.uv.now() + (step.timeout or 8000)
    local timer = vim.uv.new_timer()
    timer:start(
      5,
      5,
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
          H.fail(step.name .. ": " .. tostring(value))
        elseif vim.uv.now() > deadline then
          timer:stop()
          timer:close()
          H.fail("timed out waiting for " .. step.name)
        end
      end)
    )
  end

  --- Record what `client` sends: every request with its reply, and the notifications that
  --- matter here (didChange, the inline-edit ones, cancellations).
  function H.wrap_rpc(client)
    local rpc = client.rpc
    local request, notify = rpc.request, rpc.notify
    rpc.request = function(method, p, callback, ...)
      local entry = { kind = "request", method = method, params = p, t_sent = H.now_ms() }
      table.insert(results.sent, entry)
      return request(method, p, function(err, result, ...)
        entry.t_reply = H.now_ms()
        entry.err = err
        entry.result = result
        return callback(err, result, ...)
      end, ...)
    end
    rpc.notify = function(method, p, ...)
      if method == "textDocument/didChange" or method:find("InlineEdit", 1, true) or method == "$/cancelRequest" then
        table.insert(results.sent, { kind = "notify", method = method, params = p, t_sent = H.now_ms() })
      end
      return notify(method, p, ...)
    end
  end

  return H
end
