-- tools/doccheck.lua: runs the ```lua blocks of Markdown files and checks
-- that every output comment shows what its print call writes.
--
--   lua5.4 tools/doccheck.lua README.md docs/*.md
--
-- The conventions (docs/internals.md, "Code in the documentation"):
--   * every ```lua block runs; the blocks of one file run in order as one
--     chunk (a later block sees an earlier block's locals), in a fresh
--     process with `tf` loaded as a global, in a scratch directory;
--   * `<!-- doccheck: skip (reason) -->` on the line before a fence keeps
--     that block from running (the reason is required);
--   * `<!-- doccheck: setup` ... `-->` before a fence holds Lua that runs
--     before the block without being shown (data a block assumes);
--   * a comment after a one-line `print(...)` statement is exactly what that
--     call writes (tab for each argument separator, `\n` a newline, `\t` a
--     tab, `\\` a backslash); a print line without a comment followed at once
--     by comment-only lines: those lines are its output, one a line;
--   * comments anywhere else are prose and are not checked.
-- A block that raises fails the check, as does an output comment whose print
-- never ran. Errors and differences are reported as file:line.
-- Exit status: 0 when every file passes, 1 otherwise.

local M = {}

-- {==== Extraction

-- Position of the `--` that starts a comment in 'line', or nil: quotes are
-- skipped ('...' and "..." with backslash escapes; a [[ long string opened
-- on this line is skipped to its end).
local function comment_start(line)
  local i, n = 1, #line
  while i <= n do
    local c = line:sub(i, i)
    if c == '"' or c == "'" then
      local j = i + 1
      while j <= n do
        local d = line:sub(j, j)
        if d == "\\" then j = j + 1 elseif d == c then break end
        j = j + 1
      end
      i = j + 1
    elseif c == "[" and line:find("^%[=*%[", i) then
      local eqs = line:match("^%[(=*)%[", i)
      local close = line:find("]" .. eqs .. "]", i, true)
      i = close and close + #eqs + 2 or n + 1
    elseif c == "-" and line:sub(i + 1, i + 1) == "-" then
      return i
    else
      i = i + 1
    end
  end
  return nil
end
M.comment_start = comment_start

-- Undoes the escapes an output comment may use: \n, \t, \\.
local function unescape(s)
  return (s:gsub("\\(.)", function(c)
    if c == "n" then return "\n" elseif c == "t" then return "\t" elseif c == "\\" then return "\\" end
  end))
end
M.unescape = unescape

-- Splits a Markdown text into its ```lua blocks:
--   {fence = line of the opening fence, first = , last = (code lines),
--    skip = reason or nil, setup = {first = , last = } or nil}
function M.blocks(text)
  local lines = {}
  for l in (text .. "\n"):gmatch("(.-)\r?\n") do lines[#lines + 1] = l end
  if lines[#lines] == "" then lines[#lines] = nil end
  local blocks, errors = {}, {}
  local i = 1
  while i <= #lines do
    local fence, lang = lines[i]:match("^(%s*```+)%s*(%S*)")
    if fence then
      local j = i + 1
      while j <= #lines and not lines[j]:match("^%s*```") do j = j + 1 end
      if lang == "lua" then
        local b = {fence = i, first = i + 1, last = j - 1}
        -- the directive sits on the line(s) just above the fence
        local k = i - 1
        while k >= 1 and lines[k]:match("^%s*$") do k = k - 1 end
        local above = lines[k] or ""
        if above:match("^%s*<!%-%-%s*doccheck:") then
          local reason = above:match("^%s*<!%-%-%s*doccheck:%s*skip%s*%((.-)%)%s*%-%->%s*$")
          if reason and reason:match("%S") then
            b.skip = reason
          elseif above:match("^%s*<!%-%-%s*doccheck:%s*skip") then
            errors[#errors + 1] = {line = k, msg = "doccheck: skip needs a reason: <!-- doccheck: skip (why) -->"}
          else
            errors[#errors + 1] = {line = k, msg = "doccheck: unknown directive: " .. above}
          end
        elseif above:match("^%s*%-%->%s*$") then
          -- the end of a `<!-- doccheck: setup` comment
          local s = k - 1
          while s >= 1 and not lines[s]:match("<!%-%-") do s = s - 1 end
          if s >= 1 and lines[s]:match("^%s*<!%-%-%s*doccheck:%s*setup%s*$") then
            b.setup = {first = s + 1, last = k - 1}
          end
        end
        blocks[#blocks + 1] = b
      end
      i = j + 1
    else
      i = i + 1
    end
  end
  return blocks, lines, errors
end

-- The output comments of the runnable blocks: {[line] = expected text}.
function M.expectations(blocks, lines)
  local expect = {}
  for _, b in ipairs(blocks) do
    if not b.skip then
      local l = b.first
      while l <= b.last do
        local line = lines[l]
        if line:match("^%s*print%s*%(") then
          local c = comment_start(line)
          if c then
            expect[l] = unescape((line:sub(c + 2):gsub("^ ", ""):gsub("%s+$", "")))
          else
            local out, m = {}, l + 1
            while m <= b.last and lines[m]:match("^%s*%-%-") do
              out[#out + 1] = unescape((lines[m]:match("^%s*%-%- ?(.*)$"):gsub("%s+$", "")))
              m = m + 1
            end
            if #out > 0 then expect[l] = table.concat(out, "\n") end
          end
        end
        l = l + 1
      end
    end
  end
  return expect
end

-- The chunk that runs a file's blocks: the file's own lines where they are
-- code (runnable blocks and their setup), blank lines elsewhere, so that a
-- Lua error's line number is the Markdown file's line number.
function M.chunk(blocks, lines)
  local out = {}
  for i = 1, #lines do out[i] = "" end
  for _, b in ipairs(blocks) do
    if not b.skip then
      if b.setup then for i = b.setup.first, b.setup.last do out[i] = lines[i] end end
      for i = b.first, b.last do out[i] = lines[i] end
    end
  end
  return table.concat(out, "\n") .. "\n"
end

-- }====

-- {==== Checking

local function block_at(blocks, line)
  for _, b in ipairs(blocks) do
    if line >= (b.setup and b.setup.first or b.first) and line <= b.last then return b end
  end
end

local function rstrip_lines(s)
  return (s:gsub("[ \t]+\n", "\n"):gsub("%s+$", ""))
end

-- Runs the blocks of the Markdown text 'text' as the chunk 'name' (a file
-- holding M.chunk's text, relative to the current directory: AutoGraph
-- reads a function's source from it); returns a list of failure texts.
function M.run(text, name)
  local blocks, lines, failures = M.blocks(text)
  local report = {}
  for _, e in ipairs(failures) do report[#report + 1] = ("%s:%d: %s"):format(name, e.line, e.msg) end
  local expect = M.expectations(blocks, lines)

  local source = "@" .. name
  local printed = {}   -- [line] = {text, ...}
  local function capture(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    local s = table.concat(parts, "\t")
    -- the innermost caller that belongs to the document names the line
    for level = 2, 60 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source == source then
        local t = printed[info.currentline] or {}
        t[#t + 1] = s
        printed[info.currentline] = t
        return
      end
    end
    io.stdout:write(s, "\n")
  end
  local env = setmetatable({print = capture}, {__index = _G})
  env._G = env
  env.tf = require("tf")

  local fn, err = loadfile(name, "t", env)
  local ok = fn ~= nil
  if ok then
    ok, err = xpcall(fn, function(e)
      local msg = type(e) == "table" and ((e.kind or "error") .. ": " .. tostring(e.message)) or tostring(e)
      return debug.traceback(msg, 2)
    end)
  end
  if not ok then
    local pat = name:gsub("%p", "%%%0") .. ":(%d+):"
    local line = tonumber(tostring(err):match("^" .. pat)) or tonumber(tostring(err):match("\n%s*" .. pat))
    local b = line and block_at(blocks, line)
    report[#report + 1] = ("%s:%s: the block at line %s raised (mark it <!-- doccheck: skip (reason) --> if it " ..
      "cannot run here):\n%s"):format(name, line or "?", b and b.fence or "?", tostring(err))
    local unchecked = 0
    for l in pairs(expect) do if not printed[l] then unchecked = unchecked + 1 end end
    if unchecked > 0 then
      report[#report + 1] = ("%s: %d output comment(s) whose print did not run were not checked"):format(name, unchecked)
    end
  end

  local ls = {}
  for l in pairs(expect) do ls[#ls + 1] = l end
  table.sort(ls)
  for _, l in ipairs(ls) do
    local b = block_at(blocks, l)
    local got = printed[l]
    if not got then
      if ok then
        report[#report + 1] = ("%s:%d: (block at line %d) this print never ran; expected:\n    %s"):format(
          name, l, b.fence, (expect[l]:gsub("\n", "\n    ")))
      end
    else
      local actual = table.concat(got, "\n")
      if rstrip_lines(actual) ~= rstrip_lines(expect[l]) then
        report[#report + 1] = ("%s:%d: (block at line %d) print output differs\n  expected:\n    %s\n  actual:\n    %s")
          :format(name, l, b.fence, (expect[l]:gsub("\n", "\n    ")), (actual:gsub("\n", "\n    ")))
      end
    end
  end
  return report
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- Checks the Markdown file 'path' (shown as 'name', relative to the
-- repository 'root'): a fresh lua5.4 process runs its blocks in a scratch
-- directory with the in-tree tf (root/lua, root/$BUILD_DIR). Returns a list
-- of failure texts and what the run wrote to stdout/stderr.
function M.check_file(path, name, root)
  local text = assert(slurp(path), "doccheck: cannot read " .. path)
  local blocks, lines, errors = M.blocks(text)
  local runnable = false
  for _, b in ipairs(blocks) do runnable = runnable or not b.skip end
  if not runnable then
    local report = {}
    for _, e in ipairs(errors) do report[#report + 1] = ("%s:%d: %s"):format(name, e.line, e.msg) end
    return report, ""
  end
  local scratch = io.popen("mktemp -d"):read("l")
  local dir = name:match("^(.*)/[^/]*$")
  if dir then os.execute("mkdir -p " .. shell_quote(scratch .. "/" .. dir)) end
  write(scratch .. "/" .. name, M.chunk(blocks, lines))
  write(scratch .. "/.doccheck.md", text)
  local build = os.getenv("BUILD_DIR") or "build"
  if build:sub(1, 1) ~= "/" then build = root .. "/" .. build end
  local cmd = ("cd %s && LUA_PATH_5_4=%s LUA_CPATH_5_4=%s lua5.4 %s --run %s 2>&1"):format(
    shell_quote(scratch), shell_quote(root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;;"),
    shell_quote(build .. "/?.so;;"), shell_quote(root .. "/tools/doccheck.lua"), shell_quote(name))
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok, _, code = p:close()
  local result = slurp(scratch .. "/.doccheck.report")
  os.execute("rm -rf " .. shell_quote(scratch))
  local report = {}
  if result then
    for r in result:gmatch("(.-)\0") do report[#report + 1] = r end
  else
    report[1] = ("%s: the run ended without a report (status %s):\n%s"):format(name, tostring(code), out)
  end
  if result and #report > 0 and out:match("%S") then report[#report + 1] = "(the run printed:)\n" .. out end
  return report, out
end

-- }====

if arg and arg[0] and arg[0]:match("doccheck%.lua$") and not package.loaded["tools.doccheck"] then
  if arg[1] == "--run" then
    -- the child: in the scratch directory, the chunk is arg[2], the
    -- Markdown text .doccheck.md
    local report = M.run(slurp(".doccheck.md"), arg[2])
    write(".doccheck.report", #report > 0 and table.concat(report, "\0") .. "\0" or "")
    os.exit(0)
  end
  local cwd = io.popen("pwd"):read("l")
  local root = arg[0]:match("^(.*)/tools/doccheck%.lua$") or "."
  if root:sub(1, 1) ~= "/" then root = cwd .. "/" .. root end
  root = root:gsub("/%./?$", ""):gsub("/$", "")
  local failed = 0
  for i = 1, #arg do
    local path = arg[i]
    if path:sub(1, 1) ~= "/" then path = cwd .. "/" .. path end
    local name = path:gsub("/%./", "/")
    if name:sub(1, #root + 1) == root .. "/" then name = name:sub(#root + 2) else name = name:match("[^/]+$") end
    local report = M.check_file(path, name, root)
    for _, r in ipairs(report) do io.stderr:write(r, "\n") end
    if #report > 0 then failed = failed + 1 end
  end
  io.stderr:write(("doccheck: %d file(s), %d failed\n"):format(#arg, failed))
  os.exit(failed == 0 and 0 or 1)
end

return M
