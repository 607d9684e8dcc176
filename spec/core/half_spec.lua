-- float16 and bfloat16 (docs/tensors.md, "float16 and bfloat16"): values,
-- conversions, the CPU's rule (ops compute on float32 copies, results are
-- rounded once to the half dtype), gradients, variables, checkpoints and
-- the errors. Expected values are worked by hand or were computed outside
-- luatf with Python (struct's 'e' format for float16; bfloat16 as float32
-- rounded to its top 16 bits, ties to even), as noted.
local tf = require("tf")

local F16, BF16 = tf.float16, tf.bfloat16

describe("tf.float16 and tf.bfloat16", function()
  it("are floating dtypes of 2 bytes with their ranges", function()
    assert.equal("float16", F16.name)
    assert.equal("bfloat16", BF16.name)
    assert.equal(F16, tf.half)
    assert.equal(F16, tf.dtypes.float16)
    assert.equal(BF16, tf.as_dtype("bfloat16"))
    assert.equal(F16, tf.as_dtype("float16"))
    for _, dt in ipairs({F16, BF16}) do
      assert.is_true(dt.is_floating)
      assert.is_true(dt.is_numeric)
      assert.is_false(dt.is_integer)
      assert.equal(2, dt.size)
    end
    assert.equal(65504, F16.max)
    assert.equal(-65504, F16.min)
    assert.equal(3.3895313892515355e38, BF16.max)   -- (2 - 2^-7) * 2^127
    assert.equal("<dtype: 'float16'>", tostring(F16))
    -- after resource in the enum: the older dtypes keep their numbers
    assert.equal(8, F16.enum)
    assert.equal(9, BF16.enum)
    assert.equal(0, tf.float32.enum)
  end)
end)

describe("tf.constant with a half dtype", function()
  it("rounds to the nearest float16, ties to even", function()
    assert.equal(0.333251953125, tf.constant(1 / 3, F16):item())   -- 0x3555
    assert.equal(65504, tf.constant(65504, F16):item())
    assert.equal(65504, tf.constant(65519.99, F16):item())
    assert.equal(math.huge, tf.constant(65520, F16):item())       -- halfway to 2^16: infinity
    assert.equal(-math.huge, tf.constant(-1e6, F16):item())
    assert.equal(2 ^ -24, tf.constant(2 ^ -24, F16):item())        -- the smallest subnormal
    assert.equal(0, tf.constant(2 ^ -25, F16):item())              -- halfway to 0: even
    assert.equal(2 ^ -24, tf.constant(3 * 2 ^ -26, F16):item())
    assert.same({2048, 2052, 2052}, tf.constant({2049, 2051, 2053}, F16):totable())
  end)
  it("rounds to the nearest bfloat16 (8 significant bits)", function()
    assert.equal(0.333984375, tf.constant(1 / 3, BF16):item())     -- 0x3eab
    assert.same({256, 260, 1000}, tf.constant({257, 259, 1001}, BF16):totable())
    assert.equal(math.huge, tf.constant(3.4e38, BF16):item())
    assert.is_true(tf.constant(1e-40, BF16):item() > 0)           -- float32's subnormals
  end)
  it("keeps NaN, infinities and the sign of zero", function()
    for _, dt in ipairs({F16, BF16}) do
      local v = tf.constant({0 / 0, math.huge, -math.huge, -0.0}, dt):totable()
      assert.is_true(v[1] ~= v[1])
      assert.equal(math.huge, v[2])
      assert.equal(-math.huge, v[3])
      assert.equal(-math.huge, 1 / v[4])
    end
  end)
  it("reads back as Lua floats (totable, item) and prints NumPy's digits", function()
    local x = tf.constant({0.5, 1 / 3, -2.5}, F16)
    assert.equal(F16, x.dtype)
    assert.equal("float", math.type(x:totable()[2]))
    assert.equal("float", math.type(tf.constant(1, BF16):item()))
    assert.equal("tf.Tensor([ 0.5     0.3333 -2.5   ], shape=(3,), dtype=float16)", tostring(x))
    assert.equal("tf.Tensor(0.334, shape=(), dtype=bfloat16)", tostring(tf.constant(1 / 3, BF16)))
    assert.equal("tf.Tensor(-inf, shape=(), dtype=float16)", tostring(tf.constant(-1 / 0, F16)))
  end)
end)

describe("tf.cast with float16 and bfloat16", function()
  it("rounds to nearest even from float32, float64 and the integers", function()
    assert.same({2048, 2052, math.huge, -math.huge}, tf.cast(tf.constant({2049, 2051, 1e5, -7e4}), F16):totable())
    assert.same({0.333251953125}, tf.cast(tf.constant({1 / 3}, tf.float64), F16):totable())
    assert.same({0.333984375}, tf.cast(tf.constant({1 / 3}, tf.float64), BF16):totable())
    assert.same({65504, 2048}, tf.cast(tf.constant({65519, 2049}, tf.int32), F16):totable())
    assert.same({256, 70144}, tf.cast(tf.constant({257, 70000}, tf.int64), BF16):totable())   -- steps of 512 there
    assert.equal(math.huge, tf.cast(tf.constant(70000, tf.int64), F16):item())
    assert.same({1, 0, 1}, tf.cast(tf.constant({true, false, true}), F16):totable())
    assert.same({255, 7}, tf.cast(tf.constant({255, 7}, tf.uint8), BF16):totable())
  end)
  it("converts back to every numeric dtype as float32 would", function()
    local x = tf.constant({1.5, -2.75, 300.5, 0 / 0}, F16)
    assert.same({1, -2, 300, 0}, tf.cast(x, tf.int32):totable())        -- truncation; NaN gives 0
    assert.same({1, -2, 300, 0}, tf.cast(x, tf.int64):totable())
    assert.same({1, 0, 255, 0}, tf.cast(x, tf.uint8):totable())         -- saturation
    assert.same({true, true, true, true}, tf.cast(x, tf.bool):totable())
    local f = tf.cast(x, tf.float32):totable()
    assert.same({1.5, -2.75, 300.5}, {f[1], f[2], f[3]})
    assert.is_true(f[4] ~= f[4])
    assert.same({1.5, -2.75, 300.5}, {table.unpack(tf.cast(x, tf.float64):totable(), 1, 3)})
  end)
  it("converts between the two half dtypes", function()
    assert.equal(0.333984375, tf.cast(tf.constant(1 / 3, F16), BF16):item())   -- 0.333251953125 rounded again
    assert.equal(math.huge, tf.cast(tf.constant(1e5, BF16), F16):item())
    assert.equal(1.5, tf.cast(tf.cast(tf.constant(1.5, F16), BF16), F16):item())
  end)
end)

describe("ops on float16 and bfloat16 (the CPU computes in float32)", function()
  it("round each result once", function()
    -- float32 2049 rounds to 2048 in float16; 2051 is halfway: even 2052
    assert.equal(2048, (tf.constant(2048, F16) + 1):item())
    assert.equal(2052, (tf.constant(2048, F16) + 3):item())
    assert.equal(256, (tf.constant(256, BF16) + 1):item())
    assert.equal(0.333251953125, (tf.constant(1, F16) / tf.constant(3, F16)):item())
    assert.equal(math.huge, (tf.constant(60000, F16) * 2):item())
    assert.equal(F16, tf.sqrt(tf.constant({4}, F16)).dtype)
    assert.same({2, 3}, tf.sqrt(tf.constant({4, 9}, F16)):totable())
    assert.same({0.5}, tf.sigmoid(tf.constant({0}, BF16)):totable())
  end)
  it("accumulate sums in float32 (reductions, matmul)", function()
    -- a float16 running sum would stay at 2048 (2048 + 1 rounds back)
    assert.equal(2052, tf.reduce_sum(tf.constant({2048, 1, 1, 1, 1}, F16)):item())
    assert.equal(260, tf.reduce_sum(tf.constant({256, 1, 1, 1, 1}, BF16)):item())
    assert.equal(1004, tf.matmul(tf.constant({{1000, 1, 1, 1, 1}}, BF16), tf.ones({5, 1}, BF16)):item())
    local m = tf.matmul(tf.constant({{1, 2}, {3, 4}}, F16), tf.constant({{5, 6}, {7, 8}}, F16))
    assert.equal(F16, m.dtype)
    assert.same({{19, 22}, {43, 50}}, m:totable())
    assert.equal(1.5, tf.reduce_mean(tf.constant({1, 2}, F16)):item())
    assert.equal(3, tf.reduce_max(tf.constant({1, 3, 2}, BF16)):item())
  end)
  it("keep outputs of other dtypes as they are (argmax, comparisons)", function()
    local x = tf.constant({1, 5, 2}, F16)
    assert.equal(tf.int64, tf.argmax(x).dtype)
    assert.equal(2, tf.argmax(x):item())                               -- 1-based
    assert.same({true, false, false}, tf.less(x, tf.constant({2, 2, 2}, F16)):totable())
    assert.same({false, true, false}, tf.math.is_inf(tf.constant({1, 1e5, 0 / 0}, F16)):totable())
  end)
  it("run the nn ops", function()
    local s = tf.nn.softmax(tf.constant({0, 0}, F16))
    assert.equal(F16, s.dtype)
    assert.same({0.5, 0.5}, s:totable())
    local img = tf.ones({1, 4, 4, 1}, F16)
    local c = tf.nn.conv2d(img, tf.ones({2, 2, 1, 1}, F16), 1, "VALID")
    assert.equal(F16, c.dtype)
    assert.same({{{{4}, {4}, {4}}, {{4}, {4}, {4}}, {{4}, {4}, {4}}}}, c:totable())
    assert.equal(1, tf.nn.max_pool2d(img, 2, 2, "VALID"):totable()[1][1][1][1])
    local loss = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant({1}), tf.constant({{0, 0}}, BF16))
    assert.equal(BF16, loss.dtype)
    assert.equal(0.69140625, loss:item())   -- log(2) = 0.693147 in bfloat16
  end)
  it("move 2-byte elements as they are", function()
    local x = tf.constant({{1, 2, 3}, {4, 5, 6}}, F16)
    assert.same({{1, 4}, {2, 5}, {3, 6}}, tf.transpose(x):totable())
    assert.same({1, 2, 3, 4, 5, 6}, tf.reshape(x, {6}):totable())
    assert.same({{1, 2, 3, 1, 2, 3}}, tf.tile(tf.constant({{1, 2, 3}}, BF16), {1, 2}):totable())
    assert.same({3.5, 1.5}, tf.gather(tf.constant({1.5, 2.5, 3.5}, BF16), {3, 1}):totable())
    assert.same({1, 2, 3}, tf.concat({tf.constant({1}, F16), tf.constant({2, 3}, F16)}, 1):totable())
    assert.same({{0, 0, 0}, {0, 1, 2}}, tf.pad(tf.constant({{1, 2}}, F16), {{1, 0}, {1, 0}}):totable())
    assert.same({3, 2, 1}, tf.reverse(tf.constant({1, 2, 3}, BF16), {1}):totable())
    assert.same({1, 2, 3}, x[1]:totable())
    assert.same({{5, 6}}, tf.slice(x, {2, 2}, {1, 2}):totable())
  end)
  it("pass through control flow and tensor arrays", function()
    local c = tf.cond(tf.constant(false), function() return tf.constant(1.5, F16) end,
                      function() return tf.constant(2.5, F16) end)
    assert.equal(F16, c.dtype)
    assert.equal(2.5, c:item())
    local r = tf.while_loop(function(i) return i < 3 end, function(i, s) return i + 1, s * tf.constant(2048, F16) end,
                            {tf.constant(0), tf.constant(1, F16)})
    assert.equal(math.huge, r[2]:item())   -- 2048^2 overflows float16 at the second step
    local ta = tf.TensorArray{dtype = BF16, size = 2}
    ta = ta:write(2, tf.constant({1 / 3}, BF16))
    assert.same({0.333984375}, ta:read(2):totable())
    local oh = tf.one_hot({1, 3}, 3, {on_value = tf.constant(0.5, F16), off_value = tf.constant(-1, F16)})
    assert.same({{0.5, -1, -1}, {-1, -1, 0.5}}, oh:totable())
  end)
  it("run inside tf.fn (traced graphs)", function()
    local f = tf.fn(function(a, b) return tf.nn.relu(a * b + 1), tf.reduce_max(a) end, {autograph = false})
    local x = tf.constant({{1, -2}, {3, 4}}, F16)
    local y, m = f(x, x)
    assert.equal(F16, y.dtype)
    assert.same({{2, 5}, {10, 17}}, y:totable())
    assert.equal(4, m:item())
    local y2 = f(tf.constant({{2048, 0}, {0, 0}}, F16), tf.constant({{1, 0}, {0, 0}}, F16))
    assert.equal(2048, y2:totable()[1][1])   -- 2048 * 1 + 1 rounds to 2048
  end)
end)

describe("constructors with a half dtype", function()
  it("make zeros, ones, fills, ranges, eyes and random values", function()
    assert.same({0, 0}, tf.zeros({2}, BF16):totable())
    assert.equal(BF16, tf.zeros({2}, BF16).dtype)
    assert.same({1, 1, 1}, tf.ones({3}, F16):totable())
    local f = tf.fill({2}, tf.constant(0.1, F16))
    assert.equal(F16, f.dtype)
    assert.same({0.0999755859375, 0.0999755859375}, f:totable())
    assert.same({0, 1, 2, 3}, tf.range(0, 4, 1, F16):totable())
    assert.equal(F16, tf.range(tf.constant(1, F16), 3).dtype)          -- the argument's dtype (TensorFlow's order)
    assert.same({{1, 0}, {0, 1}}, tf.eye(2, {dtype = BF16}):totable())
    assert.same({1, 1}, tf.ones_like(tf.constant({3, 4}, F16)):totable())
    local r = tf.random.normal({100}, {dtype = F16, seed = 7})
    assert.equal(F16, r.dtype)
    for _, v in ipairs(r:totable()) do assert.is_true(v > -10 and v < 10) end
  end)
end)

describe("gradients of float16 and bfloat16", function()
  it("flow through the tape in the half dtype", function()
    local x = tf.constant({1, 2, 3}, F16)
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return tf.reduce_sum(x * x) end)
    local g = tape:gradient(y, x)
    assert.equal(F16, g.dtype)
    assert.same({2, 4, 6}, g:totable())
    local gs = tf.grad(function(t) return tf.reduce_sum(tf.sin(t)) end)(tf.constant({0, 1}, BF16))
    assert.equal(BF16, gs.dtype)
    assert.same({1, 0.5390625}, gs:totable())   -- cos(1) = 0.5403 in bfloat16
  end)
end)

describe("a float16 variable", function()
  it("trains with SGD, rounding after each step", function()
    -- Python: v -= float32(0.1) * 2v in float32, rounded to float16 each step
    local v = tf.Variable(tf.constant({1, -2.5}, F16))
    assert.equal(F16, v.dtype)
    local opt = tf.keras.optimizers.SGD{learning_rate = 0.1}
    local want = {{0.7998046875, -2.0}, {0.6396484375, -1.599609375}, {0.51171875, -1.279296875}}
    for step = 1, 3 do
      local tape = tf.GradientTape()
      local loss = tape:record(function() return tf.reduce_sum(v * v) end)
      opt:apply_gradients({{tape:gradient(loss, v), v}})
      assert.equal(F16, v:value().dtype)
      assert.same(want[step], v:value():totable())
    end
  end)
  it("trains as bfloat16 too, and with Adam (slots of the variable's dtype)", function()
    local v = tf.Variable(tf.constant({1, -2.5}, BF16))
    local opt = tf.keras.optimizers.SGD{learning_rate = 0.1}
    local want = {{0.80078125, -2.0}, {0.640625, -1.6015625}, {0.51171875, -1.28125}}   -- Python, as above
    for step = 1, 3 do
      local tape = tf.GradientTape()
      local loss = tape:record(function() return tf.reduce_sum(v * v) end)
      opt:apply_gradients({{tape:gradient(loss, v), v}})
      assert.same(want[step], v:value():totable())
    end
    local w = tf.Variable(tf.constant({1, 2}, F16))
    local adam = tf.keras.optimizers.Adam{learning_rate = 0.1}
    local tape = tf.GradientTape()
    local loss = tape:record(function() return tf.reduce_sum(w * w) end)
    adam:apply_gradients({{tape:gradient(loss, w), w}})
    -- Adam's first step moves each weight by the learning rate (m / sqrt(v) = sign(g))
    assert.same({0.89990234375, 1.900390625}, w:value():totable())
  end)
  it("assigns and adds in place", function()
    local v = tf.Variable(tf.constant({2048, 1}, F16))
    v:assign_add(tf.constant({1, 1}, F16))
    assert.same({2048, 2}, v:value():totable())
    v:assign(tf.constant({0.5, 0.25}, F16))
    assert.same({0.5, 0.25}, v:value():totable())
    assert.tf_error("TypeError", "assign_variable: variable 'Variable' has dtype float16, the value has dtype int32",
      function() v:assign(tf.constant({1, 2})) end)
  end)
end)

describe("checkpoints of float16 and bfloat16 variables", function()
  local dir
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
  end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("save as safetensors F16 / BF16 and restore exactly", function()
    local a = tf.Variable(tf.constant({1 / 3, -65504, 2 ^ -24}, F16))
    local b = tf.Variable(tf.constant({{1 / 3, 1e38}}, BF16))
    tf.train.Checkpoint{a = a, b = b}:write(dir .. "/ck")
    local r = tf.train.load_checkpoint(dir .. "/ck")
    local dts = r:get_variable_to_dtype_map()
    assert.equal(F16, dts["a/.ATTRIBUTES/VARIABLE_VALUE"])
    assert.equal(BF16, dts["b/.ATTRIBUTES/VARIABLE_VALUE"])
    local raw = io.open(dir .. "/ck"):read("a")
    assert.truthy(raw:find('"dtype":"F16"', 1, true))
    assert.truthy(raw:find('"dtype":"BF16"', 1, true))
    local a2 = tf.Variable(tf.zeros({3}, F16))
    local b2 = tf.Variable(tf.zeros({1, 2}, BF16))
    tf.train.Checkpoint{a = a2, b = b2}:restore(dir .. "/ck"):assert_consumed()
    assert.same({0.333251953125, -65504, 2 ^ -24}, a2:value():totable())
    assert.same({{0.333984375, 9.969209968386869e37}}, b2:value():totable())
    -- a float32 variable does not take a float16 value
    local c = tf.Variable(tf.zeros({3}))
    assert.tf_error("InvalidArgumentError", "", function() tf.train.Checkpoint{a = c}:restore(dir .. "/ck") end)
  end)
end)

describe("errors with float16 and bfloat16", function()
  it("name the op and the dtypes where a half input is refused", function()
    local h = tf.constant({1, 2}, F16)
    assert.tf_error("TypeError", "bitwise_and: 'x' has dtype float16, expected one of: int32, int64, uint8",
      tf.bitwise.bitwise_and, h, h)
    assert.tf_error("TypeError", "invert: 'x' has dtype bfloat16, expected one of: int32, int64, uint8",
      tf.bitwise.invert, tf.constant({1}, BF16))
    assert.tf_error("TypeError", "x and y must have the same dtype, got x: float16 and y: float32",
      tf.add, h, tf.constant({1, 2}, tf.float32))
    assert.tf_error("TypeError", "x and y must have the same dtype, got x: float16 and y: bfloat16",
      tf.multiply, h, tf.constant({1, 2}, BF16))
    assert.tf_error("TypeError", "cholesky: 'input' has dtype float16, expected float32 or float64",
      tf.linalg.cholesky, tf.constant({{1}}, F16))
  end)
end)
