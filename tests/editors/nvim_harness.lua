-- Headless Neovim harness for tests/editors/test_nvim.py (run with `nvim --headless --clean -u NONE`).
--
-- Drives the real plugin against the real server as a user would: typed keys go through
-- feedkeys (so InsertEnter/TextChangedI autocommands and the <Tab> <expr> mapping run for
-- real), and the steps run from timers so that the main loop keeps processing input.
-- Inputs come from environment variables; results go to a JSON file the test reads.
local env = vim.env
local results = { steps = {}, errors = {}, nvim = tostring(vim.version()) }
local out_path = assert(env.LSP_ASSIST_RESULTS, "LSP_ASSIST_RESULTS unset")

local function finish()
  results.messages = vim.fn.execute("messages")
  vim.fn.writefile({ vim.json.encode(results) }, out_path)
  vim.cmd("qa!")
end

local function fail(msg)
  table.insert(results.errors, msg)
  results.fail_state = { mode = vim.fn.mode(), lines = vim.api.nvim_buf_get_lines(0, 0, -1, false), cursor = vim.api.nvim_win_get_cursor(0) }
  finish()
end

-- A hard deadline for the whole scenario.
vim.defer_fn(function()
  fail("deadline reached in step " .. tostring(results.current))
end, tonumber(env.LSP_ASSIST_DEADLINE_MS or "60000"))

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

vim.cmd.edit(env.LSP_ASSIST_FILE)
vim.bo.filetype = "python"
local buf = vim.api.nvim_get_current_buf()
local inline = require("lsp_assist.inline")

local function ghost_marks()
  local marks = vim.api.nvim_buf_get_extmarks(buf, inline.ns, 0, -1, { details = true })
  local out = {}
  for _, m in ipairs(marks) do
    local text = ""
    for _, chunk in ipairs(m[4].virt_text or {}) do
      text = text .. chunk[1]
    end
    table.insert(out, { row = m[2], col = m[3], text = text, virt_lines = m[4].virt_lines and #m[4].virt_lines or 0 })
  end
  return out
end

local function screen(rows)
  vim.cmd("redraw")
  local lines = {}
  for r = 1, rows do
    local chars = {}
    for c = 1, vim.o.columns do
      table.insert(chars, vim.fn.screenstring(r, c))
    end
    table.insert(lines, (table.concat(chars):gsub("%s+$", "")))
  end
  return lines
end

--- Poll `pred` every 20 ms, then call `next_step`; fail after `timeout_ms`.
local function wait_then(name, pred, timeout_ms, next_step)
  results.current = name
  local deadline = vim.uv.now() + timeout_ms
  local timer = vim.uv.new_timer()
  timer:start(
    20,
    20,
    vim.schedule_wrap(function()
      if timer:is_closing() then
        return
      end
      local ok, value = pcall(pred)
      if ok and value then
        timer:stop()
        timer:close()
        results.steps[name] = true
        local ok2, err2 = pcall(next_step, value)
        if not ok2 then
          fail(name .. " next step failed: " .. tostring(err2))
        end
      elseif not ok then
        timer:stop()
        timer:close()
        fail(name .. ": " .. tostring(value))
      elseif vim.uv.now() > deadline then
        timer:stop()
        timer:close()
        fail("timed out waiting for " .. name)
      end
    end)
  )
end

local function feed(keys, mode)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), mode or "n", false)
end

local function line(row)
  return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
end

local target_row = tonumber(env.LSP_ASSIST_ROW) -- 0-based row of the line to complete

wait_then("initialized", function()
  local client = inline.get_client(buf)
  return client and client.initialized
end, 20000, function()
  results.offset_encoding = inline.get_client(buf).offset_encoding
  vim.api.nvim_win_set_cursor(0, { target_row + 1, 0 })
  feed("A") -- append at the end of the line: InsertEnter -> request

  wait_then("ghost_shown", function()
    local marks = ghost_marks()
    return #marks > 0 and marks[1].text ~= "" and marks or nil
  end, 20000, function(marks)
    results.mode_when_shown = vim.fn.mode()
    results.ghost = marks[1]
    results.line_before_accept = line(target_row)
    results.screen = screen(math.min(vim.o.lines - 1, 8))
    -- The status update follows the reply (the server writes it after the answer, at most
    -- one per 250 ms): wait for the status line to show the request's latency.
    wait_then("status_latency", function()
      local status = require("lsp_assist").statusline()
      return status:match("^lsp%-assist fast [%d.]+ms$") and status
    end, 5000, function(status)
      results.statusline = status
      vim.cmd("redrawstatus!") -- as the plugin's scheduled redraw would, without the race
      results.status_rows = screen(vim.o.lines)
      feed("<Tab>", "m") -- through the plugin's <expr> mapping

      wait_then("accepted", function()
        return line(target_row) ~= results.line_before_accept
      end, 10000, function()
        results.line_after_accept = line(target_row)
        results.cursor_after_accept = vim.api.nvim_win_get_cursor(0)
        -- A fresh line that the same suggestion fits, for the dismiss check.
        feed("<Esc>")
        feed("o" .. env.LSP_ASSIST_TYPED)

        wait_then("ghost_shown_again", function()
          local m = ghost_marks()
          return #m > 0 and vim.fn.mode() == "i" and m or nil
        end, 20000, function(m)
          results.ghost_again = m[1]
          feed("<C-]>", "m") -- dismiss mapping

          wait_then("dismissed", function()
            return #ghost_marks() == 0
          end, 5000, function()
            results.marks_after_dismiss = #ghost_marks()
            -- With nothing shown, <Tab> is a normal <Tab>.
            local before = line(target_row + 1)
            feed("<Tab>", "m")
            wait_then("plain_tab", function()
              return line(target_row + 1) ~= before
            end, 5000, function()
              results.line_after_plain_tab = line(target_row + 1)
              feed("<Esc>")
              wait_then("insert_left", function()
                return vim.fn.mode() == "n"
              end, 5000, function()
                results.marks_after_insert_leave = #ghost_marks()
                vim.cmd("checkhealth lsp_assist")
                results.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
                finish()
              end)
            end)
          end)
        end)
      end)
    end)
  end)
end)
