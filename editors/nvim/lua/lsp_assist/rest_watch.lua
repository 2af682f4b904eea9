--- lsp_assist.rest_watch: run a function once the cursor of a buffer has rested.
---
--- One timer per watched buffer, restarted by each of the watcher's autocmd `events`; when it
--- fires, `on_rest(buf)` runs on the main loop. Shared by `cursor_rest.lua` (tell the server
--- where the cursor rests) and `definitions.lua` (look up the names near the cursor), which
--- each had a copy of this.
local uv = vim.uv or vim.loop

local M = {}

--- A watcher. `opts`:
---   name      augroup prefix (one group per buffer: `<name>_<buf>`)
---   events    autocmd events that restart the timer
---   idle_ms   function returning the delay, read at each restart (the module's field may change)
---   on_rest   function(buf), when the timer fires
---   on_detach function(buf), optional: forget the buffer's own state
function M.new(opts)
  local w = { timers = {}, attached = {} }

  local function schedule(buf)
    local timer = w.timers[buf]
    if not timer then
      timer = uv.new_timer()
      w.timers[buf] = timer
    end
    timer:stop()
    timer:start(opts.idle_ms(), 0, vim.schedule_wrap(function()
      opts.on_rest(buf)
    end))
  end

  --- Stop watching `buf` and free its timer.
  function w.detach(buf)
    local timer = w.timers[buf]
    if timer then
      timer:stop()
      timer:close()
    end
    w.timers[buf], w.attached[buf] = nil, nil
    if opts.on_detach then
      opts.on_detach(buf)
    end
  end

  --- Start watching `buf` (idempotent); it is forgotten when unloaded or wiped out.
  function w.attach(buf)
    if w.attached[buf] then
      return
    end
    w.attached[buf] = true
    local group = vim.api.nvim_create_augroup(opts.name .. "_" .. buf, { clear = true })
    vim.api.nvim_create_autocmd(opts.events, {
      group = group,
      buffer = buf,
      callback = function()
        schedule(buf)
      end,
    })
    vim.api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
      group = group,
      buffer = buf,
      callback = function()
        w.detach(buf)
        pcall(vim.api.nvim_del_augroup_by_id, group)
      end,
    })
  end

  return w
end

return M
