-- The code in README.md and docs/*.md runs, and every output comment shows
-- what its print writes (tools/doccheck.lua; conventions in docs/internals.md,
-- "Code in the documentation").
local doccheck = dofile("tools/doccheck.lua")

local root = io.popen("pwd"):read("l")

local function files()
  local list = {"README.md"}
  local p = io.popen("ls docs/*.md")
  for f in p:lines() do list[#list + 1] = f end
  p:close()
  return list
end

-- Runs Markdown 'text' as the file 'name' would be run; returns the report.
local function check_text(text, name)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  local report = doccheck.check_file(path, name or "doc.md", root)
  os.remove(path)
  return table.concat(report, "\n")
end

describe("doccheck conventions", function()
  it("catches a print whose comment is not its output (README's first example, before its fix)", function()
    local report = check_text(table.concat({
      "# x", "", "```lua",
      'local tf = require("tf")',
      "local x = tf.constant({{1, 2}, {3, 4}})",
      "print(tf.matmul(x, x))          -- tf.Tensor(\\n[[ 7 10]\\n [15 22]], shape=(2, 2), dtype=int32)",
      "print((x + 1):totable())        -- {{2, 3}, {4, 5}}",
      "```", ""}, "\n"), "README.md")
    assert.truthy(report:find("README.md:7: (block at line 3) print output differs\n  expected:\n    {{2, 3}, {4, 5}}\n" ..
      "  actual:\n    table: 0x", 1, true), report)
    assert.falsy(report:find("README.md:6:", 1, true), report)   -- the matmul line is right
  end)

  it("reads multi-line output from the comment lines under a print, with escapes", function()
    local report = check_text(table.concat({
      "```lua",
      "print('a\\tb')   -- a\\tb",
      "print('x\\ny')",
      "-- x",
      "-- y",
      "print(1, 2)     -- 1\\t2",
      "print('c')      -- d",
      "```"}, "\n"))
    assert.equal("doc.md:7: (block at line 1) print output differs\n  expected:\n    d\n  actual:\n    c", report)
  end)

  it("ignores comments on other lines and inside strings", function()
    assert.equal("", check_text("```lua\nlocal s = 'x -- y'  -- prose\nprint(s)  -- x -- y\n-- more prose\n```\n"))
    assert.equal(9, doccheck.comment_start("f('--') -- c"))
    assert.equal(nil, doccheck.comment_start("f([[ -- ]])"))
  end)

  it("chains the blocks of one file: a later block sees an earlier block's locals", function()
    assert.equal("", check_text("```lua\nlocal n = 41\n```\n\ntext\n\n```lua\nprint(n + 1)  -- 42\n```\n"))
  end)

  it("fails a block that raises, naming the file and line", function()
    local report = check_text("# t\n```lua\nlocal a = 1\nerror('boom')\n```\n")
    assert.truthy(report:find("doc.md:4: the block at line 2 raised", 1, true), report)
    assert.truthy(report:find("doc.md:4: boom", 1, true), report)
  end)

  it("fails a print with an output comment that never runs", function()
    local report = check_text("```lua\nif false then print(1) end\nlocal function f() print(2) end\n" ..
      "print(3)  -- 3\n```\n```lua\nlocal function g()\n  print(4)  -- 4\nend\n```\n")
    assert.equal("doc.md:8: (block at line 6) this print never ran; expected:\n    4", report)
  end)

  it("skips a block marked with a reason, and refuses a skip without one", function()
    assert.equal("", check_text("<!-- doccheck: skip (needs a GPU) -->\n```lua\nerror('not run')\n```\n"))
    local report = check_text("<!-- doccheck: skip -->\n```lua\nerror('not run')\n```\n")
    assert.truthy(report:find("doc.md:1: doccheck: skip needs a reason", 1, true), report)
  end)

  it("runs a hidden setup comment before its block", function()
    assert.equal("", check_text("<!-- doccheck: setup\nlocal v = tf.constant({1, 2})\n-->\n" ..
      "```lua\nprint(v)  -- tf.Tensor([1 2], shape=(2,), dtype=int32)\n```\n"))
  end)
end)

describe("documentation", function()
  for _, name in ipairs(files()) do
    it(name .. " runs and prints what its comments say", function()
      local report = doccheck.check_file(root .. "/" .. name, name, root)
      assert.equal("", table.concat(report, "\n"))
    end)
  end
end)
