--- Devices: tf.device scopes, tf.config.list_physical_devices /
-- list_logical_devices / experimental.get_memory_info, x:gpu(), x:cpu(),
-- x.device, tf.test. The engine places ops (docs/devices.md); this module
-- parses names and keeps the scope stack, which it mirrors into the engine
-- (core.set_device). A GPU is present when the engine found a device module
-- (libltf_cuda.so, or libltf_gpusim.so with LTF_GPU_SIM=1) and a device;
-- without one, "/gpu:N" scopes fall back to the CPU (TensorFlow's soft
-- device placement).
return function(tf)
  local core = tf.core
  local raise = tf.errors.raise
  tf.test = tf.test or {}
  tf.config.experimental = tf.config.experimental or {}

  -- the scopes entered and not yet left: {kind, index} ("CPU"/"GPU")
  local stack = {}

  local function num_gpus()
    return core.num_gpus and core.num_gpus() or 0
  end

  --- Parse "/cpu:0", "cpu:0", "GPU:1", "/device:GPU:1",
  -- "/job:localhost/replica:0/task:0/device:CPU:0" -> "CPU"|"GPU", index.
  local function parse(name, level)
    if type(name) ~= "string" then
      raise("TypeError", "device: expected a device name string, got " .. type(name), level + 1)
    end
    local lower = name:lower()
    local kind, index = lower:match("device:(%a+):(%d+)$")
    if not kind then kind, index = lower:match("^/?(%a+):(%d+)$") end
    if kind ~= "cpu" and kind ~= "gpu" then
      raise("ValueError", ("device: cannot parse device name %q (expected \"/cpu:0\" or \"/gpu:N\")"):format(name),
            level + 1)
    end
    return kind:upper(), tonumber(index)
  end

  -- Mirror the innermost scope into the engine.
  local function apply()
    local top = stack[#stack]
    if top then core.set_device(top[1], top[2]) else core.set_device(nil) end
  end

  local Scope = {__name = "tf.device"}
  Scope.__index = Scope
  Scope.__close = function(self)
    if self.closed then return end
    self.closed = true
    for i = #stack, 1, -1 do
      if stack[i] == self.entry then
        table.remove(stack, i)
        break
      end
    end
    apply()
  end
  Scope.__tostring = function(self) return ("tf.device(%q)"):format(self.name) end

  --- tf.device(name) as a to-be-closed scope, or tf.device(name, fn): ops
  -- inside run on that device (a GPU that is absent: the CPU).
  function tf.device(name, fn)
    local kind, index = parse(name, 2)
    if kind == "GPU" and index >= num_gpus() then kind, index = "CPU", 0 end   -- soft placement
    local entry = {kind, index}
    stack[#stack + 1] = entry
    apply()
    local scope = setmetatable({name = name, entry = entry}, Scope)
    if fn == nil then return scope end
    local res = table.pack(pcall(fn))
    Scope.__close(scope)
    if not res[1] then error(res[2], 0) end
    return table.unpack(res, 2, res.n)
  end

  --- The device ops are placed on now ("/cpu:0" or "/gpu:N").
  function tf.current_device()
    local top = stack[#stack]
    if not top then return "/cpu:0" end
    return ("/%s:%d"):format(top[1]:lower(), top[2])
  end

  --- x moved to the GPU of the current scope (constructors under a GPU
  -- scope: tf.constant, tf.Variable's initial value); x itself otherwise.
  -- Private (tf.core.internal): tf.Variable calls it too.
  local function place(x)
    local top = stack[#stack]
    if top and top[1] == "GPU" and tf.is_tensor(x) and not x:is_symbolic() and x.dtype ~= tf.string then
      return core.to_device(x, "GPU", top[2])
    end
    return x
  end

  -- tf.constant under a GPU scope makes its tensor there, as TensorFlow's
  local constant = tf.constant
  function tf.constant(...) return place(constant(...)) end
  core.internal.place = place

  local function list(kind, prefix)
    if kind ~= nil and kind ~= "CPU" and kind ~= "GPU" then
      raise("ValueError", ("list_%s_devices: unknown device type %q (expected \"CPU\" or \"GPU\")"):format(prefix, kind), 3)
    end
    local out = {}
    local name = prefix == "physical" and "/physical_device:%s:%d" or "/device:%s:%d"
    if kind == nil or kind == "CPU" then out[#out + 1] = {name = name:format("CPU", 0), device_type = "CPU"} end
    if kind == nil or kind == "GPU" then
      for i = 0, num_gpus() - 1 do out[#out + 1] = {name = name:format("GPU", i), device_type = "GPU"} end
    end
    return out
  end

  --- {name="/physical_device:GPU:0", device_type="GPU"}, ... (CPU first).
  function tf.config.list_physical_devices(kind) return list(kind, "physical") end
  --- {name="/device:GPU:0", device_type="GPU"}, ... as TensorFlow's logical devices.
  function tf.config.list_logical_devices(kind) return list(kind, "logical") end

  local function mem_device(device, op)
    local kind, index = parse(device, 3)
    if kind == "GPU" and index >= num_gpus() then
      raise("ValueError", ("%s: no device %q (%d GPUs present)"):format(op, device, num_gpus()), 3)
    end
    return kind, index
  end

  --- tf.config.experimental.get_memory_info("GPU:0") -> {current=, peak=}
  -- (bytes the device's allocator hands out to live tensors, and their peak).
  function tf.config.experimental.get_memory_info(device)
    local kind, index = mem_device(device, "get_memory_info")
    local m = core.memory_info(kind, index)
    return {current = m.current, peak = m.peak}
  end
  --- Bytes held from the device by the caching allocator (in use + cached).
  function tf.config.experimental.get_memory_reserved(device)
    local kind, index = mem_device(device, "get_memory_reserved")
    return core.memory_info(kind, index).reserved
  end
  function tf.config.experimental.reset_memory_stats(device)
    local kind, index = mem_device(device, "reset_memory_stats")
    core.reset_memory_stats(kind, index)
  end

  --- How eager ops placed on a GPU ran since the last reset (luatf's own,
  -- not TensorFlow's): {op_name = {device = n, emulated = n, host = n}} for
  -- each op that ran there: 'device' its device kernel (on the simulated
  -- GPU, the CUDA kernel bodies compiled for the host), 'emulated' the
  -- simulated GPU running the op's CPU kernel on its stream (no device body
  -- yet), 'host' soft placement (the CPU kernel over copies). {} without a GPU.
  function tf.config.experimental.get_device_kernel_stats()
    return core.device_kernel_stats()
  end
  function tf.config.experimental.reset_device_kernel_stats()
    core.reset_device_kernel_stats()
  end

  --- Graph replay of traced functions on a GPU (luatf's own, docs/cuda.md):
  -- a tf.fn plan whose inputs are on one GPU runs step by step at its first
  -- call, is captured at its second and replayed after. Captures keep their
  -- intermediates' device memory; set_device_graph_limit(bytes) bounds it
  -- over all of them (least recently replayed dropped first; 0: no capture;
  -- default 1 GiB or $LTF_DEVICE_GRAPH_MEMORY). get_device_graph_info()
  -- -> {limit = bytes, bytes = held now, count = live captures}.
  function tf.config.experimental.set_device_graph_limit(bytes)
    if math.type(bytes) ~= "integer" or bytes < 0 then
      raise("ValueError", ("set_device_graph_limit: expected a byte count >= 0, got %s"):format(tostring(bytes)), 2)
    end
    core.set_device_graph_limit(bytes)
  end
  function tf.config.experimental.get_device_graph_info()
    return core.device_graph_info()
  end

  --- "silent" (default: inputs on another device are copied) or "explicit"
  -- (they are refused); nil restores the default.
  function tf.config.experimental.set_device_policy(policy)
    if policy ~= nil and policy ~= "silent" and policy ~= "explicit" then
      raise("ValueError", ("set_device_policy: unknown policy %q (expected \"silent\" or \"explicit\")")
            :format(tostring(policy)), 2)
    end
    core.set_device_policy(policy == "explicit")
  end
  function tf.config.experimental.get_device_policy()
    return core.device_policy() and "explicit" or "silent"
  end

  --- x:gpu(n): a copy on /gpu:n (default 0); x itself when it is there, or
  -- when there is no GPU (everything stays on the CPU, DESIGN section 9).
  local methods = core.Tensor[1]
  function methods.gpu(x, index)
    index = index or 0
    if index >= num_gpus() then return x end
    return core.to_device(x, "GPU", index)
  end
  --- x:cpu(): a copy in host memory (x itself when it is there).
  function methods.cpu(x) return core.to_device(x, "CPU", 0) end

  function tf.test.is_gpu_available() return num_gpus() > 0 end
  function tf.test.is_built_with_cuda() return core.built_with_cuda and core.built_with_cuda() or false end
  function tf.test.is_built_with_gpu_support() return tf.test.is_built_with_cuda() end
  function tf.executing_eagerly() return not tf.core.internal.is_tracing() end
end
