-- tf.init_scope: ops run eagerly while a tf.fn traces (TensorFlow's
-- init_scope), with the tapes paused
local tf = require("tf")

describe("tf.init_scope", function()
  it("runs its function eagerly, once, while a tf.fn traces", function()
    local v = tf.Variable(0.0)
    local seen
    local f = tf.fn(function(x)
      local eager = tf.init_scope(function(a)
        v:assign_add(1)                  -- at trace time only
        return tf.constant(a, tf.float32) * 2, tf.core.is_tracing()
      end, 21)
      seen = {eager:is_symbolic(), select(2, tf.init_scope(function() return 0, tf.core.is_tracing() end))}
      return x + eager
    end)
    assert.same({43, 43}, f(tf.constant({1.0, 1.0})):totable())
    assert.equal(1, v:item())            -- one trace (no variable is created there): ran once
    assert.same({false, false}, seen)
    f(tf.constant({2.0, 2.0}))        -- a replay: the init scope does not run again
    assert.equal(1, v:item())
    assert.same({44, 44}, f(tf.constant({2.0, 2.0})):totable())
  end)

  it("has a <close> form and comes back to the trace after it", function()
    local inside, after
    local f = tf.fn(function(x)
      do
        local _ <close> = tf.init_scope()
        inside = tf.core.is_tracing()
      end
      after = tf.core.is_tracing()
      return x * 3
    end)
    assert.same({3}, f(tf.constant({1.0})):totable())
    assert.is_false(inside)
    assert.is_true(after)
  end)

  it("restores the trace when its function raises", function()
    local f = tf.fn(function(x)
      local ok, err = pcall(tf.init_scope, function() error({kind = "Boom"}) end)
      assert(not ok and err.kind == "Boom")
      assert(tf.core.is_tracing(), "the trace is back after the error")
      return x + 1
    end)
    assert.same({2}, f(tf.constant({1.0})):totable())
  end)

  it("pauses the tapes", function()
    local x = tf.constant(3.0)
    local tape = tf.GradientTape({persistent = true})
    tape:watch(x)
    local y, z = tape:record(function()
      return x * x, tf.init_scope(function() return x * x end)
    end)
    assert.equal(6, tape:gradient(y, x):item())
    assert.is_nil(tape:gradient(z, x))
  end)

  it("refuses a non-function", function()
    assert.tf_error("TypeError", "init_scope: argument 1 ('f') expected function or nothing, got number",
      tf.init_scope, 3)
  end)
end)

describe("an init scope left open when its trace ends", function()
  it("fails the trace with FailedPreconditionError (no crash), and the engine goes on", function()
    local token
    local f = tf.fn(function(x)
      token = tf.core.init_scope_enter()   -- the raw form, never exited
      return x
    end)
    assert.tf_error("FailedPreconditionError", "is set aside by an init_scope that was not closed", f, tf.constant(1.0))
    tf.core.init_scope_exit(token)
    local g = tf.fn(function(x) return x * 2 end)
    assert.equal(4, g(tf.constant(2.0)):item())
    local x = tf.constant(3.0)
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return x * x end)
    assert.equal(6, tape:gradient(y, x):item())   -- the tapes record again
  end)
end)
