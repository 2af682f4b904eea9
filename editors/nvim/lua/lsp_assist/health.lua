--- :checkhealth lsp_assist: server path and version, the inline completion path, tier status.
local M = {}

local health = vim.health

function M.check()
  local config = require("lsp_assist.config")
  local lsp_assist = require("lsp_assist")
  local inline = require("lsp_assist.inline")

  health.start("lsp-assist: Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 0 then
    health.error("Neovim " .. version .. " is too old; lsp-assist needs 0.10+")
  elseif lsp_assist.use_builtin() then
    health.ok("Neovim " .. version .. ": built-in vim.lsp.inline_completion")
  else
    health.ok("Neovim " .. version .. ": lsp-assist ghost-text renderer (extmarks)")
  end
  if not lsp_assist.is_setup() then
    health.warn("setup() has not been called", { 'require("lsp_assist").setup({})' })
  end

  health.start("lsp-assist: server")
  local cmd, why = config.resolve_cmd(vim.uv.cwd())
  if not cmd then
    health.error("server not found: " .. tostring(why), { "pip install lsp-assist", "or setup({ cmd = { '/path/to/lsp-assist', 'serve' } })" })
  else
    health.ok("server command: " .. table.concat(cmd, " "))
    local ok, res = pcall(function()
      return vim.system({ cmd[1], "--version" }, { text = true }):wait(10000)
    end)
    if ok and res and res.code == 0 then
      health.ok("version: " .. vim.trim(res.stdout ~= "" and res.stdout or res.stderr))
    else
      local detail = ok and res and (vim.trim(res.stderr or "") .. " (exit " .. tostring(res.code) .. ")") or tostring(res)
      health.error("`" .. cmd[1] .. " --version` failed: " .. detail)
    end
  end

  health.start("lsp-assist: running servers")
  local clients = vim.lsp.get_clients({ name = inline.client_name })
  if #clients == 0 then
    health.info("no server running (open a file of a served filetype)")
  end
  for _, client in ipairs(clients) do
    local caps = client.server_capabilities or {}
    local msg = ("client %d: root %s, position encoding %s"):format(client.id, tostring(client.root_dir), tostring(client.offset_encoding))
    if caps.inlineCompletionProvider then
      health.ok(msg .. ", inline completion advertised")
    else
      health.error(msg .. ": the server does not advertise inlineCompletionProvider")
    end
    if require("lsp_assist.next_edit").supported(client) then
      health.ok(("client %d: next-edit suggestions advertised (textDocument/copilotInlineEdit)"):format(client.id))
    else
      health.info(("client %d: no next-edit suggestions (the server does not advertise experimental.nextEdit)"):format(client.id))
    end
  end
  local status = lsp_assist.get_status()
  if status.tier or status.state then
    local text = ("tier %s, last latency %s ms"):format(tostring(status.tier), tostring(status.lastLatencyMs))
    if status.state == "warning" then
      health.warn(text .. ": " .. tostring(status.message))
    elseif status.state == "error" then
      health.error(text .. ": " .. tostring(status.message))
    else
      health.ok(text)
    end
  elseif #clients > 0 then
    health.info("no tier status received yet (it arrives with the first suggestion)")
  end
end

return M
