-- The SavedModel files (docs/saved_model.md, "Format"): version checks,
-- truncated, bit-flipped and hostile files refused with a clear error (never
-- a crash), the variables file a luatf checkpoint that other tools read.
local support = require("support")
local tf = require("tf")
local crc32c = tf.core.internal.crc32c

local function slurp(path) return support.slurp(path) end
local function spit(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

-- a model with a variable, a cond, a while loop, strings and a signature
local function save_model(dir)
  local v = tf.Variable(tf.constant({1.0, 2.0}), {name = "v"})
  local obj = {}
  obj.f = tf.fn(function(x, n)
    local y = x
    if tf.reduce_sum(x) > 0 then y = x * v else y = x - v end
    local i = tf.constant(0)
    while i < n do
      y = y + 1
      i = i + 1
    end
    return y
  end)
  obj.s = tf.fn(function(s) return tf.strings.upper(s) end)
  obj.f(tf.constant({1.0, 1.0}), tf.constant(2))
  obj.s(tf.constant("a"))
  tf.saved_model.save(obj, dir)
end

-- the file with its checksum recomputed (a hostile edit, not corruption)
local function with_crc(bytes)
  local crc = crc32c(bytes:sub(17))
  return bytes:sub(1, 12) .. string.pack("<I4", crc) .. bytes:sub(17)
end

describe("tf.saved_model format", function()
  local base, dir, graph, vars
  setup(function()
    base = support.tmpdir()
    save_model(base .. "/m")   -- once: saving syncs the files to disk
    graph = slurp(base .. "/m/saved_model.ltf")
    vars = slurp(base .. "/m/variables.safetensors")
  end)
  teardown(function() os.execute("rm -rf '" .. base .. "'") end)
  before_each(function()
    dir = support.tmpdir()
    os.execute("mkdir -p '" .. dir .. "/m'")
    spit(dir .. "/m/saved_model.ltf", graph)
    spit(dir .. "/m/variables.safetensors", vars)
  end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("starts with the magic, the version, the checksum and the length", function()
    assert.equal("LTFSAVED", graph:sub(1, 8))
    assert.equal(1, string.unpack("<I4", graph, 9))
    assert.equal(crc32c(graph:sub(17)), string.unpack("<I4", graph, 13))
    assert.equal(#graph - 24, string.unpack("<I8", graph, 17))
  end)

  it("writes the variables as a luatf checkpoint keyed by the variables' names", function()
    local r = tf.train.load_checkpoint(dir .. "/m/variables.safetensors")
    local names = {}
    for _, e in ipairs(r:list_variables()) do names[#names + 1] = e[1] end
    assert.same({"v"}, names)
    assert.same({1.0, 2.0}, r:get_tensor("v"):totable())
  end)

  it("refuses another format version, naming both versions", function()
    local older = graph:sub(1, 8) .. string.pack("<I4", 0) .. graph:sub(13)
    spit(dir .. "/m/saved_model.ltf", older)
    assert.tf_error("DataLossError", "has graph format version 0; this luatf reads version 1", function()
      tf.saved_model.load(dir .. "/m")
    end)
    local newer = graph:sub(1, 8) .. string.pack("<I4", 7) .. graph:sub(13)
    spit(dir .. "/m/saved_model.ltf", newer)
    assert.tf_error("UnimplementedError",
      "has graph format version 7; this luatf reads version 1 (the file was written by a newer luatf)",
      function() tf.saved_model.load(dir .. "/m") end)
  end)

  it("refuses a file that is not a SavedModel graph file", function()
    spit(dir .. "/m/saved_model.ltf", "hello")
    assert.tf_error("DataLossError", "is not a luatf SavedModel graph file", function() tf.saved_model.load(dir .. "/m") end)
  end)

  it("refuses every truncation", function()
    for n = 0, #graph - 1, 7 do
      spit(dir .. "/m/saved_model.ltf", graph:sub(1, n))
      local ok, err = pcall(tf.saved_model.load, dir .. "/m")
      assert.is_false(ok)
      assert.equal("DataLossError", err.kind, err.message)
    end
  end)

  it("refuses every single bit flip (the checksum)", function()
    for i = 1, #graph, 3 do
      local b = graph:byte(i) ~ (1 << (i % 8))
      spit(dir .. "/m/saved_model.ltf", graph:sub(1, i - 1) .. string.char(b) .. graph:sub(i + 1))
      local ok, err = pcall(tf.saved_model.load, dir .. "/m")
      assert.is_false(ok)
      assert.is_true(err.kind == "DataLossError" or err.kind == "UnimplementedError", tostring(err))
    end
  end)

  it("refuses hostile edits with a valid checksum with an error, never a crash", function()
    local kinds = {}
    for i = 25, #graph do
      for _, b in ipairs({0x00, 0xff, 0x7f}) do
        local bytes = with_crc(graph:sub(1, i - 1) .. string.char(b) .. graph:sub(i + 1))
        spit(dir .. "/m/saved_model.ltf", bytes)
        local ok, err = pcall(tf.saved_model.load, dir .. "/m")
        if not ok then
          assert.is_table(err, tostring(err))
          kinds[err.kind] = true
        end
      end
    end
    assert.is_true(kinds.DataLossError)
  end)

  it("refuses a corrupted or missing variables file", function()
    spit(dir .. "/m/variables.safetensors", vars:sub(1, #vars - 1) .. string.char(vars:byte(#vars) ~ 1))
    assert.tf_error("DataLossError", "checksum mismatch", function() tf.saved_model.load(dir .. "/m") end)
    os.remove(dir .. "/m/variables.safetensors")
    assert.tf_error("NotFoundError", "has 1 variables but no variables file", function()
      tf.saved_model.load(dir .. "/m")
    end)
  end)

  it("refuses a variables file from another save", function()
    local v = tf.Variable(tf.constant({5.0, 6.0}), {name = "v"})   -- other values: another file
    local f = tf.fn(function(x) return x * v end)
    f(tf.constant({1.0, 1.0}))
    tf.saved_model.save(f, dir .. "/other")
    os.execute("cp '" .. dir .. "/other/variables.safetensors' '" .. dir .. "/m/variables.safetensors'")
    assert.tf_error("DataLossError", "come from different saves", function() tf.saved_model.load(dir .. "/m") end)
  end)

  it("refuses a hostile graph that would fold a huge constant at load", function()
    local f = tf.fn(function(s) return tf.fill(s, 1.0) end)
    f:get_concrete_function(tf.TensorSpec({2}, tf.int32, "s"))
    tf.saved_model.save(f, dir .. "/fill")
    local g = slurp(dir .. "/fill/saved_model.ltf")
    -- the placeholder 's' (int32 [2]) becomes a constant [100000, 100000]
    local ph = "\1" .. string.pack("<s4", "s") .. "\2" .. string.pack("<I4i8", 1, 2)
    local i, j = g:find(ph, 1, true)
    assert.truthy(i)
    local const = "\2\0\2" .. string.pack("<I4i8I8i4i4", 1, 2, 8, 100000, 100000)
    spit(dir .. "/fill/saved_model.ltf", with_crc(g:sub(1, i - 1) .. const .. g:sub(j + 1)))
    -- the length field too: the file grew
    local b = slurp(dir .. "/fill/saved_model.ltf")
    spit(dir .. "/fill/saved_model.ltf", with_crc(b:sub(1, 16) .. string.pack("<I8", #b - 24) .. b:sub(25)))
    assert.tf_error("ResourceExhaustedError", "(fill) would make a constant of 10000000000 elements at load", function()
      tf.saved_model.load(dir .. "/fill")
    end)
  end)

  it("refuses a graph that uses an op this build lacks, naming it", function()
    local i = graph:find("reduce_sum", 1, true)
    local bytes = with_crc(graph:sub(1, i - 1) .. "reduce_zzz" .. graph:sub(i + 10))
    spit(dir .. "/m/saved_model.ltf", bytes)
    assert.tf_error("UnimplementedError", "uses op 'reduce_zzz', which this luatf", function()
      tf.saved_model.load(dir .. "/m")
    end)
  end)
end)
