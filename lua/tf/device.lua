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

  -- TensorFlow 2's default placement (docs/devices.md): ops with no scope
  -- and no input on a device run on /gpu:0 when a GPU is visible
  core.set_placement("default", true)
  -- whether ops with no scope go to /gpu:0 now
  local function default_gpu()
    return core.placement("default") and num_gpus() > 0
  end
  -- the runtime is initialized (visible devices fixed) at the first tensor
  -- made by tf.constant / tf.Variable, or a device opened, as TensorFlow's
  -- context initializes at its first op
  local initialized = false
  local function mark_initialized()
    if not initialized then
      initialized = true
      core.devices_initialized(true)
    end
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
    if kind == "GPU" and index >= num_gpus() then
      if not core.placement("soft") then
        raise("InvalidArgumentError", ("device: Could not satisfy explicit device specification '/device:GPU:%d' "
              .. "because no devices matching that specification are registered in this process (%d GPU%s "
              .. "visible; soft device placement is off)"):format(index, num_gpus(), num_gpus() == 1 and "" or "s"), 2)
      end
      kind, index = "CPU", 0   -- soft placement
    end
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

  --- The device ops are placed on now ("/cpu:0" or "/gpu:N"; with no
  -- scope, "/gpu:0" under the default placement with a GPU visible).
  function tf.current_device()
    local top = stack[#stack]
    if not top then return default_gpu() and "/gpu:0" or "/cpu:0" end
    return ("/%s:%d"):format(top[1]:lower(), top[2])
  end

  --- x moved to the GPU of the current scope (constructors under a GPU
  -- scope: tf.constant, tf.Variable's initial value); x itself otherwise.
  -- Private (tf.core.internal): tf.Variable calls it too.
  local function numel(x)
    local n = 1
    for _, d in ipairs(x:_dims()) do n = n * d end
    return n
  end

  local function place(x)
    mark_initialized()
    local top = stack[#stack]
    if top and top[1] == "GPU" and tf.is_tensor(x) and not x:is_symbolic() and x.dtype ~= tf.string then
      return core.to_device(x, "GPU", top[2])
    end
    -- no scope: /gpu:0 under the default placement, but small int32/int64
    -- tensors (shapes, indices) stay on the host as the ops TensorFlow pins there
    if not top and tf.is_tensor(x) and default_gpu() and not x:is_symbolic() then
      local dt = x.dtype
      if dt == tf.string or dt == tf.resource or ((dt == tf.int32 or dt == tf.int64) and numel(x) <= 64) then
        return x
      end
      return core.to_device(x, "GPU", 0)
    end
    return x
  end

  --- A to-be-closed "/cpu:0" scope when the default placement would put
  -- work on a GPU (no scope set, a GPU visible), else nil: host pipelines
  -- (tf.data, Keras' batching of host arrays) run on the host, as
  -- TensorFlow runs tf.data on the CPU. Private (tf.core.internal).
  -- any_scope: also inside a GPU scope (tf.data, which TensorFlow always
  -- runs on the CPU), whenever a GPU is visible.
  function core.internal.host_scope(any_scope)
    if any_scope then
      local top = stack[#stack]
      if (top == nil or top[1] ~= "CPU") and num_gpus() > 0 then return tf.device("/cpu:0") end
      return nil
    end
    if stack[1] == nil and default_gpu() then return tf.device("/cpu:0") end
    return nil
  end
  --- x (a tensor, or a nested table of them) on /gpu:0 when the default
  -- placement is active and no scope is set; x otherwise. Private.
  function core.internal.to_default_device(x)
    if stack[1] ~= nil or not default_gpu() then return x end
    local function move(v)
      if tf.is_tensor(v) then
        if v.dtype == tf.string or v.dtype == tf.resource or v:is_symbolic() then return v end
        return core.to_device(v, "GPU", 0)
      end
      if type(v) == "table" and getmetatable(v) == nil then
        local out = {}
        for k, e in pairs(v) do out[k] = move(e) end
        return out
      end
      return v
    end
    return move(x)
  end

  -- tf.constant under a GPU scope makes its tensor there, as TensorFlow's
  local constant = tf.constant
  function tf.constant(...) return place(constant(...)) end
  core.internal.place = place

  -- PhysicalDevice / LogicalDevice: {name =, device_type =}, printed as TensorFlow's
  local Physical = {__name = "PhysicalDevice"}
  Physical.__tostring = function(d) return ("PhysicalDevice(name='%s', device_type='%s')"):format(d.name, d.device_type) end
  Physical.__eq = function(a, b) return a.name == b.name end
  local Logical = {__name = "LogicalDevice"}
  Logical.__tostring = function(d) return ("LogicalDevice(name='%s', device_type='%s')"):format(d.name, d.device_type) end
  Logical.__eq = function(a, b) return a.name == b.name end

  local function check_kind(kind, what)
    if kind ~= nil and kind ~= "CPU" and kind ~= "GPU" then
      raise("ValueError", ("%s: unknown device type %q (expected \"CPU\" or \"GPU\")"):format(what, tostring(kind)), 4)
    end
  end

  local function physical(kind, what)
    check_kind(kind, what)
    local out = {}
    if kind == nil or kind == "CPU" then
      out[#out + 1] = setmetatable({name = "/physical_device:CPU:0", device_type = "CPU"}, Physical)
    end
    if kind == nil or kind == "GPU" then
      for i = 0, (core.num_physical_gpus and core.num_physical_gpus() or 0) - 1 do
        out[#out + 1] = setmetatable({name = ("/physical_device:GPU:%d"):format(i), device_type = "GPU"}, Physical)
      end
    end
    return out
  end

  --- PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU'), ...
  -- (CPU first): every GPU found (CUDA_VISIBLE_DEVICES hides some, as the
  -- driver does; set_visible_devices does not).
  function tf.config.list_physical_devices(kind) return physical(kind, "list_physical_devices") end
  --- LogicalDevice(name='/device:GPU:0', device_type='GPU'), ...: the
  -- visible devices as the runtime numbers them (initializes it, as TensorFlow's).
  function tf.config.list_logical_devices(kind)
    check_kind(kind, "list_logical_devices")
    mark_initialized()
    local out = {}
    if kind == nil or kind == "CPU" then out[#out + 1] = setmetatable({name = "/device:CPU:0", device_type = "CPU"}, Logical) end
    if kind == nil or kind == "GPU" then
      for i = 0, num_gpus() - 1 do
        out[#out + 1] = setmetatable({name = ("/device:GPU:%d"):format(i), device_type = "GPU"}, Logical)
      end
    end
    return out
  end

  -- A PhysicalDevice argument -> its kind and index; ValueError
  -- "Unrecognized device: ..." as TensorFlow's for anything else.
  local function physical_of(d, what)
    local name = type(d) == "table" and d.name or nil
    local kind, index
    if type(name) == "string" then kind, index = name:match("^/physical_device:(%u+):(%d+)$") end
    index = tonumber(index)
    local ok = kind == "CPU" and index == 0 or
               kind == "GPU" and index < (core.num_physical_gpus and core.num_physical_gpus() or 0)
    if not ok then
      local shown = type(d) == "table" and type(d.name) == "string" and
                    ("PhysicalDevice(name='%s', device_type='%s')"):format(d.name, tostring(d.device_type)) or tostring(d)
      raise("ValueError", ("%s: Unrecognized device: %s"):format(what, shown), 4)
    end
    return kind, index
  end

  --- tf.config.set_visible_devices(devices, device_type): the GPUs the
  -- runtime uses (a PhysicalDevice or a list of them; device_type "GPU"
  -- keeps the CPU, which luatf never hides). Before the runtime is
  -- initialized only: after it, a change raises RuntimeError "Visible
  -- devices cannot be modified after being initialized" (the same list is
  -- no change).
  function tf.config.set_visible_devices(devices, device_type)
    check_kind(device_type, "set_visible_devices")
    if type(devices) == "table" and (getmetatable(devices) ~= nil or devices.name ~= nil) then devices = {devices} end
    if type(devices) ~= "table" then
      raise("TypeError", "set_visible_devices: expected a PhysicalDevice or a list of them, got " .. type(devices), 2)
    end
    local gpus = {}
    for _, d in ipairs(devices) do
      local kind, index = physical_of(d, "set_visible_devices")
      if device_type ~= nil and kind ~= device_type then
        raise("ValueError", ("set_visible_devices: Unrecognized device: %s"):format(tostring(d)), 2)
      end
      if kind == "GPU" then gpus[#gpus + 1] = index end
    end
    local ok, err = pcall(core.set_visible_gpus, gpus)
    if not ok then
      if tostring(err):find("cannot be modified after being initialized", 1, true) then
        raise("RuntimeError", "Visible devices cannot be modified after being initialized", 2)
      end
      error(err, 0)
    end
  end

  --- The visible PhysicalDevices (of device_type when given), CPU first.
  function tf.config.get_visible_devices(device_type)
    check_kind(device_type, "get_visible_devices")
    local out = {}
    if device_type == nil or device_type == "CPU" then
      out[#out + 1] = setmetatable({name = "/physical_device:CPU:0", device_type = "CPU"}, Physical)
    end
    if device_type == nil or device_type == "GPU" then
      for _, i in ipairs(core.visible_gpus()) do
        out[#out + 1] = setmetatable({name = ("/physical_device:GPU:%d"):format(i), device_type = "GPU"}, Physical)
      end
    end
    return out
  end
  tf.config.experimental.set_visible_devices = tf.config.set_visible_devices
  tf.config.experimental.get_visible_devices = tf.config.get_visible_devices
  tf.config.experimental.list_physical_devices = tf.config.list_physical_devices
  tf.config.experimental.list_logical_devices = tf.config.list_logical_devices

  --- tf.config.experimental.set_memory_growth(gpu, enable) / get_memory_growth(gpu):
  -- recorded per physical GPU as TensorFlow's (luatf's caching allocator
  -- always grows on demand: growth on or off, it reserves nothing up front).
  -- Changing it after the runtime initialized raises RuntimeError
  -- "Physical devices cannot be modified after being initialized".
  local growth = {}
  function tf.config.experimental.set_memory_growth(device, enable)
    local kind, index = physical_of(device, "set_memory_growth")
    if kind ~= "GPU" then
      raise("ValueError", "set_memory_growth: Cannot set memory growth on non-GPU and non-Pluggable devices", 2)
    end
    enable = enable and true or false
    if (growth[index] or false) == enable then return end
    if initialized or core.devices_initialized() then
      raise("RuntimeError", "Physical devices cannot be modified after being initialized", 2)
    end
    growth[index] = enable
  end
  function tf.config.experimental.get_memory_growth(device)
    local kind, index = physical_of(device, "get_memory_growth")
    if kind ~= "GPU" then
      raise("ValueError", "get_memory_growth: Cannot get memory growth on non-GPU and non-Pluggable devices", 2)
    end
    return growth[index] or false
  end

  --- tf.config.set_soft_device_placement(enabled) (default true): an op
  -- placed on a GPU by tf.device without a kernel there runs on the CPU;
  -- off, it fails (InvalidArgumentError "Could not satisfy explicit device
  -- specification ..."), and so does a scope naming an absent GPU.
  function tf.config.set_soft_device_placement(enabled) core.set_placement("soft", enabled and true or false) end
  function tf.config.get_soft_device_placement() return core.placement("soft") end

  --- tf.debugging.set_log_device_placement(enabled): every op prints
  -- "Executing op MatMul in device /job:localhost/replica:0/task:0/device:GPU:0"
  -- to stderr as it runs.
  tf.debugging = tf.debugging or {}
  function tf.debugging.set_log_device_placement(enabled) core.set_placement("log", enabled and true or false) end
  function tf.debugging.get_log_device_placement() return core.placement("log") end

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
