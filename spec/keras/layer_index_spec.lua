-- docs/keras.md's "Layer index" table lists exactly the classes in
-- tf.keras.layers, each with a docs file that exists and names it.
local tf = require("tf")

local function read(path)
  local f = assert(io.open(path, "r"))
  local s = f:read("a")
  f:close()
  return s
end

local function index_rows()
  local doc = read("docs/keras.md")
  local section = doc:match("\n## Layer index\n(.-)\n## ") or doc:match("\n## Layer index\n(.*)$")
  assert.truthy(section, "docs/keras.md has no '## Layer index' section")
  local rows = {}
  for name, what, file in section:gmatch("\n| `([%w_]+)` | ([^\n]-) | %[[^%]]+%]%(([%w_%.]+)%) |") do
    rows[#rows + 1] = {name = name, what = what, file = file}
  end
  return rows
end

describe("docs/keras.md layer index", function()
  it("lists every class of tf.keras.layers, and nothing else, once each, in order", function()
    local classes = {}
    for k, v in pairs(tf.keras.layers) do
      if type(v) == "table" and getmetatable(v) ~= nil and type(v.extend) == "function" then classes[#classes + 1] = k end
    end
    table.sort(classes)
    assert.is_true(#classes > 90, "expected the full layer set, found " .. #classes)
    local listed = {}
    for _, r in ipairs(index_rows()) do listed[#listed + 1] = r.name end
    assert.same(classes, listed)
  end)

  it("names a docs file that exists and mentions the layer, and says what an alias names", function()
    for _, r in ipairs(index_rows()) do
      local text = read("docs/" .. r.file)
      assert.truthy(text:find(r.name, 1, true) or text:find(r.what:match("alias of `([%w_]+)`") or "\0", 1, true),
        r.name .. ": docs/" .. r.file .. " does not mention it")
      local target = r.what:match("^alias of `([%w_]+)`$")
      if target then
        assert.equal(tf.keras.layers[target], tf.keras.layers[r.name], r.name .. " is not an alias of " .. target)
      else
        assert.is_true(#r.what > 5, r.name .. ": no description")
      end
    end
  end)
end)
