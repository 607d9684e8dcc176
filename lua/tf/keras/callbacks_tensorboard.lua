--- tf.keras.callbacks.TensorBoard (docs/summary.md): event files for
-- TensorBoard, laid out as Keras lays them out:
--
--   log_dir/train/       epoch_<name> scalars (loss and metrics) at each
--                        epoch end, step = epoch - 1 (Keras's 0-based epoch);
--                        batch_<name> every update_freq batches (step = the
--                        global batch count, 1-based); weight histograms
--                        "<variable name>/histogram" every histogram_freq
--                        epochs; the traced train step's graph (write_graph)
--                        after the first batch.
--   log_dir/validation/  epoch_<name> of the val_ logs, and
--                        evaluation_<name>_vs_iterations at the batch count.
--
-- TensorBoard{log_dir = "logs", histogram_freq = 0, write_graph = true,
-- write_images = false, update_freq = "epoch" | N, write_steps_per_second =
-- false, profile_batch = 0, embeddings_freq = 0} (log_dir may come first:
-- TensorBoard{"logs/run1"}). profile_batch and embeddings_freq are
-- accepted and must be 0 (no profiler, no projector).
return function(tf)
  local callbacks = tf.keras.callbacks
  if callbacks.TensorBoard then return end
  local raise = tf.errors.raise
  local sfmt = string.format

  local TensorBoard = callbacks.Callback:extend("TensorBoard")
  callbacks.TensorBoard = TensorBoard

  local KEYS = {[1] = true, log_dir = true, histogram_freq = true, write_graph = true, write_images = true,
                update_freq = true, write_steps_per_second = true, profile_batch = true, embeddings_freq = true,
                embeddings_metadata = true}

  function TensorBoard:init(o)
    if type(o) == "string" then o = {log_dir = o} end
    o = o or {}
    if type(o) ~= "table" then raise("TypeError", "TensorBoard: expects a table of options", 3) end
    for k in pairs(o) do
      if not KEYS[k] then raise("TypeError", sfmt("TensorBoard: unknown option '%s'", tostring(k)), 3) end
    end
    self.log_dir = o[1] or o.log_dir or "logs"
    if type(self.log_dir) ~= "string" then raise("TypeError", "TensorBoard: 'log_dir' must be a string", 3) end
    self.histogram_freq = o.histogram_freq or 0
    if math.type(self.histogram_freq) ~= "integer" or self.histogram_freq < 0 then
      raise("ValueError", sfmt("TensorBoard: 'histogram_freq' must be an integer >= 0, got %s",
        tostring(self.histogram_freq)), 3)
    end
    self.write_graph = o.write_graph ~= false
    self.write_images = o.write_images == true
    self.write_steps_per_second = o.write_steps_per_second == true
    local uf = o.update_freq or "epoch"
    if uf == "batch" then uf = 1 end
    if not (uf == "epoch" or (math.type(uf) == "integer" and uf > 0)) then
      raise("ValueError", sfmt("TensorBoard: 'update_freq' must be \"epoch\", \"batch\" or an integer > 0, got %s",
        tostring(uf)), 3)
    end
    self.update_freq = uf
    for _, k in ipairs({"profile_batch", "embeddings_freq"}) do
      local v = o[k]
      if v ~= nil and v ~= 0 then
        raise("ValueError", sfmt("TensorBoard: '%s' is not supported (must be 0), got %s", k, tostring(v)), 3)
      end
    end
  end

  local function writer(self, which)
    local key = "_" .. which .. "_writer"
    if not self[key] then self[key] = tf.summary.create_file_writer(self.log_dir .. "/" .. which) end
    return self[key]
  end

  function TensorBoard:on_train_begin()
    self._global_batch = 0
    self._graph_written = not self.write_graph
    self._t0 = nil
    writer(self, "train")
  end

  local function scalars(w, prefix, logs, step, filter)
    w:as_default(function()
      for k, v in pairs(logs) do
        if type(v) == "number" and filter(k) then tf.summary.scalar(prefix(k), v, {step = step}) end
      end
    end)
  end

  function TensorBoard:on_train_batch_end(_, logs)
    self._global_batch = (self._global_batch or 0) + 1
    if not self._graph_written then
      self._graph_written = true
      local st = rawget(self.model, "_compile_state")
      local fn = st and st.train_fn
      if fn and tf.is_fn and tf.is_fn(fn) then
        writer(self, "train"):as_default(function() tf.summary.graph(fn, {step = 0}) end)
      end
    end
    if self.update_freq ~= "epoch" and self._global_batch % self.update_freq == 0 then
      local l = {}
      if logs then local _ = logs.loss end   -- fit's batch logs are read on first access
      for k, v in pairs(logs or {}) do l[k] = v end
      scalars(writer(self, "train"), function(k) return "batch_" .. k end, l, self._global_batch,
        function(k) return k ~= "batch" and k ~= "size" end)
    end
  end

  function TensorBoard:on_epoch_begin()
    self._epoch_t0 = os.time()
    self._epoch_batch0 = self._global_batch or 0
  end

  local function weight_image(w)
    local shape = w.shape
    local r = shape:rank()
    local v = w:value()
    if r == 1 then v = tf.reshape(v, {1, 1, shape[1], 1})
    elseif r == 2 then
      if shape[1] > shape[2] then v = tf.transpose(v) end
      local s = v.shape
      v = tf.reshape(v, {1, s[1], s[2], 1})
    else
      return nil
    end
    return v
  end

  function TensorBoard:on_epoch_end(epoch, logs)
    logs = logs or {}
    local step = epoch - 1
    local train = writer(self, "train")
    scalars(train, function(k) return "epoch_" .. k end, logs, step,
      function(k) return k:sub(1, 4) ~= "val_" end)
    if self.write_steps_per_second and self._epoch_t0 then
      local dt = math.max(os.time() - self._epoch_t0, 1e-9)
      train:as_default(function()
        tf.summary.scalar("epoch_steps_per_second", (self._global_batch - self._epoch_batch0) / dt, {step = step})
      end)
    end
    local has_val = false
    for k in pairs(logs) do if k:sub(1, 4) == "val_" then has_val = true end end
    if has_val then
      local val = writer(self, "validation")
      scalars(val, function(k) return "epoch_" .. k:sub(5) end, logs, step, function(k) return k:sub(1, 4) == "val_" end)
      scalars(val, function(k) return "evaluation_" .. k:sub(5) .. "_vs_iterations" end, logs, self._global_batch,
        function(k) return k:sub(1, 4) == "val_" end)
    end
    if self.histogram_freq > 0 and step % self.histogram_freq == 0 then
      train:as_default(function()
        for _, layer in ipairs(self.model.layers) do
          for _, w in ipairs(layer.weights) do
            local name = tostring(w.name):gsub(":", "_")
            tf.summary.histogram(name .. "/histogram", w, {step = step})
            if self.write_images then
              local img = weight_image(w)
              if img then tf.summary.image(name .. "/image", img, {step = step}) end
            end
          end
        end
      end)
    end
    train:flush()
  end

  function TensorBoard:on_train_end()
    for _, k in ipairs({"_train_writer", "_validation_writer"}) do
      if self[k] then self[k]:close() end
      self[k] = nil
    end
  end
end
