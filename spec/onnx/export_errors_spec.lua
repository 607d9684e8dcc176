-- tf.onnx.save's refusals: an op with no ONNX form (named with its node),
-- control flow, unknown ranks, bad options. These need neither node nor
-- python: the error comes before anything is written.
local tf = require("tf")
local support = require("support")

local function save_err(f, opts, path)
  local dir = support.tmpdir()
  path = path or (dir .. "/m.onnx")
  local ok, err = pcall(tf.onnx.save, f, path, opts)
  assert.is_false(ok)
  -- nothing is left behind on failure
  assert.is_nil(io.open(dir .. "/m.onnx", "rb"))
  assert.is_nil(io.open(dir .. "/m.onnx.tmp", "rb"))
  os.execute("rm -rf " .. support.shell_quote(dir))
  return err
end

describe("tf.onnx.save: refusals", function()
  it("an op with no ONNX form, naming the op and its node", function()
    local f = tf.fn(function(x) return tf.linalg.cholesky(x) * 2 end)
    local err = save_err(f, {input_signature = {tf.TensorSpec({3, 3})}})
    assert.are.equal("UnimplementedError", err.kind)
    assert.are.equal("tf.onnx.save: op 'cholesky' (node 'cholesky') has no ONNX form", err.message)
    f = tf.fn(function(s) return tf.strings.length(s) end)
    err = save_err(f, {input_signature = {tf.TensorSpec({2}, tf.string)}})
    assert.are.equal("tf.onnx.save: op 'string_length' (node 'string_length') has no ONNX form", err.message)
  end)

  it("an op whose ONNX form does not cover these attributes or dtypes", function()
    local f = tf.fn(function(a, b) return tf.bitwise.bitwise_and(a, b) end)
    local err = save_err(f, {input_signature = {tf.TensorSpec({2}, tf.int32), tf.TensorSpec({2}, tf.int32)}})
    assert.are.equal("UnimplementedError", err.kind)
    assert.are.equal("tf.onnx.save: op 'bitwise_and' (node 'bitwise_and') has no ONNX form: bitwise ops on "
      .. "int32 need opset 18 (only uint8 is exported)", err.message)
    f = tf.fn(function(i, u) return tf.scatter_nd(i, u, {4}) end)
    err = save_err(f, {input_signature = {tf.TensorSpec({2, 1}, tf.int32), tf.TensorSpec({2})}, opset = 13})
    assert.are.equal("tf.onnx.save: op 'scatter_nd' (node 'scatter_nd') has no ONNX form: ScatterND's reduction "
      .. "needs opset 16", err.message)
    f = tf.fn(function(s) return s + s end)
    err = save_err(f, {input_signature = {tf.TensorSpec({2}, tf.string)}})
    assert.are.equal("tf.onnx.save: op 'add' (node 'add') has no ONNX form: string concatenation", err.message)
  end)

  it("bad options", function()
    local f = tf.fn(function(x) return x * 2 end)
    local sig = {tf.TensorSpec({2})}
    local err = save_err(f, {input_signature = sig, opset = 12})
    assert.are.equal("ValueError", err.kind)
    assert.are.equal("tf.onnx.save: opset 12 is not supported (13 to 17)", err.message)
    err = save_err(f, {input_signature = sig, opsett = 13})
    assert.are.equal("tf.onnx.save: unknown option 'opsett'", err.message)
    err = save_err(f, {input_signature = sig}, 42)
    assert.are.equal("TypeError", err.kind)
    assert.are.equal("tf.onnx.save: path must be a string, got number", err.message)
    err = save_err(42, {input_signature = sig})
    assert.are.equal("tf.onnx.save: expected a tf.fn, a concrete function, a Keras model or a Lua function, got number",
      err.message)
    err = save_err(f, {input_signature = sig, input_names = 5})
    assert.are.equal("tf.onnx.save: input_names must be a list of strings, got number", err.message)
    err = save_err(f, {input_signature = sig, output_names = {1}})
    assert.are.equal("tf.onnx.save: output_names must be a list of non-empty strings", err.message)
    err = save_err(f, {input_signature = sig, doc_string = {}})
    assert.are.equal("tf.onnx.save: doc_string must be a string, got table", err.message)
    local two = tf.fn(function(a, b) return a + b end)
    err = save_err(two, {input_signature = {tf.TensorSpec({2}), tf.TensorSpec({2})}, input_names = {"p", "p"}})
    assert.are.equal("tf.onnx.save: input name 'p' is used twice", err.message)
    err = save_err(f, {input_signature = sig, output_names = {"x"}})
    assert.are.equal("tf.onnx.save: output name 'x' is used already", err.message)
    local cf = f:get_concrete_function(tf.TensorSpec({2}))
    err = save_err(cf, {input_signature = sig})
    assert.are.equal("tf.onnx.save: input_signature is given, but a concrete function has its own", err.message)
  end)

  it("a loop variable of unknown rank", function()
    local f = tf.fn(function(x)
      return tf.while_loop(function(v) return tf.reduce_sum(v) < 10 end, function(v) return tf.concat({v, v}, 1) end,
        {x}, {shape_invariants = {tf.TensorShape(nil)}})[1]
    end)
    local err = save_err(f, {input_signature = {tf.TensorSpec({2})}})
    assert.are.equal("UnimplementedError", err.kind)
    assert.are.equal("tf.onnx.save: op 'while' (node 'while') has no ONNX form: loop variable 1 has an unknown rank",
      err.message)
  end)

  it("a function without tensor outputs", function()
    local err = save_err(function() return 1 end, {})
    assert.are.equal("ValueError", err.kind)
    assert.are.equal("tf.onnx.save: the function returns no tensor: an ONNX model needs at least one output",
      err.message)
  end)

  it("a path that cannot be written", function()
    local f = tf.fn(function(x) return x * 2 end)
    local ok, err = pcall(tf.onnx.save, f, "/nonexistent-dir/m.onnx", {input_signature = {tf.TensorSpec({2})}})
    assert.is_false(ok)
    assert.are.equal("NotFoundError", err.kind)
    assert.matches("^tf.onnx.save: cannot write '/nonexistent%-dir/m.onnx': ", err.message)
  end)

  it("the bytes are returned (and nothing written) when path is nil", function()
    local f = tf.fn(function(x) return x * 2 end)
    local bytes = tf.onnx.save(f, nil, {input_signature = {tf.TensorSpec({2})}})
    assert.are.equal("string", type(bytes))
    assert.is_true(#bytes > 20)
    assert.truthy(bytes:find("luatf", 1, true))   -- producer_name
  end)
end)
