--- Tensor fields and methods added on the Lua side: `x.shape`, `x.dtype`,
-- comparisons as methods (`x:eq(y)`, `x:lt(y)`, ...), `x[i]`, `x:cpu()`,
-- and `tostring(x)` (formatting lives in tf.format).
return function(tf)
  local core = tf.core
  local mt = core.Tensor
  local methods, getters = mt[1], mt[2]
  local by_enum = tf.core.internal.dtype_by_enum

  getters.shape = function(x) return tf.TensorShape.new(x:_dims()) end
  getters.dtype = function(x) return by_enum[x:_dtype_id()] end
  --- x.name: "add:0" for a symbolic tensor (while tracing), nil for an eager one.
  getters.name = function(x) return core.symbolic_name(x) end

  methods.eq = tf.equal
  methods.ne = tf.not_equal
  methods.lt = tf.less
  methods.le = tf.less_equal
  methods.gt = tf.greater
  methods.ge = tf.greater_equal

  function methods.get_shape(x) return x.shape end
  methods.matmul = tf.matmul   -- x:matmul(y), Lua having no `@`
  -- x:cpu(), x:gpu(): tf.device (device.lua)
  function methods.numel(x) return x.shape:num_elements() end
  function methods.size(x) return x.shape:num_elements() end

  --- x[i]: the i-th slice along the first axis (1-based; negative from the end).
  function methods._index(x, i)
    return core.internal.index_tensor(x, i)   -- array_ops.lua
  end

  -- A symbolic tensor (inside tf.fn) has no value: Lua cannot branch on it.
  -- `if x then` cannot be caught (a tensor is always true to Lua); these can.
  for _, name in ipairs({"item", "numpy", "totable"}) do
    local raw = methods[name]
    methods[name] = function(x, ...)
      if x:is_symbolic() then
        tf.errors.raise("TypeError", ("%s: %s is a symbolic tensor inside tf.fn and has no value while tracing; " ..
          "branch with tf.cond / tf.where and loop with tf.while_loop (or let autograph convert the Lua " ..
          "`if`/`while`: tf.fn's default) instead of a Lua `if`, and use tf.print to see values at run time")
          :format(name, tostring(x)), 2)
      end
      return raw(x, ...)
    end
  end

  tf.debugging.check_numerics = tf.check_numerics
  tf.Tensor = mt
end
