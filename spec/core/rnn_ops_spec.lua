-- The fused recurrent ops tf.nn.lstm_sequence / tf.nn.gru_sequence: values
-- against the step-by-step float64 reference in plain Lua
-- (spec/rnn_reference.lua), masks, go_backwards, one node inside tf.fn,
-- errors. Gradients of every input: spec/gradcheck/rnn_cases.lua (run by
-- spec/core/gradient_check_spec.lua) and the float32 check below.
local tf = require("tf")
local support = require("support")
local R = require("rnn_reference")

local B, T, I, U = 2, 4, 3, 3

local function problem(seed, gates, gru_bias_rows)
  local rnd = support.lcg(seed)
  local p = {
    x = R.fill(rnd, {B, T, I}), h0 = R.fill(rnd, {B, U}, 0.5), c0 = R.fill(rnd, {B, U}, 0.5),
    K = R.fill(rnd, {I, gates * U}, 0.7), RK = R.fill(rnd, {U, gates * U}, 0.7),
  }
  if gru_bias_rows then p.bias = R.fill(rnd, {gru_bias_rows, gates * U}, 0.3)
  else p.bias = R.fill(rnd, {gates * U}, 0.3) end
  return p
end

local function c(v, dt) return tf.constant(v, dt or tf.float64) end
local mask_tbl = {{true, false, true, true}, {false, false, true, false}}

describe("tf.nn.lstm_sequence", function()
  local p = problem(7, 4)
  local function run(opts, dt)
    local o = opts and {mask = opts.mask and tf.constant(opts.mask), go_backwards = opts.go_backwards,
                        zero_output_for_mask = opts.zero_output_for_mask}
    return tf.nn.lstm_sequence(c(p.x, dt), c(p.h0, dt), c(p.c0, dt), c(p.K, dt), c(p.RK, dt), c(p.bias, dt), o)
  end

  for _, case in ipairs({
    {"plain", nil}, {"go_backwards", {go_backwards = true}}, {"a mask", {mask = mask_tbl}},
    {"a mask and go_backwards", {mask = mask_tbl, go_backwards = true}},
    {"a mask and zero_output_for_mask", {mask = mask_tbl, zero_output_for_mask = true}},
  }) do
    it("matches the float64 step-by-step reference with " .. case[1], function()
      local y, h, cc = run(case[2])
      local ry, rh, rc = R.lstm(p.x, p.h0, p.c0, p.K, p.RK, p.bias, case[2])
      assert.shape({B, T, U}, y)
      assert.tensor_near(ry, y, {atol = 1e-12, rtol = 1e-12})
      assert.tensor_near(rh, h, {atol = 1e-12, rtol = 1e-12})
      assert.tensor_near(rc, cc, {atol = 1e-12, rtol = 1e-12})
    end)
  end

  it("masked steps carry the states: an all-false mask returns h0 and c0 and zero outputs", function()
    local none = {{false, false, false, false}, {false, false, false, false}}
    local y, h, cc = run({mask = none})
    assert.tensor_near(p.h0, h, {atol = 0})
    assert.tensor_near(p.c0, cc, {atol = 0})
    assert.tensor_near(tf.zeros({B, T, U}, tf.float64), y, {atol = 0})
  end)

  it("computes in float32 close to the float64 reference", function()
    local y, h = run({mask = mask_tbl}, tf.float32)
    assert.equal(tf.float32, y.dtype)
    local ry, rh = R.lstm(p.x, p.h0, p.c0, p.K, p.RK, p.bias, {mask = mask_tbl})
    assert.tensor_near(ry, y, {atol = 1e-5})
    assert.tensor_near(rh, h, {atol = 1e-5})
  end)

  it("has float32 gradients equal to the float64 ones", function()
    local function grads(dt)
      local ins = {c(p.x, dt), c(p.h0, dt), c(p.c0, dt), c(p.K, dt), c(p.RK, dt), c(p.bias, dt)}
      local tape = tf.GradientTape()
      for _, v in ipairs(ins) do tape:watch(v) end
      local loss = tape:record(function()
        local y, h, cc = tf.nn.lstm_sequence(ins[1], ins[2], ins[3], ins[4], ins[5], ins[6],
                                             {mask = tf.constant(mask_tbl)})
        return tf.reduce_sum(y * y) + tf.reduce_sum(h * 2) + tf.reduce_sum(cc * cc * 0.5)
      end)
      return tape:gradient(loss, ins)
    end
    local g64, g32 = grads(tf.float64), grads(tf.float32)
    for k = 1, 6 do assert.tensor_near(g64[k], g32[k], {atol = 1e-5, rtol = 1e-4}) end
  end)

  it("gives the same gradient for one input as when all are asked for (the others are skipped)", function()
    local ins = {c(p.x), c(p.h0), c(p.c0), c(p.K), c(p.RK), c(p.bias)}
    local function grad(wrt)
      local tape = tf.GradientTape()
      for _, k in ipairs(wrt) do tape:watch(ins[k]) end
      local loss = tape:record(function()
        local y = tf.nn.lstm_sequence(ins[1], ins[2], ins[3], ins[4], ins[5], ins[6])
        return tf.reduce_sum(y * y)
      end)
      local src = {}
      for i, k in ipairs(wrt) do src[i] = ins[k] end
      return tape:gradient(loss, src)
    end
    local all = grad({1, 2, 3, 4, 5, 6})
    for k = 1, 6 do assert.tensor_near(all[k], grad({k})[1], {atol = 1e-14}) end
    local gx = grad({1, 4})
    assert.tensor_near(all[1], gx[1], {atol = 1e-14})
    assert.tensor_near(all[4], gx[2], {atol = 1e-14})
    local gg = {c(p.x), c(p.h0), c(R.fill(support.lcg(5), {I, 3 * U})), c(R.fill(support.lcg(6), {U, 3 * U})),
                c(R.fill(support.lcg(7), {2, 3 * U}))}
    local function ggrad(wrt)
      local tape = tf.GradientTape()
      for _, k in ipairs(wrt) do tape:watch(gg[k]) end
      local loss = tape:record(function() return tf.reduce_sum((tf.nn.gru_sequence(table.unpack(gg)))) end)
      local src = {}
      for i, k in ipairs(wrt) do src[i] = gg[k] end
      return tape:gradient(loss, src)
    end
    local gall = ggrad({1, 2, 3, 4, 5})
    for k = 1, 5 do assert.tensor_near(gall[k], ggrad({k})[1], {atol = 1e-14}) end
  end)

  it("is one node inside tf.fn, and its gradient one node too", function()
    local f = tf.fn(function(x, h0, c0, k, rk, b)
      local y = tf.nn.lstm_sequence(x, h0, c0, k, rk, b)
      return y
    end)
    local args = {c(p.x, tf.float32), c(p.h0, tf.float32), c(p.c0, tf.float32), c(p.K, tf.float32),
                  c(p.RK, tf.float32), c(p.bias, tf.float32)}
    local ry = R.lstm(p.x, p.h0, p.c0, p.K, p.RK, p.bias)
    assert.tensor_near(ry, f(table.unpack(args)), {atol = 1e-5})
    local count = {}
    for _, n in ipairs(f:get_concrete_function(table.unpack(args)).graph:nodes()) do
      count[n.op] = (count[n.op] or 0) + 1
    end
    assert.equal(1, count.lstm_sequence)
    assert.is_nil(count.matmul)
    local g = tf.fn(function(x, h0, c0, k, rk, b)
      local tape = tf.GradientTape()
      tape:watch(k)
      local loss = tape:record(function() return tf.reduce_sum((tf.nn.lstm_sequence(x, h0, c0, k, rk, b))) end)
      return tape:gradient(loss, k)
    end)
    local gk = g(table.unpack(args))
    assert.shape({I, 4 * U}, gk)
    count = {}
    for _, n in ipairs(g:get_concrete_function(table.unpack(args)).graph:nodes()) do
      count[n.op] = (count[n.op] or 0) + 1
    end
    assert.equal(1, count.lstm_sequence_grad)
  end)

  it("takes sequences of length 0 (states unchanged)", function()
    local y, h = tf.nn.lstm_sequence(tf.zeros({2, 0, 3}), tf.ones({2, 4}), tf.ones({2, 4}), tf.zeros({3, 16}),
                                     tf.zeros({4, 16}), tf.zeros({16}))
    assert.shape({2, 0, 4}, y)
    assert.tensor_near(tf.ones({2, 4}), h, {atol = 0})
  end)

  it("names the op, the argument and the shapes in its errors", function()
    local x, h0 = tf.zeros({2, 5, 3}), tf.zeros({2, 4})
    local k, rk, b = tf.zeros({3, 16}), tf.zeros({4, 16}), tf.zeros({16})
    assert.tf_error("InvalidArgumentError",
      "lstm_sequence: 'kernel' must have shape (3, 16), got (3, 12) (x is (2, 5, 3), units 4)",
      tf.nn.lstm_sequence, x, h0, h0, tf.zeros({3, 12}), rk, b)
    assert.tf_error("InvalidArgumentError", "lstm_sequence: 'recurrent_kernel' must have shape (4, 16), got (4, 12)",
      tf.nn.lstm_sequence, x, h0, h0, k, tf.zeros({4, 12}), b)
    assert.tf_error("InvalidArgumentError", "lstm_sequence: 'c0' must have shape (2, 4), got (3, 4)",
      tf.nn.lstm_sequence, x, h0, tf.zeros({3, 4}), k, rk, b)
    assert.tf_error("InvalidArgumentError", "lstm_sequence: 'bias' must have shape (16,), got (12,)",
      tf.nn.lstm_sequence, x, h0, h0, k, rk, tf.zeros({12}))
    assert.tf_error("InvalidArgumentError", "lstm_sequence: 'x' must have shape (2, None, 3), got (2, 5)",
      tf.nn.lstm_sequence, tf.zeros({2, 5}), h0, h0, k, rk, b)
    assert.tf_error("InvalidArgumentError", "lstm_sequence: 'mask' must have shape (2, 5), got (2, 4)",
      tf.nn.lstm_sequence, x, h0, h0, k, rk, b, {mask = tf.ones({2, 4}, tf.bool)})
    assert.tf_error("TypeError", "lstm_sequence: 'mask' has dtype float32, expected bool",
      tf.nn.lstm_sequence, x, h0, h0, k, rk, b, {mask = tf.ones({2, 5})})
    assert.tf_error("TypeError", "lstm_sequence: 'kernel' has dtype float64, expected float32 (the dtype of 'x')",
      tf.nn.lstm_sequence, x, h0, h0, tf.zeros({3, 16}, tf.float64), rk, b)
    assert.tf_error("TypeError", "lstm_sequence: 'x' has dtype int32, expected one of: float32, float64",
      tf.nn.lstm_sequence, tf.zeros({2, 5, 3}, tf.int32), h0, h0, k, rk, b)
    assert.tf_error("TypeError", "lstm_sequence: argument 6 ('bias') expected tensor",
      tf.nn.lstm_sequence, x, h0, h0, k, rk)
    assert.tf_error("TypeError", "lstm_sequence: unknown option 'masks' (accepted: mask, go_backwards, zero_output_for_mask, name)",
      tf.nn.lstm_sequence, x, h0, h0, k, rk, b, {masks = 1})
  end)
end)

describe("tf.nn.gru_sequence", function()
  for _, ra in ipairs({true, false}) do
    local p = problem(11, 3, ra and 2 or nil)
    local function run(opts, dt)
      local o = {mask = opts and opts.mask and tf.constant(opts.mask), go_backwards = opts and opts.go_backwards,
                 zero_output_for_mask = opts and opts.zero_output_for_mask, reset_after = ra}
      return tf.nn.gru_sequence(c(p.x, dt), c(p.h0, dt), c(p.K, dt), c(p.RK, dt), c(p.bias, dt), o)
    end
    for _, case in ipairs({
      {"plain", {}}, {"go_backwards", {go_backwards = true}}, {"a mask", {mask = mask_tbl}},
      {"a mask and go_backwards", {mask = mask_tbl, go_backwards = true}},
      {"zero_output_for_mask", {mask = mask_tbl, zero_output_for_mask = true}},
    }) do
      it(("matches the float64 reference (reset_after = %s) with %s"):format(ra, case[1]), function()
        local y, h = run(case[2])
        case[2].reset_after = ra
        local ry, rh = R.gru(p.x, p.h0, p.K, p.RK, p.bias, case[2])
        assert.tensor_near(ry, y, {atol = 1e-12, rtol = 1e-12})
        assert.tensor_near(rh, h, {atol = 1e-12, rtol = 1e-12})
      end)
    end
    it(("computes in float32 (reset_after = %s)"):format(ra), function()
      local y = run({mask = mask_tbl}, tf.float32)
      local ry = R.gru(p.x, p.h0, p.K, p.RK, p.bias, {mask = mask_tbl, reset_after = ra})
      assert.tensor_near(ry, y, {atol = 1e-5})
    end)
  end

  it("defaults to reset_after = true and checks the bias layout of each form", function()
    local x, h0, k, rk = tf.zeros({2, 5, 3}), tf.zeros({2, 4}), tf.zeros({3, 12}), tf.zeros({4, 12})
    local y = tf.nn.gru_sequence(x, h0, k, rk, tf.zeros({2, 12}))
    assert.shape({2, 5, 4}, y)
    assert.tf_error("InvalidArgumentError", "gru_sequence: 'bias' must have shape (2, 12), got (12,)",
      tf.nn.gru_sequence, x, h0, k, rk, tf.zeros({12}))
    assert.tf_error("InvalidArgumentError", "gru_sequence: 'bias' must have shape (12,), got (2, 12)",
      tf.nn.gru_sequence, x, h0, k, rk, tf.zeros({2, 12}), {reset_after = false})
    assert.tf_error("InvalidArgumentError", "gru_sequence: 'kernel' must have shape (3, 12), got (3, 16)",
      tf.nn.gru_sequence, x, h0, tf.zeros({3, 16}), rk, tf.zeros({2, 12}))
    assert.tf_error("TypeError", "gru_sequence: option 'reset_after' expected boolean, got number",
      tf.nn.gru_sequence, x, h0, k, rk, tf.zeros({2, 12}), {reset_after = 1})
  end)

  it("is one node inside tf.fn", function()
    local f = tf.fn(function(x, h0, k, rk, b)
      local y, h = tf.nn.gru_sequence(x, h0, k, rk, b)
      return h
    end)
    local args = {tf.ones({2, 5, 3}), tf.zeros({2, 4}), tf.ones({3, 12}) * 0.1, tf.ones({4, 12}) * 0.1,
                  tf.zeros({2, 12})}
    assert.shape({2, 4}, f(table.unpack(args)))
    local n = 0
    for _, node in ipairs(f:get_concrete_function(table.unpack(args)).graph:nodes()) do
      if node.op == "gru_sequence" then n = n + 1 end
    end
    assert.equal(1, n)
  end)
end)
