--- Argument checks shared by the layer files (errors name the layer class
-- and the argument, blamed on the user's constructor call).
return function(tf)
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local M = {}

  function M.positive_int(cname, arg, v)
    if math.type(v) ~= "integer" or v < 1 then
      raise("ValueError", sfmt("%s: '%s' must be a positive integer, got %s", cname, arg, tostring(v)), 4)
    end
    return v
  end

  function M.pair(cname, arg, v)
    if math.type(v) == "integer" then v = {v, v} end
    if type(v) ~= "table" or #v ~= 2 or math.type(v[1]) ~= "integer" or math.type(v[2]) ~= "integer"
       or v[1] < 1 or v[2] < 1 then
      raise("ValueError", sfmt("%s: '%s' must be a positive integer or a table of 2 of them, got %s", cname, arg,
        type(v) == "table" and ("{" .. table.concat(v, ", ") .. "}") or tostring(v)), 4)
    end
    return {v[1], v[2]}
  end

  function M.padding(cname, v)
    v = v or "valid"
    local p = type(v) == "string" and v:lower()
    if p ~= "valid" and p ~= "same" then
      raise("ValueError", sfmt("%s: 'padding' must be \"valid\" or \"same\", got %s", cname, tostring(v)), 4)
    end
    return p
  end

  function M.data_format(cname, v)
    if v ~= nil and v ~= "channels_last" then
      raise("UnimplementedError", sfmt("%s: data_format '%s' is not supported (only channels_last)", cname,
        tostring(v)), 4)
    end
  end

  function M.axis_of(self, n, axis)
    local a = axis < 0 and n + 1 + axis or axis
    if a < 1 or a > n then
      raise("ValueError", sfmt("layer \"%s\": invalid axis %d for an input of rank %d", self.name, axis, n), 5)
    end
    return a
  end

  --- Output size of a window op along one dim (-1 stays -1): Keras's
  -- conv_output_length.
  function M.window_out(n, k, stride, dilation, padding)
    if n < 0 then return -1 end
    local eff = (k - 1) * dilation + 1
    if padding == "same" then return (n + stride - 1) // stride end
    return math.max(0, (n - eff) // stride + 1)
  end

  -- {==== config helpers: Keras objects by name/table in get_config
  --- An activation by name; a custom function stays a function (it
  -- round-trips within the process, not through a file).
  function M.ser_activation(f)
    if f == nil then return nil end
    return tf.keras.activations.serialize(f) or f
  end
  function M.ser_initializer(i) return tf.keras.initializers.serialize(i) end
  function M.ser_regularizer(r) return tf.keras.regularizers.serialize(r) end
  function M.ser_constraint(c) return tf.keras.constraints.serialize(c) end
  --- The regularizer/constraint keywords: self.<k> from opts.<k>.
  function M.reg_con(self, opts, names)
    for _, k in ipairs(names) do
      if k:match("_regularizer$") then
        rawset(self, k, tf.keras.regularizers.get(opts[k]))
      else
        rawset(self, k, tf.keras.constraints.get(opts[k]))
      end
    end
  end
  --- Add those keywords to a config.
  function M.config_reg_con(self, c, names)
    for _, k in ipairs(names) do
      local v = rawget(self, k)
      if k:match("_regularizer$") then c[k] = M.ser_regularizer(v) else c[k] = M.ser_constraint(v) end
    end
    return c
  end
  -- }====

  return M
end
