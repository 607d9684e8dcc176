-- Gradient-check cases for the fused recurrent ops: every input (x, h0,
-- c0, kernel, recurrent_kernel, bias) of each op, one tensor out (outputs,
-- final h and c concatenated), with masks, go_backwards and both GRU forms.
local B, T, I, U = 2, 3, 2, 2

local mask = {{true, false, true}, {false, true, true}}

local function flat(tf, ...)
  local parts = {}
  for k, v in ipairs({...}) do parts[k] = tf.reshape(v, {-1}) end
  return tf.concat(parts, 1)
end

local function lstm(opts)
  return {
    inputs = {{{B, T, I}}, {{B, U}, "unit"}, {{B, U}, "unit"}, {{I, 4 * U}, "unit"}, {{U, 4 * U}, "unit"},
              {{4 * U}, "unit"}},
    fn = function(tf, x, h0, c0, k, rk, b)
      local o = {go_backwards = opts.go_backwards, zero_output_for_mask = opts.zero_output_for_mask}
      if opts.mask then o.mask = tf.constant(mask) end
      return flat(tf, tf.nn.lstm_sequence(x, h0, c0, k, rk, b, o))
    end,
  }
end

local function gru(opts)
  local ra = opts.reset_after ~= false
  return {
    inputs = {{{B, T, I}}, {{B, U}, "unit"}, {{I, 3 * U}, "unit"}, {{U, 3 * U}, "unit"},
              {ra and {2, 3 * U} or {3 * U}, "unit"}},
    fn = function(tf, x, h0, k, rk, b)
      local o = {go_backwards = opts.go_backwards, zero_output_for_mask = opts.zero_output_for_mask, reset_after = ra}
      if opts.mask then o.mask = tf.constant(mask) end
      return flat(tf, tf.nn.gru_sequence(x, h0, k, rk, b, o))
    end,
  }
end

return {
  cases = {
    lstm_sequence = lstm({}),
    lstm_sequence_masked = lstm({mask = true}),
    lstm_sequence_masked_backwards = lstm({mask = true, go_backwards = true}),
    lstm_sequence_zero_output_for_mask = lstm({mask = true, zero_output_for_mask = true}),
    gru_sequence = gru({}),
    gru_sequence_masked_backwards = gru({mask = true, go_backwards = true}),
    gru_sequence_reset_before = gru({reset_after = false}),
    gru_sequence_reset_before_masked = gru({reset_after = false, mask = true, go_backwards = true}),
    gru_sequence_zero_output_for_mask = gru({mask = true, zero_output_for_mask = true}),
  },
  -- backpropagation through time: the gradients of the two ops above, with
  -- no gradient of their own (no second order)
  nondifferentiable = {"lstm_sequence_grad", "gru_sequence_grad"},
}
