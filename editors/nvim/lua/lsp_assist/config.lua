--- lsp_assist.config: the plugin's options, their defaults, and server command discovery.
local M = {}

---@class lsp_assist.Keymaps
---@field accept string|false        accept the whole suggestion (falls back to the key when none is shown)
---@field accept_word string|false
---@field accept_line string|false
---@field dismiss string|false
---@field next string|false
---@field prev string|false
---@field escalate string|false
---@field next_edit string|false          jump to the next edit, then accept it (Normal and Insert mode)
---@field next_edit_dismiss string|false  dismiss the next edit (Normal mode; Insert mode uses `dismiss`)

---@class lsp_assist.Options
---@field cmd string[]|nil           server command; nil: <root>/.venv/bin/lsp-assist, venv/, then PATH
---@field init_options table         the server's config table (same keys as lspAssist.* in VS Code)
---@field filetypes string[]         filetypes to serve; { "*" } serves every normal file buffer
---@field root_markers string[]
---@field debounce_ms integer        own renderer (Neovim 0.10/0.11) only
---@field auto_trigger boolean       request while typing; false: only on <Plug>/next
---@field builtin boolean|nil        use vim.lsp.inline_completion (nil: when Neovim has it, i.e. 0.12+)
---@field hl_group string
---@field editor_definitions boolean send definitions other LSP clients resolve near the cursor (lspAssist/definitions)
---@field cursor_rest boolean       tell the server where the cursor rests (lspAssist/cursorRest): warms the local model
---@field statusline boolean         show the status item (tier, last latency) when 'statusline' is empty (the default)
---@field keymaps lsp_assist.Keymaps
---@field next_edit { enabled: boolean, debounce_ms: integer|nil, sign: string } next-edit suggestions (next_edit.lua)
---@field restart { max_restarts: integer, base_delay_ms: integer, max_delay_ms: integer, stable_after_ms: integer }

---@type lsp_assist.Options
M.defaults = {
  cmd = nil,
  init_options = {},
  filetypes = { "*" },
  root_markers = { ".git", "pyproject.toml", "package.json", ".lsp-assist.toml" },
  debounce_ms = 30,
  auto_trigger = true,
  builtin = nil,
  hl_group = "LspAssistGhost",
  statusline = true,
  editor_definitions = true,
  cursor_rest = true,
  keymaps = {
    accept = "<Tab>",
    accept_word = "<M-Right>",
    accept_line = "<M-l>",
    dismiss = "<C-]>",
    next = "<M-]>",
    prev = "<M-[>",
    escalate = "<M-\\>",
    next_edit = "<Tab>",
    next_edit_dismiss = "<Esc>",
  },
  -- debounce_ms nil: the completion's debounce_ms.
  next_edit = { enabled = true, debounce_ms = nil, sign = "»" },
  restart = { max_restarts = 5, base_delay_ms = 500, max_delay_ms = 30000, stable_after_ms = 60000 },
}

---@type lsp_assist.Options
M.options = vim.deepcopy(M.defaults)

---@param opts table|nil
---@return lsp_assist.Options
function M.set(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  -- Lists replace rather than merge (tbl_deep_extend would merge them index by index).
  if opts and opts.filetypes then
    M.options.filetypes = opts.filetypes
  end
  if opts and opts.cmd then
    M.options.cmd = opts.cmd
  end
  return M.options
end

---@param ft string
---@return boolean
function M.serves_filetype(ft)
  if ft == nil or ft == "" then
    return false
  end
  for _, want in ipairs(M.options.filetypes) do
    if want == "*" or want == ft then
      return true
    end
  end
  return false
end

---@param path string
---@return boolean
local function executable(path)
  return path ~= nil and path ~= "" and vim.fn.executable(path) == 1
end

--- The server command for a root directory, or nil plus a reason when none is found.
---@param root string|nil
---@return string[]|nil, string|nil
function M.resolve_cmd(root)
  local cmd = M.options.cmd
  if cmd then
    if type(cmd) == "string" then
      cmd = { cmd }
    end
    local exe = vim.fn.expand(cmd[1])
    if executable(exe) then
      local out = vim.deepcopy(cmd)
      out[1] = exe
      return out, nil
    end
    return nil, ("cmd[1] = %q is not executable"):format(cmd[1])
  end
  local bin = vim.fn.has("win32") == 1 and "Scripts" or "bin"
  local dirs = {}
  if root then
    table.insert(dirs, root)
  end
  local cwd = vim.uv.cwd()
  if cwd and cwd ~= root then
    table.insert(dirs, cwd)
  end
  for _, dir in ipairs(dirs) do
    for _, venv in ipairs({ ".venv", "venv" }) do
      local exe = table.concat({ dir, venv, bin, "lsp-assist" }, "/")
      if executable(exe) then
        return { exe, "serve" }, nil
      end
    end
  end
  local on_path = vim.fn.exepath("lsp-assist")
  if on_path ~= "" then
    return { on_path, "serve" }, nil
  end
  return nil, "lsp-assist is neither in the project's .venv/venv nor on PATH (pip install lsp-assist, or pass cmd to setup())"
end

return M
