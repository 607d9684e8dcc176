-- tf.print(v1, ..., {output_stream=, summarize=, sep=, end_=}): TensorFlow's
-- signature (defaults: sys.stderr, summarize 3, sep " ", end "\n")
local tf = require("tf")

local q = require("support").shell_quote

-- stdout and stderr of a Lua snippet run with tf loaded
local function run(code)
  local out, err = os.tmpname(), os.tmpname()
  local cmd = string.format("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s lua5.4 -e %s >%s 2>%s", q(package.path),
    q(package.cpath), q("local tf = require('tf') " .. code), out, err)
  assert(os.execute(cmd))
  local function slurp(p) local f = io.open(p, "rb"); local s = f:read("a"); f:close(); os.remove(p); return s end
  return slurp(out), slurp(err)
end

-- what tf.print writes to a Lua file handle
local function printed(...)
  local f = io.tmpfile()
  local args = table.pack(...)
  local o = args[args.n]
  o.output_stream = f
  tf.print(table.unpack(args, 1, args.n))
  f:seek("set")
  local s = f:read("a")
  f:close()
  return s
end

describe("tf.print", function()
  it("writes to stderr by default, ending the line", function()
    local out, err = run("tf.print('loss', tf.constant(0.5))")
    assert.equal("", out)
    assert.equal("loss 0.5\n", err)
  end)

  it("writes to io.stdout when asked", function()
    local out, err = run("tf.print(tf.constant({1, 2}), {output_stream = io.stdout})")
    assert.equal("[1 2]\n", out)
    assert.equal("", err)
  end)

  it("shows the first and last 'summarize' elements of each longer dimension (default 3, -1: all)", function()
    local r = tf.range(0, 10)
    assert.equal("[0 1 2 ... 7 8 9]\n", printed(r, {}))
    assert.equal("[0 ... 9]\n", printed(r, {summarize = 1}))
    assert.equal("[0 1 2 3 4 5 6 7 8 9]\n", printed(r, {summarize = -1}))
    assert.equal("[0 1 2 3 4 5]\n", printed(tf.range(0, 6), {}))
    assert.equal("[[ 0 ...  7]\n ...\n [56 ... 63]]\n", printed(tf.reshape(tf.range(0, 64), {8, 8}), {summarize = 1}))
  end)

  it("takes sep and end (end_ or [\"end\"])", function()
    assert.equal("a, 1, true!", printed("a", 1, true, {sep = ", ", end_ = "!"}))
    assert.equal("x|y\n\n", printed("x", "y", {sep = "|", ["end"] = "\n\n"}))
  end)

  it("sends the text without 'end' to a function, and appends to a file:// path", function()
    local got = {}
    tf.print("step", tf.constant(3), {output_stream = function(text) got[#got + 1] = text end})
    assert.same({"step 3"}, got)
    local path = os.tmpname()
    tf.print("one", {output_stream = "file://" .. path})
    tf.print("two", {output_stream = "file://" .. path, end_ = ";"})
    local f = io.open(path); local s = f:read("a"); f:close(); os.remove(path)
    assert.equal("one\ntwo;", s)
  end)

  it("keeps its options in a traced function, printing at every call", function()
    local got = {}
    local f = tf.fn(function(x)
      tf.print("x =", x, {output_stream = function(text) got[#got + 1] = text end, summarize = 1})
      return x + 1
    end)
    f(tf.constant({1, 2, 3}))
    f(tf.constant({4, 5, 6}))
    assert.same({"x = [1 ... 3]", "x = [4 ... 6]"}, got)
    assert.equal(1, f:tracing_count())
  end)

  it("refuses bad options", function()
    assert.tf_error("TypeError", "print: unknown keyword 'stream' (accepted: output_stream, summarize, sep, end_, name)",
      tf.print, 1, {stream = io.stdout})
    assert.tf_error("ValueError", "print: 'summarize' expected an integer >= -1 (-1: every element), got -2",
      tf.print, 1, {summarize = -2})
    assert.tf_error("TypeError", "print: 'output_stream' expected io.stdout, io.stderr, an open file, a function " ..
      "or a 'file://path' string, got 'stdout'", tf.print, 1, {output_stream = "stdout"})
    assert.tf_error("TypeError", "print: 'sep' expected a string, got number", tf.print, 1, {sep = 1})
    assert.tf_error("InvalidArgumentError", "print: 'sep' and 'end' are too long (at most 62 bytes together)",
      tf.print, 1, {sep = string.rep("-", 40), end_ = string.rep("=", 30)})
  end)
end)
