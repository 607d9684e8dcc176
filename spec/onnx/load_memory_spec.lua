-- tf.onnx.load holds the weights once: the reader (core/onnx_reader.c)
-- unpacks the model's structure without the initializers' raw_data, and each
-- initializer is read from the file (or the bytes) straight into its final
-- tensor when it is taken, conv weights straight into luatf's HWIO layout.
-- Measured with the engine's own counters (tf.core.memory_stats: live and
-- peak tensor bytes) and the bytes protobuf-c held for the structure
-- (model.proto_bytes), so the figures are exact, not RSS noise. A model made
-- with python3-onnx's helper (skipped visibly without it).
local tf = require("tf")

local slurp = require("support").slurp

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return e
end

-- Conv 32 -> 64 (3x3), depthwise Conv (group 64), global pool, MatMul 64 -> 128
local PY = [[
import numpy as np, sys
from onnx import helper, TensorProto
r = np.random.RandomState(0)
def T(name, shape):
    return helper.make_tensor(name, TensorProto.FLOAT, shape, r.randn(*shape).astype(np.float32).tobytes(), raw=True)
g = helper.make_graph([
    helper.make_node("Conv", ["x", "w"], ["y1"], pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["y1", "dw"], ["y2"], pads=[1, 1, 1, 1], group=64),
    helper.make_node("GlobalAveragePool", ["y2"], ["y3"]),
    helper.make_node("Flatten", ["y3"], ["y4"]),
    helper.make_node("MatMul", ["y4", "fc"], ["y"])],
  "mem", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 32, 8, 8])],
  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 128])],
  [T("w", [64, 32, 3, 3]), T("dw", [64, 1, 3, 3]), T("fc", [64, 128])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
open(sys.argv[1], "wb").write(m.SerializeToString())
]]
local WEIGHT_BYTES = (64 * 32 * 9 + 64 * 9 + 64 * 128) * 4   -- 108800

local path
local function model_path()
  if path ~= nil then return path or nil end
  path = false
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(PY)
  f:close()
  local p = os.tmpname()
  if os.execute(("env -u LD_PRELOAD /usr/bin/python3 %s %s 2>/dev/null"):format(script, p)) then path = p end
  os.remove(script)
  return path or nil
end

local function fresh()
  collectgarbage()
  collectgarbage()
  tf.core.reset_peak_memory()
  return tf.core.memory_stats()
end

local function index_of(m)
  local ix = {}
  for _, e in ipairs(m.graph.initializers) do ix[e[1]] = e[2] end
  return ix
end

describe("tf.onnx.load's memory", function()
  teardown(function() if path then os.remove(path) end end)

  it("reads the structure without the weights, then each weight once into its tensor", function()
    local p = model_path()
    if not p then pending("no /usr/bin/python3 with onnx and numpy") return end
    for _, src in ipairs({{p, false}, {slurp(p), true}}) do
      local s0 = fresh()
      local m = tf.core.internal.onnx_read(src[1], src[2])
      -- nothing of the weights yet: no tensor bytes, and protobuf-c held only the structure
      assert.equals(s0.live_bytes, tf.core.memory_stats().live_bytes)
      assert.is_true(m.proto_bytes > 0 and m.proto_bytes < 8192, "proto_bytes " .. m.proto_bytes)
      local ix = index_of(m)
      -- a conv weight read straight into HWIO: its bytes once, no transient ONNX-layout copy
      local w = m.initializer(ix.w, "hwio")
      local s1 = tf.core.memory_stats()
      assert.equals(64 * 32 * 9 * 4, s1.live_bytes - s0.live_bytes)
      assert.equals(64 * 32 * 9 * 4, s1.peak_bytes - s0.live_bytes)
      assert.same({3, 3, 32, 64}, w.shape:as_list())
      -- the same values as the plain tensor transposed
      local plain = m.initializer(ix.w)
      assert.same({64, 32, 3, 3}, plain.shape:as_list())
      assert.same(tf.transpose(plain, {3, 4, 2, 1}):totable(), w:totable())
      -- a tensor that is not 4-d has no HWIO form: nil, and the plain one is kept by the reader
      assert.is_nil(m.initializer(ix.fc, "hwio"))
      assert.equals(m.initializer(ix.fc), m.initializer(ix.fc))
      m.close()
    end
  end)

  it("tf.onnx.load: the live and peak tensor bytes are the weights' bytes, and the result is right", function()
    local p = model_path()
    if not p then pending("no /usr/bin/python3 with onnx and numpy") return end
    local s0 = fresh()
    local f = tf.onnx.load(p)
    collectgarbage()
    local s1 = tf.core.memory_stats()
    assert.equals(WEIGHT_BYTES, s1.live_bytes - s0.live_bytes)
    assert.equals(WEIGHT_BYTES, s1.peak_bytes - s0.live_bytes)
    -- the reference: the plain weights, NCHW / OIHW arithmetic through luatf's NHWC / HWIO ops
    local m = tf.core.internal.onnx_read(p)
    local ix = index_of(m)
    local W, DW, FC = m.initializer(ix.w), m.initializer(ix.dw), m.initializer(ix.fc)
    m.close()
    local x = tf.random.normal({2, 32, 8, 8}, 0, 1, tf.float32, 5)
    local h = tf.nn.conv2d(tf.transpose(x, {1, 3, 4, 2}), tf.transpose(W, {3, 4, 2, 1}), 1, "SAME")
    h = tf.nn.depthwise_conv2d(h, tf.reshape(tf.transpose(DW, {3, 4, 2, 1}), {3, 3, 64, 1}), {1, 1, 1, 1}, "SAME")
    local want = tf.matmul(tf.reduce_mean(h, {2, 3}), FC)
    local got = f(x)
    assert.same({2, 128}, got.shape:as_list())
    assert.is_true(tf.reduce_max(tf.abs(got - want)):item() < 1e-4)
    -- from bytes the same
    assert.is_true(tf.reduce_max(tf.abs(tf.onnx.load(slurp(p), {bytes = true})(x) - want)):item() < 1e-4)
  end)

  it("refuses a file that shrank before its weights were read, and a closed reader", function()
    local p = model_path()
    if not p then pending("no /usr/bin/python3 with onnx and numpy") return end
    local bytes = slurp(p)
    local cut = os.tmpname()
    local f = assert(io.open(cut, "wb"))
    f:write(bytes)
    f:close()
    local m = tf.core.internal.onnx_read(cut)
    f = assert(io.open(cut, "wb"))   -- truncated under the reader
    f:write(bytes:sub(1, 100))
    f:close()
    local ix = index_of(m)
    for _, layout in ipairs({false, "hwio"}) do
      local e = err_of(m.initializer, ix.w, layout or nil)
      assert.equals("DataLossError", e.kind)
      assert.equals("onnx: the file became shorter while its weights were read", e.message)
    end
    m.close()
    os.remove(cut)
    local e = err_of(m.initializer, 1)
    assert.equals("FailedPreconditionError", e.kind)
    assert.equals("onnx: the model's reader is closed", e.message)
    m = tf.core.internal.onnx_read(bytes, true)
    e = err_of(m.initializer, 4)
    assert.equals("OutOfRangeError", e.kind)
    assert.equals("onnx: no such initializer", e.message)
  end)

  it("refuses bytes whose framing is broken or that hold two graphs", function()
    local p = model_path()
    if not p then pending("no /usr/bin/python3 with onnx and numpy") return end
    local bytes = slurp(p)
    for _, cut in ipairs({#bytes - 1, #bytes // 2, 40, 3}) do
      local e = err_of(tf.core.internal.onnx_read, bytes:sub(1, cut), true)
      assert.equals("InvalidArgumentError", e.kind)
      assert.equals("onnx: not a valid ONNX model (the protobuf does not parse)", e.message)
    end
    -- two serialized models end to end are one message with the graph field twice
    local e = err_of(tf.core.internal.onnx_read, bytes .. bytes, true)
    assert.equals("InvalidArgumentError", e.kind)
    assert.equals("onnx: not a valid ONNX model (more than one graph)", e.message)
  end)
end)
