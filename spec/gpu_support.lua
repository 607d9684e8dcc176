--- What the specs in spec/gpu/ share: "the GPU" is a real one or the
-- simulated one (LTF_GPU_SIM=1, as scripts/test.sh runs that folder a second
-- time); without one each case is pending with the reason.
local tf = require("tf")

-- The specs of this folder compare explicit placements (tf.device, x:gpu())
-- with the host: their reference values are computed on host tensors with
-- no scope. Their cases run with TensorFlow 2's default placement off
-- (luatf's internal switch: ops with no scope stay with their inputs,
-- tf.constant on the host), set around each case by make_it and restored
-- after it, so the other spec files of a busted run keep the default;
-- spec/gpu/default_placement*_spec.lua turn it on (M.default_placement).
-- Tensors a file makes outside its cases follow the default: make them in
-- the cases, or on the host explicitly.
local default_for_cases = false

local M = {
  GPU = "/job:localhost/replica:0/task:0/device:GPU:0",
  CPU = "/job:localhost/replica:0/task:0/device:CPU:0",
  have_gpu = #tf.config.list_physical_devices("GPU") > 0,
}

--- An it(name, fn) that makes the case pending when there is no GPU; takes
-- busted's `it` and a function calling its `pending` (they live in the spec
-- file's environment, and `pending` there changes once a case runs).
function M.make_it(it, pending)
  return function(name, fn)
    it(name, function()
      if not M.have_gpu then
        pending("no GPU: tf.config.list_physical_devices('GPU') is empty (scripts/test.sh runs these with LTF_GPU_SIM=1)")
        return
      end
      local saved = tf.core.placement("default")
      tf.core.set_placement("default", default_for_cases)
      local ok, err = pcall(fn)
      tf.core.set_placement("default", saved)
      if not ok then error(err, 0) end
    end)
  end
end

local assert = require("luassert")
local F32, F64, U8, B = tf.float32, tf.float64, tf.uint8, tf.bool
local I32, I64 = tf.int32, tf.int64

-- Deterministic values of 'shape' for 'dtype': small mixed-sign numbers
-- (uint8 non-negative, bool a pattern); 'kind' "pos" keeps them > 0.
function M.values(shape, dtype, kind, seed)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local flat = {}
  seed = seed or 0
  for i = 1, n do
    local k = (i * 7 + seed * 5) % 13
    local v
    if dtype == B then v = k % 3 == 0
    elseif dtype == U8 then v = k
    elseif dtype == I32 or dtype == I64 then v = kind == "pos" and k + 1 or k - 6
    else v = kind == "pos" and (k + 1) * 0.37 or (k - 6) * 0.37 + 0.05 end
    flat[i] = v
  end
  local pos = 0
  local function build(level)
    if level > #shape then
      pos = pos + 1
      return flat[pos]
    end
    local t = {}
    for i = 1, shape[level] do t[i] = build(level + 1) end
    return t
  end
  return tf.constant(build(1), dtype)
end

function M.flatten(t, out)
  out = out or {}
  if type(t) ~= "table" then
    out[#out + 1] = t
    return out
  end
  for _, v in ipairs(t) do M.flatten(v, out) end
  return out
end

function M.same_value(a, b, rtol, atol)
  if type(a) ~= "number" or type(b) ~= "number" then return a == b end
  if a ~= a or b ~= b then return a ~= a and b ~= b end
  if a == b then return true end
  if math.type(a) == "integer" and math.type(b) == "integer" then return false end
  return math.abs(a - b) <= atol + rtol * math.abs(b)
end

function M.tolerances(dtype, loose)
  if dtype == F32 then return 1e-5, loose and 1e-4 or 1e-6 end
  if dtype == F64 then return 1e-12, loose and 1e-10 or 1e-12 end
  -- float16/bfloat16: one step of the dtype (2^-10, 2^-7): the float32
  -- values both sides round may differ by an ulp (libm vs the CPU's exp)
  if dtype == tf.float16 then return 2 ^ -10, loose and 1e-3 or 1e-7 end
  if dtype == tf.bfloat16 then return 2 ^ -7, loose and 1e-2 or 1e-7 end
  return 0, 0
end

-- Run f on host inputs and on their GPU copies; compare every output.
function M.compare(label, f, inputs, loose)
  local cpu = table.pack(f(table.unpack(inputs)))
  local ginputs = {}
  for i, x in ipairs(inputs) do ginputs[i] = x:gpu() end
  local gpu = tf.device("/gpu:0", function() return table.pack(f(table.unpack(ginputs))) end)
  assert.equal(cpu.n, gpu.n)
  for k = 1, cpu.n do
    local c, g = cpu[k], gpu[k]
    assert.equal(M.GPU, g.device, label .. ": output " .. k .. " is not on the GPU")
    assert.equal(c.dtype, g.dtype, label)
    assert.same(c.shape:as_list(), g.shape:as_list(), label)
    local rtol, atol = M.tolerances(c.dtype, loose)
    local cv, gv = M.flatten(c:totable()), M.flatten(g:totable())
    assert.equal(#cv, #gv, label)
    for i = 1, #cv do
      if not M.same_value(gv[i], cv[i], rtol, atol) then
        error(("%s: element %d: GPU %s, CPU %s (rtol %g, atol %g)"):format(label, i, tostring(gv[i]),
              tostring(cv[i]), rtol, atol), 0)
      end
    end
  end
end

-- The op ran its device kernel at least 'at_least' times since the last
-- reset of the kernel stats, never emulated or on the host.
function M.ran_on_device(op, at_least)
  local s = tf.config.experimental.get_device_kernel_stats()[op]
  assert.is_table(s, op .. " did not run on the GPU")
  assert.is_true(s.device >= at_least, ("%s: %d device kernel runs, %d emulated, %d on the host")
                 :format(op, s.device, s.emulated, s.host))
  assert.equal(0, s.emulated, op .. " ran its CPU kernel on the device (emulated)")
  assert.equal(0, s.host, op .. " fell back to the host")
end

-- f(x, ...) -> the gradient of forward(x, ...) with respect to x, by a tape.
function M.grad_of(forward)
  return function(x, ...)
    local extra = table.pack(...)
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return forward(x, table.unpack(extra, 1, extra.n)) end)
    return tape:gradient(y, x)
  end
end

--- Runs the cases of the calling describe block with the default placement
-- on (before_each / after_each: busted's, passed in).
function M.default_placement(before_each, after_each)
  before_each(function() default_for_cases = true end)
  after_each(function() default_for_cases = false end)
end

--- A child lua5.4 running 'code' (LUA_PATH/CPATH inherited) with 'env'
-- ("VAR=value ..." prefixed to the command) -> its stdout and stderr
-- together, whether it exited 0.
function M.run_child(code, env)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local p = io.popen(("%s lua5.4 %s 2>&1"):format(env or "", path))
  local out = p:read("a")
  local ok, _, rc = p:close()
  os.remove(path)
  return out, ok and rc == 0
end

return M
