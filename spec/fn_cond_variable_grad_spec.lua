-- A tf.fn whose only read of a variable is inside tf.cond / tf.while_loop,
-- traced before a tape records a call: the tape must still watch the
-- variable (watch_accessed_variables) and get its gradient.
local tf = require("tf")

describe("tf.fn with a variable read only inside control flow", function()
  it("gives the variable's gradient when traced before the tape", function()
    local v = tf.Variable(tf.constant({1.0, 2.0, 3.0}))
    local f = tf.fn(function(x)
      local y = x
      if tf.reduce_sum(x) > 0 then y = x * v * v else y = x - v end
      return tf.reduce_sum(y)
    end)
    local x = tf.constant({1.0, -1.0, 2.0})
    f(x)   -- traced here, outside any tape
    local tape = tf.GradientTape()
    local loss = tape:record(function() return f(x) end)
    assert.same({2.0, -4.0, 12.0}, tape:gradient(loss, {v})[1]:totable())   -- 2 x v
  end)
end)
