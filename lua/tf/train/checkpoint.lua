--- tf.train.Checkpoint, CheckpointManager, latest_checkpoint, load_checkpoint
-- (docs/checkpoints.md). Object-based checkpoints in safetensors files: the
-- object graph reachable from the Checkpoint's arguments is walked in a
-- stable order, each variable keyed by its path
-- ("model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"); the C
-- side (core/checkpoint.c) writes atomically and durably, checks the layout
-- and the CRC32C, and restores straight into the variables' buffers. The
-- JSON header is written here and parsed with lua-cjson.
return function(tf)
  local core = tf.core
  local raise = tf.errors.raise
  -- lua-cjson parses headers, loaded on the first read (so that loading tf
  -- does not need it: hosts with a narrow package.cpath still start)
  local json
  local function decoder()
    if not json then
      local ok, cjson = pcall(require, "cjson")
      if not ok then
        raise("UnimplementedError", "checkpoint: reading needs lua-cjson (Debian: apt-get install lua-cjson; or luarocks install lua-cjson): " .. tostring(cjson), 4)
      end
      json = cjson.new()                 -- our own instance: strict settings
      json.decode_invalid_numbers(false) -- no NaN / Infinity / hex
      json.decode_max_depth(16)
    end
    return json.decode
  end
  local train = {}          -- tf.train: this module's namespace (loaded lazily, lua/tf/init.lua)
  tf.train = train
  local private = {}        -- tf.core.internal.checkpoint: for Keras and the specs
  tf.core.internal.checkpoint = private
  local Variable = tf.Variable.mt
  local by_enum = tf.core.internal.dtype_by_enum

  local FORMAT = "luatf-checkpoint-2"
  local FORMAT_V1 = "luatf-checkpoint-1"   -- before the checksum covered the header (refused; upgrade_checkpoint reads it)
  local ATTR = "/.ATTRIBUTES/VARIABLE_VALUE"

  -- safetensors dtype <-> luatf dtype; sizes of the ones luatf cannot hold
  local ST_OF = {float32 = "F32", float64 = "F64", int32 = "I32", int64 = "I64", uint8 = "U8", bool = "BOOL",
                 float16 = "F16", bfloat16 = "BF16"}
  local DT_OF = {}
  for k, v in pairs(ST_OF) do DT_OF[v] = tf.dtypes.as_dtype(k) end
  local FOREIGN = {I8 = 1, I16 = 2, U16 = 2, U32 = 4, U64 = 8, F8_E4M3 = 1, F8_E5M2 = 1,
                   C64 = 8, C128 = 16}

  -- a JSON string (the writer needs no JSON library)
  local ESC = {['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
               ["\r"] = "\\r", ["\t"] = "\\t"}
  local function enc(x)
    return '"' .. tostring(x):gsub('[%c"\\]', function(c)
      return ESC[c] or ("\\u%04x"):format(c:byte())
    end) .. '"'
  end

  local function is_var(x) return getmetatable(x) == Variable end

  local function shape_str(dims)
    local t = {}
    for i, d in ipairs(dims) do t[i] = tostring(d) end
    return "(" .. table.concat(t, ", ") .. (#dims == 1 and ",)" or ")")
  end

  -- the value's dtype and dims (without a view of it, which would keep the
  -- restore from writing into its buffer)
  local function var_dims(v)
    local _, dims = core.ckpt_var_info(v._handle)
    return dims
  end

  local function var_dtype(v)
    return by_enum[(core.ckpt_var_info(v._handle))]
  end

  -- {==== The object graph
  local function sorted_string_keys(t)
    local keys = {}
    local k = next(t)
    while k ~= nil do
      if type(k) == "string" then keys[#keys + 1] = k end
      k = next(t, k)
    end
    table.sort(keys)
    return keys
  end

  --- Children of an object: its _checkpoint_children(), or for a plain
  -- table its string keys sorted then its array entries ("1", "2", ...).
  -- obj[name] when it is a function (objects whose __index raises on unknown names have none)
  local function method(obj, name)
    local ok, f = pcall(function() return obj[name] end)
    return ok and type(f) == "function" and f or nil
  end

  local function children(obj)
    local f = method(obj, "_checkpoint_children")
    if f then return f(obj) end
    local out = {}
    for _, k in ipairs(sorted_string_keys(obj)) do
      local c = rawget(obj, k)
      if is_var(c) or type(c) == "table" then out[#out + 1] = {k, c} end
    end
    for i = 1, #obj do
      local c = rawget(obj, i)
      if is_var(c) or type(c) == "table" then out[#out + 1] = {tostring(i), c} end
    end
    return out
  end

  --- Walk the graph breadth-first from `root_children` (array of {name, child}):
  -- each variable and object once, by its shortest (first) path. Other paths
  -- to the same object are its aliases (alias -> path): a file records them,
  -- and a restore given a file's `file_aliases` names each object as the file
  -- did (a model's unbuilt layer, reachable only as "layer-1" now, is the
  -- file's "layer_with_weights-1").
  local function walk(root_children, file_aliases)
    local vars, var_path, obj_path, slotters, aliases = {}, {}, {}, {}, {}
    local queue, head = {}, 1
    local pinned, done = {}, {}   -- objects named through a file alias; objects whose children were walked
    local function visit(name, child, parent)
      -- TensorFlow's escaping: "." -> "..", "/" -> ".S" (a name cannot fake a path)
      name = name:gsub("%.", ".."):gsub("/", ".S")
      local path = parent == "" and name or (parent .. "/" .. name)
      local via = file_aliases and file_aliases[path]
      if via then path = via end
      if is_var(child) then
        if not var_path[child] then
          var_path[child] = path
          vars[#vars + 1] = {key = path .. ATTR, var = child}
        elseif var_path[child] ~= path then
          aliases[path] = var_path[child]
        end
      elseif type(child) == "table" then
        if not obj_path[child] then
          obj_path[child] = path
          pinned[child] = via ~= nil
          queue[#queue + 1] = child
          if method(child, "_checkpoint_slots") then slotters[#slotters + 1] = child end
        elseif obj_path[child] ~= path then
          if via and not pinned[child] and not done[child] then
            -- the file's name for it, through a stable alias ("layer-1"),
            -- wins over a name that depends on what is built now
            obj_path[child] = path
            pinned[child] = true
          else
            aliases[path] = obj_path[child]
          end
        end
      end
    end
    for _, c in ipairs(root_children) do visit(c[1], c[2], "") end
    while head <= #queue do
      local obj = queue[head]
      head = head + 1
      done[obj] = true
      local cs = children(obj)
      if type(cs) ~= "table" then
        raise("TypeError", ("Checkpoint: _checkpoint_children of '%s' must return an array of {name, child}"):format(obj_path[obj]), 4)
      end
      for _, c in ipairs(cs) do
        if type(c) ~= "table" or type(c[1]) ~= "string" then
          raise("TypeError", ("Checkpoint: a child of '%s' is not a {name, child} pair"):format(obj_path[obj]), 4)
        end
        visit(c[1], c[2], obj_path[obj])
      end
    end
    -- optimizer slots: <path of var>/.OPTIMIZER_SLOT/<optimizer path>/<slot>/.ATTRIBUTES/VARIABLE_VALUE
    for _, opt in ipairs(slotters) do
      for _, s in ipairs(opt:_checkpoint_slots()) do
        local v, slot, sv = s[1], s[2], s[3]
        local vp = var_path[v]
        if vp and is_var(sv) and not var_path[sv] then
          local p = vp .. "/.OPTIMIZER_SLOT/" .. obj_path[opt] .. "/" .. slot
          var_path[sv] = p
          vars[#vars + 1] = {key = p .. ATTR, var = sv}
        end
      end
    end
    table.sort(vars, function(a, b) return a.key < b.key end)
    return {vars = vars, var_path = var_path, obj_path = obj_path, aliases = aliases}
  end
  -- }====

  -- {==== Writing a file
  local function align8(n) return (n + 7) & ~7 end

  --- Write the variables `vars` ({key=, var=} sorted by key; or {key=,
  -- value=, name=, trainable=} with a tensor as the value) to `path`.
  -- tf.distribute: under a multi-worker strategy only the chief writes
  -- files, and every worker waits after a save until it is written
  local function is_writer()
    local w = core.internal.checkpoint_writer
    return w == nil or w()
  end
  local function after_save()
    local f = core.internal.checkpoint_after_save
    if f then f() end
  end

  local function write_file(path, vars, aliases)
    if not is_writer() then return end
    local tensors, begins, entries, strings = {}, {}, {}, {}
    local at = 0
    for i, e in ipairs(vars) do
      -- a variable on a GPU: its bytes on the host
      local value = e.var and core.variable_peek(e.var._handle):cpu() or e.value:cpu()
      local dt = value.dtype.name
      local dims = value.shape:as_list()
      local st = ST_OF[dt]
      if dt == "string" then
        value = core.ckpt_pack_strings(value)
        strings[e.key] = dims
        st = "U8"
      elseif not st then
        raise("InvalidArgumentError", ("Checkpoint: variable '%s' has dtype %s, which cannot be saved"):format(e.key, dt), 4)
      end
      local nbytes = value.dtype.size * value.shape:num_elements()
      tensors[i], begins[i] = value, at
      entries[i] = {key = e.key, dtype = st, shape = st == "U8" and dt == "string" and {nbytes} or dims,
                    b = at, e = at + nbytes, name = e.var and e.var._name or e.name,
                    trainable = e.var and e.var.trainable or (not e.var and e.trainable)}
      at = align8(at + nbytes)
    end
    local size = at
    local graph = {}
    for _, e in ipairs(entries) do
      graph[#graph + 1] = ('%s:{"name":%s,"trainable":%s}'):format(enc(e.key), enc(e.name),
        tostring(e.trainable and true or false))
    end
    local meta = {["luatf.variables"] = "{" .. table.concat(graph, ",") .. "}"}
    if next(strings) then
      local parts = {}
      for _, k in ipairs(sorted_string_keys(strings)) do
        parts[#parts + 1] = enc(k) .. ":[" .. table.concat(strings[k], ",") .. "]"
      end
      meta["luatf.strings"] = "{" .. table.concat(parts, ",") .. "}"
    end
    if aliases and next(aliases) then
      local parts = {}
      for _, k in ipairs(sorted_string_keys(aliases)) do parts[#parts + 1] = enc(k) .. ":" .. enc(aliases[k]) end
      meta["luatf.aliases"] = "{" .. table.concat(parts, ",") .. "}"
    end
    -- the header starts with the format marker and the checksum's 8 digits
    -- (LTF_CKPT_MAGIC, at a fixed place: see docs/checkpoints.md), which the
    -- C writer fills with the CRC32C of every other byte of the file
    local magic = core.ckpt_magic()
    local mparts = {magic .. '00000000"'}
    for _, k in ipairs(sorted_string_keys(meta)) do
      mparts[#mparts + 1] = enc(k) .. ":" .. enc(meta[k])
    end
    local parts = {table.concat(mparts, ",") .. "}"}
    for _, e in ipairs(entries) do
      parts[#parts + 1] = ('%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'):format(enc(e.key),
        e.dtype, table.concat(e.shape, ","), e.b, e.e)
    end
    local header = table.concat(parts, ",") .. "}"
    core.ckpt_write(path, header, tensors, begins, size, #magic + 1)
  end
  -- }====

  -- {==== Reading a file
  local function dataloss(msg) raise("DataLossError", msg, 4) end

  local function to_uint(x, what, path)
    local i = math.type(x) == "integer" and x or (math.type(x) == "float" and math.tointeger(x))
    if not i or i < 0 then dataloss(("checkpoint '%s': %s is not a non-negative integer"):format(path, what)) end
    return i
  end

  --- Open and check a file: returns {file=, entries = {key -> entry}, keys
  -- (sorted), meta, verified}. A luatf checkpoint is verified by the C open
  -- (core/checkpoint.c: its format marker at a fixed place and the CRC32C
  -- of every byte); any other file is a plain safetensors file, read
  -- unchecked, and must carry no luatf metadata. `v1`: also read a
  -- luatf-checkpoint-1 file (upgrade_checkpoint), with the checks that
  -- format allows (its data's CRC32C).
  local function open_file(path, v1, bytes)
    if type(path) ~= "string" then raise("TypeError", "checkpoint: the path must be a string", 3) end
    local f = bytes and core.ckpt_open_string(bytes) or core.ckpt_open(path)   -- bytes: a file in memory (.keras)
    local verified = core.ckpt_verified(f)
    local header = core.ckpt_header(f)
    local ok, h = pcall(decoder(), header)
    if ok and not header:match("^%s*{") then ok, h = true, "an array or scalar" end
    if not ok or type(h) ~= "table" then
      core.ckpt_close(f)
      dataloss(("checkpoint '%s': the header is not a JSON object (%s)"):format(path, ok and type(h) or tostring(h)))
    end
    -- a decoder keeps the last of repeated keys: refuse them (a one-bit
    -- change can turn one key into another)
    local function unique_keys(text, what)
      local okj, err = pcall(core.ckpt_check_json, text, what)
      if not okj then
        core.ckpt_close(f)
        err.message = err.message:gsub("^checkpoint: ", ("checkpoint '%s': "):format(path))
        error(err, 0)
      end
    end
    unique_keys(header, "the header")
    local meta = h.__metadata__
    if meta ~= nil then
      if type(meta) ~= "table" then core.ckpt_close(f); dataloss(("checkpoint '%s': __metadata__ is not an object"):format(path)) end
      for k, v in pairs(meta) do
        if type(k) ~= "string" or type(v) ~= "string" then
          core.ckpt_close(f)
          dataloss(("checkpoint '%s': __metadata__ values must be strings"):format(path))
        end
      end
    end
    meta = meta or {}
    local old = false
    if verified then
      if meta["luatf.format"] ~= FORMAT then   -- only a writer's bug: the marker holds it
        core.ckpt_close(f)
        dataloss(("checkpoint '%s': luatf.format is not %s"):format(path, FORMAT))
      end
    else
      -- luatf metadata in a file without luatf's verified marker: a damaged
      -- luatf file (or an old one), never a plain file to read unchecked
      local keys = sorted_string_keys(meta)
      for _, k in ipairs(keys) do
        if k:lower():find("luatf", 1, true) then
          if meta["luatf.format"] == FORMAT_V1 and v1 then
            old = true
          elseif meta["luatf.format"] == FORMAT_V1 then
            core.ckpt_close(f)
            raise("FailedPreconditionError", ("checkpoint '%s': written by an older luatf (format %s, whose checksum does not cover the header); read it once with tf.train.upgrade_checkpoint(path, new_path), which checks what that format can and writes the current format"):format(path, FORMAT_V1), 4)
          else
            core.ckpt_close(f)
            dataloss(("checkpoint '%s': the header has luatf metadata ('%s') but no valid luatf format marker: the file is corrupted"):format(path, k))
          end
          break
        end
      end
    end
    local strings = {}
    local function nested(name)
      local text = meta[name]
      if not text then return nil end
      unique_keys(text, name)
      local ok2, t = pcall(decoder(), text)
      if not ok2 or type(t) ~= "table" then core.ckpt_close(f); dataloss(("checkpoint '%s': bad %s"):format(path, name)) end
      return t
    end
    if meta["luatf.strings"] then strings = nested("luatf.strings") end
    local aliases
    if meta["luatf.aliases"] then
      local a = nested("luatf.aliases")
      for k, v in pairs(a) do
        if type(k) ~= "string" or type(v) ~= "string" then core.ckpt_close(f); dataloss(("checkpoint '%s': bad luatf.aliases"):format(path)) end
      end
      aliases = a
    end
    local variables
    if meta["luatf.variables"] then variables = nested("luatf.variables") end
    local entries, keys, spans = {}, {}, {}
    local ok3, err = pcall(function()
      for key, e in pairs(h) do
        if key ~= "__metadata__" then
          if type(key) ~= "string" or type(e) ~= "table" then dataloss(("checkpoint '%s': entry '%s' is not an object"):format(path, tostring(key))) end
          local st = e.dtype
          if type(st) ~= "string" then dataloss(("checkpoint '%s': entry '%s' has no dtype"):format(path, key)) end
          local dt, esize = DT_OF[st], FOREIGN[st]
          if dt then esize = dt.size end
          if not esize then
            raise("InvalidArgumentError", ("checkpoint '%s': entry '%s' has unknown dtype '%s'"):format(path, key, st), 2)
          end
          if type(e.shape) ~= "table" or type(e.data_offsets) ~= "table" or #e.data_offsets ~= 2 then
            dataloss(("checkpoint '%s': entry '%s' needs a shape and two data_offsets"):format(path, key))
          end
          local dims, bytes = {}, esize
          for i = 1, #e.shape do
            dims[i] = to_uint(e.shape[i], "a dimension of '" .. key .. "'", path)
            if dims[i] > 0 and bytes > math.maxinteger // dims[i] then dataloss(("checkpoint '%s': entry '%s' is too large"):format(path, key)) end
            bytes = bytes * dims[i]
          end
          if next(e.shape) ~= nil and #e.shape == 0 then dataloss(("checkpoint '%s': entry '%s' has a bad shape"):format(path, key)) end
          local b = to_uint(e.data_offsets[1], "a data offset of '" .. key .. "'", path)
          local en = to_uint(e.data_offsets[2], "a data offset of '" .. key .. "'", path)
          local entry = {key = key, st = st, dtype = dt, dims = dims, begin = b, finish = en, bytes = bytes}
          if dt and strings[key] then
            if st ~= "U8" or type(strings[key]) ~= "table" then dataloss(("checkpoint '%s': bad string entry '%s'"):format(path, key)) end
            entry.string_dims = {}
            for i, d in ipairs(strings[key]) do entry.string_dims[i] = to_uint(d, "a string dimension", path) end
            entry.dtype = tf.string
          end
          entries[key] = entry
          keys[#keys + 1] = key
          spans[#spans + 1] = {b, en, bytes}
        end
      end
      core.ckpt_check_layout(f, spans)
      if old then
        local crc = meta["luatf.crc32c"] and meta["luatf.crc32c"]:match("^%x%x%x%x%x%x%x%x$") and tonumber(meta["luatf.crc32c"], 16)
        if not crc then dataloss(("checkpoint '%s': bad luatf.crc32c"):format(path)) end
        core.ckpt_verify(f, crc)
      end
    end)
    if not ok3 then
      core.ckpt_close(f)
      if tf.errors.is_error(err) then
        err.message = err.message:gsub("^checkpoint: ", ("checkpoint '%s': "):format(path))
      end
      error(err, 0)
    end
    table.sort(keys)
    return {file = f, entries = entries, keys = keys, meta = meta, path = path, aliases = aliases,
            variables = variables, foreign = not verified and not old, verified = verified}
  end

  --- The tensor of entry `e` (strings unpacked).
  local function entry_tensor(cf, e)
    if not e.dtype then
      raise("InvalidArgumentError", ("checkpoint '%s': entry '%s' has dtype %s, which luatf does not support"):format(cf.path, e.key, e.st), 3)
    end
    if e.string_dims then
      return core.ckpt_unpack_strings(core.ckpt_read(cf.file, tf.uint8.enum, e.dims, e.begin), e.string_dims)
    end
    return core.ckpt_read(cf.file, e.dtype.enum, e.dims, e.begin)
  end

  local function same_dims(a, b)
    if #a ~= #b then return false end
    for i = 1, #a do if a[i] ~= b[i] then return false end end
    return true
  end

  --- Why entry `e` cannot go into variable `v` (nil when it can).
  local function mismatch(cf, e, v)
    local id, vdims = core.ckpt_var_info(v._handle)
    local vdt = by_enum[id]
    local edims = e.string_dims or e.dims
    if e.dtype ~= vdt or not same_dims(edims, vdims) then
      return ("'%s': the checkpoint has %s %s, the variable is %s %s"):format(e.key,
        e.dtype and e.dtype.name or e.st, shape_str(edims), vdt.name, shape_str(vdims))
    end
    return nil
  end
  -- }====

  -- {==== Restore status
  local Status = {}
  Status.__index = Status
  Status.__name = "tf.train.CheckpointLoadStatus"

  local function list(t)
    local out = {}
    for k in pairs(t) do out[#out + 1] = k end
    table.sort(out)
    return out
  end

  --- The keys as sorted arrays: matched, missing (objects with no value in
  -- the file), unexpected (file values no object took), pending (kept for
  -- objects created later), shape_mismatched.
  function Status:report_table()
    return {matched = list(self._matched), missing = list(self._missing), unexpected = list(self._pending),
            pending = list(self._pending), shape_mismatched = list(self._mismatched)}
  end

  function Status:report()
    local r = self:report_table()
    local lines = {("checkpoint %s: %d matched, %d missing, %d unexpected or pending, %d shape-mismatched"):format(
      self._path, #r.matched, #r.missing, #r.unexpected, #r.shape_mismatched)}
    for _, part in ipairs({"matched", "missing", "unexpected", "shape_mismatched"}) do
      for _, k in ipairs(r[part]) do lines[#lines + 1] = ("  %-17s %s"):format(part, k) end
    end
    return table.concat(lines, "\n")
  end
  Status.__tostring = Status.report

  local function assert_fail(self, what, keys)
    raise("AssertionError", ("%s: %s: %s\n%s"):format(what, self._path, table.concat(keys, ", "), self:report()), 3)
  end

  --- Every value in the file was used and every object got its value.
  function Status:assert_consumed()
    local r = self:report_table()
    if #r.missing > 0 then assert_fail(self, "assert_consumed: objects without a value in the checkpoint", r.missing) end
    if #r.unexpected > 0 then assert_fail(self, "assert_consumed: unused (or still pending) values in the checkpoint", r.unexpected) end
    if #r.shape_mismatched > 0 then assert_fail(self, "assert_consumed: shape-mismatched values", r.shape_mismatched) end
    return self
  end

  --- Every object that exists now got its value (values for objects not
  -- created yet may still be pending).
  function Status:assert_existing_objects_matched()
    local r = self:report_table()
    if #r.missing > 0 then assert_fail(self, "assert_existing_objects_matched: objects without a value in the checkpoint", r.missing) end
    if #r.shape_mismatched > 0 then assert_fail(self, "assert_existing_objects_matched: shape-mismatched values", r.shape_mismatched) end
    return self
  end

  --- Partial restores are expected: silences nothing else (luatf does not warn).
  function Status:expect_partial()
    self._partial = true
    return self
  end
  -- }====

  -- {==== Deferred restore
  -- object of a restored graph (weak) -> the latest restore's record
  -- {cf, status, obj_path (weak), var_path (weak)}: a record lives as long as
  -- one of the objects it was restored into.
  local deferred = setmetatable({}, {__mode = "k"})
  -- records with values still pending (weak: they live through 'deferred')
  local records = setmetatable({}, {__mode = "k"})

  --- The record for `owner`: the one it was restored with, else the first
  -- pending one whose graph reaches it now (a layer that a model lists only
  -- once it is built: walked again, its path is the model's name for it).
  local function record_for(owner)
    local rec = deferred[owner]
    if rec and next(rec.status._pending) then return rec end
    for r in pairs(records) do
      if next(r.status._pending) then
        local g = walk(r.roots, r.aliases)
        if g.obj_path[owner] then
          for o, p in pairs(g.obj_path) do
            if not r.obj_path[o] then r.obj_path[o] = p; deferred[o] = r end
          end
          for v, p in pairs(g.var_path) do
            if not r.var_path[v] then r.var_path[v] = p end
          end
          return r
        end
      end
    end
    return nil
  end

  --- Called by whoever creates a variable lazily (a layer's build, an
  -- optimizer's slot), right after creating it: assigns the value a restore
  -- left pending for it. `name` is the attribute name, or {for_var=, slot=}.
  function train._restore_on_create(owner, name, var)
    local rec = record_for(owner)
    if rec then
      local op = rec.obj_path[owner]
      if op and next(rec.status._pending) then
        local vpath
        if type(name) == "table" then
          local fp = rec.var_path[name.for_var]
          if fp then vpath = fp .. "/.OPTIMIZER_SLOT/" .. op .. "/" .. tostring(name.slot) end
        else
          vpath = op .. "/" .. tostring(name)
        end
        if vpath then
          if not rec.var_path[var] then rec.var_path[var] = vpath end
          local key = vpath .. ATTR
          local e = rec.status._pending[key] and rec.cf.entries[key]
          if e then
            local why = mismatch(rec.cf, e, var)
            if why then
              rec.status._mismatched[key] = true
              raise("InvalidArgumentError", "restore: shape or dtype mismatch for " .. why, 3)
            end
            -- in an init scope: the owner may be creating 'var' while a
            -- tf.fn traces (a layer built or a slot made on the first call),
            -- and that trace is thrown away (TensorFlow traces a function
            -- that creates variables twice): the value must land now
            core.init_scope(function() var:assign(entry_tensor(rec.cf, e)) end)
            rec.status._pending[key] = nil
            rec.status._matched[key] = true
            if not next(rec.status._pending) then core.ckpt_close(rec.cf.file) end
          end
        end
      end
    end
  end

  --- Restore the graph of `root_children` from `path`; `root` keys deferred restores.
  local function restore(root_children, path)
    local cf = open_file(path)
    local g = walk(root_children, cf.aliases)
    local status = setmetatable({_path = path, _matched = {}, _missing = {}, _pending = {}, _mismatched = {}}, Status)
    local used = {}
    local errs = {}
    local handles, begins, later = {}, {}, {}
    for _, e in ipairs(g.vars) do
      local fe = cf.entries[e.key]
      -- a file luatf did not write: its keys may be bare paths ("dense/kernel")
      if not fe and cf.foreign then fe = cf.entries[e.key:sub(1, #e.key - #ATTR)] end
      if not fe then
        status._missing[e.key] = true
      else
        used[fe.key] = true
        local why = mismatch(cf, fe, e.var)
        if why then
          errs[#errs + 1] = why
          status._mismatched[fe.key] = true
        elseif not fe.dtype then
          errs[#errs + 1] = ("'%s': dtype %s is not supported by luatf"):format(e.key, fe.st)
        elseif fe.string_dims then
          later[#later + 1] = {var = e.var, value = entry_tensor(cf, fe), key = fe.key}
        else
          handles[#handles + 1] = e.var._handle
          begins[#begins + 1] = fe.begin
          status._matched[fe.key] = true
        end
      end
    end
    if #errs > 0 then
      core.ckpt_close(cf.file)
      raise("InvalidArgumentError", ("restore: %s does not fit the objects (nothing was restored):\n  %s"):format(path,
        table.concat(errs, "\n  ")), 3)
    end
    core.ckpt_restore(cf.file, handles, begins)
    for _, l in ipairs(later) do
      l.var:assign(l.value)
      status._matched[l.key] = true
    end
    for _, k in ipairs(cf.keys) do
      if not used[k] then status._pending[k] = true end
    end
    local rec = {cf = cf, status = status, obj_path = setmetatable(g.obj_path, {__mode = "k"}),
                 var_path = setmetatable(g.var_path, {__mode = "k"}), roots = root_children, aliases = cf.aliases}
    for obj in pairs(g.obj_path) do deferred[obj] = rec end
    if next(status._pending) then records[rec] = true end
    -- the mapping stays open while values are pending (the collector closes it with the record)
    if not next(status._pending) then core.ckpt_close(cf.file) end
    return status
  end
  -- }====

  -- {==== tf.train.Checkpoint
  local Checkpoint = {}
  Checkpoint.__name = "tf.train.Checkpoint"
  local cmethods = {}

  function Checkpoint.__index(c, k)
    local m = cmethods[k]
    if m ~= nil then return m end
    return rawget(c, "_children_by_name")[k]
  end

  function Checkpoint.__newindex(c, k, v)
    if type(k) ~= "string" then raise("TypeError", "Checkpoint: attribute names must be strings", 2) end
    if k == "save_counter" then raise("ValueError", "Checkpoint: save_counter is reserved", 2) end
    rawget(c, "_children_by_name")[k] = v
  end

  function cmethods._checkpoint_children(c)
    local out = {}
    local byname = rawget(c, "_children_by_name")
    for _, k in ipairs(sorted_string_keys(byname)) do
      local v = byname[k]
      if is_var(v) or type(v) == "table" then out[#out + 1] = {k, v} end
    end
    out[#out + 1] = {"save_counter", rawget(c, "save_counter")}
    return out
  end

  --- tf.train.Checkpoint{name = object, ...}
  function train.Checkpoint(kw)
    if kw ~= nil and type(kw) ~= "table" then raise("TypeError", "Checkpoint: expected a table of named objects", 2) end
    local byname = {}
    for k, v in pairs(kw or {}) do
      if type(k) ~= "string" then raise("TypeError", "Checkpoint: objects must be named (Checkpoint{model = m})", 2) end
      if k == "save_counter" then raise("ValueError", "Checkpoint: save_counter is reserved", 2) end
      if not (is_var(v) or type(v) == "table") then
        raise("TypeError", ("Checkpoint: '%s' is a %s, not a variable or a trackable object"):format(k, type(v)), 2)
      end
      byname[k] = v
    end
    local c = {_children_by_name = byname,
               save_counter = tf.Variable(tf.constant(0, tf.int64), {name = "save_counter", trainable = false})}
    return setmetatable(c, Checkpoint)
  end

  --- Write without numbering and without advancing the save counter.
  function cmethods.write(c, path)
    if type(path) ~= "string" then raise("TypeError", "Checkpoint.write: the path must be a string", 2) end
    local g = walk(c:_checkpoint_children())
    write_file(path, g.vars, g.aliases)
    after_save()
    return path
  end

  local function dirname(p)
    local d = p:match("^(.*)/[^/]*$")
    if d == nil then return "." end
    if d == "" then return "/" end
    return d
  end
  local function basename(p) return p:match("([^/]*)$") end

  -- {==== the `checkpoint` state file: TensorFlow's CheckpointState in text
  -- format (paths relative to the directory), so TensorFlow's
  -- tf.train.latest_checkpoint reads it too:
  --   model_checkpoint_path: "ckpt-2"
  --   all_model_checkpoint_paths: "ckpt-1"
  --   all_model_checkpoint_paths: "ckpt-2"
  --   all_model_checkpoint_timestamps: 1764000000.5
  --   last_preserved_timestamp: 1764000000.5
  local function state_path(dir) return dir .. "/checkpoint" end

  local UNESC = {n = "\n", t = "\t", r = "\r", ['"'] = '"', ["'"] = "'", ["\\"] = "\\"}
  local function unquote(v)
    local body = v:match('^"(.*)"$')
    if not body then return nil end
    local out, i = {}, 1
    while i <= #body do
      local c = body:sub(i, i)
      if c == "\\" then
        local oct = body:match("^[0-7][0-7]?[0-7]?", i + 1)
        if oct then
          out[#out + 1] = string.char(tonumber(oct, 8) % 256)
          i = i + 1 + #oct
        else
          local e = body:sub(i + 1, i + 1)
          out[#out + 1] = UNESC[e] or e
          i = i + 2
        end
      else
        out[#out + 1] = c
        i = i + 1
      end
    end
    return table.concat(out)
  end
  local function quote(v)
    return '"' .. v:gsub('[%c"\\\128-\255]', function(c)
      if c == '"' or c == "\\" then return "\\" .. c end
      return ("\\%03o"):format(c:byte())
    end) .. '"'
  end

  local function read_state(dir)
    local fh = io.open(state_path(dir), "rb")
    if not fh then return nil end
    local s = fh:read("a")
    fh:close()
    local st = {all_model_checkpoint_paths = {}, all_model_checkpoint_timestamps = {}}
    local bad = false
    for line in s:gmatch("[^\n]+") do
      local k, v = line:match("^%s*([%w_]+)%s*:%s*(.-)%s*$")
      if not k then
        if line:match("%S") then bad = true end
      elseif k == "model_checkpoint_path" then
        st.model_checkpoint_path = unquote(v)
      elseif k == "all_model_checkpoint_paths" then
        st.all_model_checkpoint_paths[#st.all_model_checkpoint_paths + 1] = unquote(v)
      elseif k == "all_model_checkpoint_timestamps" then
        st.all_model_checkpoint_timestamps[#st.all_model_checkpoint_timestamps + 1] = tonumber(v)
      elseif k == "last_preserved_timestamp" then
        st.last_preserved_timestamp = tonumber(v)
      end
    end
    if bad or type(st.model_checkpoint_path) ~= "string" then
      raise("DataLossError", ("checkpoint state file '%s' is corrupted"):format(state_path(dir)), 3)
    end
    return st
  end

  local function write_state(dir, latest, all, stamps, last_preserved)
    if not is_writer() then return end
    local lines = {"model_checkpoint_path: " .. quote(basename(latest))}
    for _, p in ipairs(all) do lines[#lines + 1] = "all_model_checkpoint_paths: " .. quote(basename(p)) end
    for _, t in ipairs(stamps or {}) do lines[#lines + 1] = ("all_model_checkpoint_timestamps: %.17g"):format(t) end
    if last_preserved then lines[#lines + 1] = ("last_preserved_timestamp: %.17g"):format(last_preserved) end
    core.file_write_atomic(state_path(dir), table.concat(lines, "\n") .. "\n")
  end
  -- }====

  --- Save as "prefix-N" (N the save counter after advancing it) and record
  -- it in the directory's `checkpoint` state file.
  function cmethods.save(c, prefix)
    if type(prefix) ~= "string" then raise("TypeError", "Checkpoint.save: the prefix must be a string", 2) end
    core.mkdir_p(dirname(prefix .. "-0"))   -- as TensorFlow: the prefix's directory is created
    local counter = rawget(c, "save_counter")
    counter:assign_add(tf.constant(1, tf.int64))
    local n = counter:item()
    local path = prefix .. "-" .. n
    local ok, err = pcall(cmethods.write, c, path)
    if not ok then
      counter:assign_sub(tf.constant(1, tf.int64))
      error(err, 0)
    end
    if not rawget(c, "_managed") then
      local dir = dirname(path)
      local st = read_state(dir)
      local all = {}
      if st then for _, p in ipairs(st.all_model_checkpoint_paths) do if p ~= basename(path) then all[#all + 1] = p end end end
      all[#all + 1] = path
      write_state(dir, path, all, nil)
    end
    after_save()
    return path
  end

  --- Restore: returns a status (see Status); values for objects not created
  -- yet wait for them (tf.train._restore_on_create). nil path: nothing to do.
  function cmethods.restore(c, path)
    if path == nil then
      return setmetatable({_path = "(none)", _matched = {}, _missing = {}, _pending = {}, _mismatched = {}}, Status)
    end
    return restore(c:_checkpoint_children(), path)
  end
  cmethods.read = cmethods.restore
  -- }====

  -- {==== latest_checkpoint, load_checkpoint
  local function join(dir, p)
    if p:sub(1, 1) == "/" then return p end
    return dir .. "/" .. p
  end

  --- The path of the latest checkpoint recorded in `dir`'s state file, or
  -- nil when there is none (as TensorFlow).
  function train.latest_checkpoint(dir)
    if type(dir) ~= "string" then raise("TypeError", "latest_checkpoint: the directory must be a string", 2) end
    dir = dir:gsub("/+$", "")
    if dir == "" then dir = "/" end
    local st = read_state(dir)
    if not st then return nil end
    return join(dir, st.model_checkpoint_path)
  end

  local Reader = {}
  Reader.__index = Reader
  Reader.__name = "tf.train.CheckpointReader"

  --- tf.train.load_checkpoint(path) -> reader (a directory: its latest checkpoint).
  function train.load_checkpoint(path)
    if type(path) ~= "string" then raise("TypeError", "load_checkpoint: the path must be a string", 2) end
    local fh = io.open(path .. "/checkpoint", "rb")
    if fh then
      fh:close()
      path = train.latest_checkpoint(path)
    end
    local cf = open_file(path)
    return setmetatable({_cf = cf}, Reader)
  end

  --- tf.train.upgrade_checkpoint(path, new_path): rewrite a checkpoint in
  -- the current format (every byte checksummed). The one way to read a file
  -- of luatf-checkpoint-1, whose checksum covered only the data: its data's
  -- CRC32C, layout and unique keys are checked, but a damaged header cannot
  -- be told from a good one, so check the values after upgrading. Returns new_path.
  function train.upgrade_checkpoint(path, new_path)
    if type(path) ~= "string" then raise("TypeError", "upgrade_checkpoint: argument 1 ('path') must be a string", 2) end
    if type(new_path) ~= "string" then raise("TypeError", "upgrade_checkpoint: argument 2 ('new_path') must be a string", 2) end
    local cf = open_file(path, true)
    local items = {}
    local ok, err = pcall(function()
      for _, k in ipairs(cf.keys) do
        local e = cf.entries[k]
        local v = type(cf.variables) == "table" and cf.variables[k]
        items[#items + 1] = {key = k, value = entry_tensor(cf, e),
                             name = type(v) == "table" and type(v.name) == "string" and v.name or k,
                             trainable = type(v) == "table" and v.trainable == true}
      end
    end)
    core.ckpt_close(cf.file)
    if not ok then error(err, 0) end
    write_file(new_path, items, cf.aliases)
    return new_path
  end

  --- Array of {key, shape} sorted by key.
  function Reader:list_variables()
    local out = {}
    for _, k in ipairs(self._cf.keys) do
      local e = self._cf.entries[k]
      out[#out + 1] = {k, e.string_dims or e.dims}
    end
    return out
  end
  function Reader:has_tensor(key) return self._cf.entries[key] ~= nil end
  function Reader:get_tensor(key)
    local e = self._cf.entries[key]
    if not e then raise("NotFoundError", ("get_tensor: key '%s' not found in checkpoint %s"):format(tostring(key), self._cf.path), 2) end
    return entry_tensor(self._cf, e)
  end
  function Reader:get_variable_to_shape_map()
    local out = {}
    for _, k in ipairs(self._cf.keys) do local e = self._cf.entries[k]; out[k] = e.string_dims or e.dims end
    return out
  end
  function Reader:get_variable_to_dtype_map()
    local out = {}
    for _, k in ipairs(self._cf.keys) do local e = self._cf.entries[k]; out[k] = e.dtype or e.st end
    return out
  end
  function Reader:metadata() return self._cf.meta end
  -- }====

  -- {==== CheckpointManager
  local Manager = {}
  Manager.__name = "tf.train.CheckpointManager"
  local mmethods = {}
  function Manager.__index(m, k)
    if mmethods[k] then return mmethods[k] end
    if k == "checkpoints" then
      local out = {}
      for i, p in ipairs(rawget(m, "_paths")) do out[i] = p end
      return out
    elseif k == "latest_checkpoint" then
      local ps = rawget(m, "_paths")
      return ps[#ps]
    end
    return nil
  end

  local MOPTS = {max_to_keep = true, keep_checkpoint_every_n_hours = true, checkpoint_name = true}

  --- tf.train.CheckpointManager(ckpt, dir, {max_to_keep=, keep_checkpoint_every_n_hours=, checkpoint_name="ckpt"})
  function train.CheckpointManager(ckpt, dir, opts)
    if getmetatable(ckpt) ~= Checkpoint then raise("TypeError", "CheckpointManager: expected a tf.train.Checkpoint", 2) end
    if type(dir) ~= "string" then raise("TypeError", "CheckpointManager: the directory must be a string", 2) end
    opts = opts or {}
    for k in pairs(opts) do
      if not MOPTS[k] then raise("TypeError", ("CheckpointManager: unknown option '%s'"):format(tostring(k)), 2) end
    end
    local keep = opts.max_to_keep
    if keep ~= nil and (math.type(keep) ~= "integer" or keep < 1) then
      raise("ValueError", "CheckpointManager: max_to_keep must be a positive integer or nil (keep all)", 2)
    end
    dir = dir:gsub("/+$", "")
    core.mkdir_p(dir)
    local name = opts.checkpoint_name or "ckpt"
    local m = {_ckpt = ckpt, directory = dir, _prefix = dir .. "/" .. name, _max = keep,
               _hours = opts.keep_checkpoint_every_n_hours, _paths = {}, _stamps = {}, _kept = {}}
    -- take over what the state file lists (files this manager's prefix names)
    local st = read_state(dir)
    if st then
      local last_keep = nil
      for i, p in ipairs(st.all_model_checkpoint_paths) do
        m._paths[#m._paths + 1] = join(dir, p)
        m._stamps[#m._stamps + 1] = tonumber(st.all_model_checkpoint_timestamps[i]) or os.time()
      end
      last_keep = tonumber(st.last_preserved_timestamp)
      m._last_keep = last_keep
    end
    m._last_keep = m._last_keep or os.time()
    return setmetatable(m, Manager)
  end

  --- Save a new numbered checkpoint, record it, delete the oldest ones past
  -- max_to_keep (unless kept by keep_checkpoint_every_n_hours). Returns its path.
  function mmethods.save(m, checkpoint_number)
    local c = m._ckpt
    local counter = rawget(c, "save_counter")
    local path
    rawset(c, "_managed", true)
    local ok, err = pcall(function()
      if checkpoint_number ~= nil then
        path = m._prefix .. "-" .. tostring(checkpoint_number)
        cmethods.write(c, path)
      else
        path = cmethods.save(c, m._prefix)
      end
    end)
    rawset(c, "_managed", nil)
    if not ok then error(err, 0) end
    local now = os.time()
    for i = #m._paths, 1, -1 do
      if m._paths[i] == path then table.remove(m._paths, i); table.remove(m._stamps, i) end
    end
    m._paths[#m._paths + 1] = path
    m._stamps[#m._stamps + 1] = now
    -- rotation: files this manager wrote (or found listed), oldest first
    local deletes = {}
    if m._max then
      while #m._paths > m._max do
        local p, t = table.remove(m._paths, 1), table.remove(m._stamps, 1)
        if m._hours and t - m._last_keep >= m._hours * 3600 then
          m._last_keep = t       -- preserved: no longer managed
        else
          deletes[#deletes + 1] = p
        end
      end
    end
    write_state(m.directory, path, m._paths, m._stamps, m._last_keep)
    -- delete only files this manager names (its directory and checkpoint_name)
    local pat = "^" .. m._prefix:gsub("%p", "%%%0") .. "%-%d+$"
    for _, p in ipairs(deletes) do
      if p:match(pat) and is_writer() then os.remove(p) end
    end
    after_save()
    return path
  end

  --- Restore the latest checkpoint of the directory (nil status when none).
  function mmethods.restore_or_initialize(m)
    local p = m.latest_checkpoint
    if p then return m._ckpt:restore(p) end
    return nil
  end
  -- }====

  -- {==== Keras: model:save_weights / load_weights (lua/tf/keras/model.lua calls these)
  --- The weights of `obj` (a model, or any object) keyed from it as the
  -- root: "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE".
  function private.save_weights(obj, path)
    if type(path) ~= "string" then raise("TypeError", "save_weights: the path must be a string", 3) end
    local g = walk(children(obj))
    write_file(path, g.vars, g.aliases)
    after_save()
    return path
  end
  function private.load_weights(obj, path)
    if type(path) ~= "string" then raise("TypeError", "load_weights: the path must be a string", 3) end
    return restore(children(obj), path)
  end
  -- for tests and tools
  private.walk = walk
  -- for whole-model saving (lua/tf/keras/saving.lua): write {key=, var=|value=}
  -- entries to a file, open a file (or bytes, named by path) and read entries
  private.write_file = write_file
  private.open_file = open_file
  private.entry_tensor = entry_tensor
  -- }====

  -- tf.train.Example & co. (lua/tf/train/example.lua)
  require("tf.train.example")(tf)
end
