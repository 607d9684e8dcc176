--- Text and categorical preprocessing layers: StringLookup, IntegerLookup,
-- TextVectorization, Hashing (Keras's). Indices are Keras's own values
-- (with a mask token: 0 the mask, then the OOV indices, then the
-- vocabulary), so that an int output feeds Embedding{mask_zero = true}
-- directly. Lookups are one op (hash_table_find) on constant tensors of
-- the vocabulary: the layers work eagerly, inside tf.fn, in models and in
-- tf.data map functions. adapt() runs eagerly. See docs/keras_text.md.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local internal = tf.core.internal
  local raise = internal.keras.raise
  local sfmt = string.format

  local MODES = {int = true, one_hot = true, multi_hot = true, count = true, tf_idf = true}

  local function is_dataset(x)
    local mt = type(x) == "table" and getmetatable(x)
    return mt and mt.__name == "tf.data.Dataset" or false
  end

  local function copy_list(t)
    local r = {}
    for i, v in ipairs(t) do r[i] = v end
    return r
  end

  -- Values of a tensor as a flat Lua list.
  local function flat_values(t)
    local v = tf.reshape(t, {-1}):totable()
    return v
  end

  -- {==== IndexLookup: the base of StringLookup and IntegerLookup (and the
  -- lookup inside TextVectorization)
  local IndexLookup = Layer:extend("IndexLookup")

  -- opts already checked by the subclass; `kind` "string" or "int"
  function IndexLookup._setup(self, opts, kind)
    local cname = self._class_name
    self._kind = kind
    local function int_opt(k, default, min)
      local v = opts[k]
      if v == nil then return default end
      if math.type(v) ~= "integer" or v < min then
        raise("ValueError", sfmt("%s: '%s' must be an integer >= %d, got %s", cname, k, min, tostring(v)))
      end
      return v
    end
    self.max_tokens = int_opt("max_tokens", nil, 1)
    self.num_oov_indices = int_opt("num_oov_indices", 1, 0)
    self.output_mode = opts.output_mode or "int"
    if not MODES[self.output_mode] then
      raise("ValueError", sfmt("%s: 'output_mode' must be 'int', 'one_hot', 'multi_hot', 'count' or 'tf_idf', got %s",
        cname, tostring(self.output_mode)))
    end
    if opts.sparse then raise("UnimplementedError", sfmt("%s: sparse outputs are not supported", cname)) end
    self.invert = opts.invert and true or false
    if self.invert and self.output_mode ~= "int" then
      raise("ValueError", sfmt("%s: 'invert' needs output_mode 'int', got '%s'", cname, self.output_mode))
    end
    self.pad_to_max_tokens = opts.pad_to_max_tokens and true or false
    if self.pad_to_max_tokens and not self.max_tokens then
      raise("ValueError", sfmt("%s: 'pad_to_max_tokens' needs 'max_tokens'", cname))
    end
    local function check_token(k, v)
      if v == nil then return end
      if kind == "string" and type(v) ~= "string" or kind == "int" and math.type(v) ~= "integer" then
        raise("TypeError", sfmt("%s: '%s' must be %s, got %s", cname, k, kind == "string" and "a string" or
          "an integer", tostring(v)))
      end
    end
    self.mask_token = opts.mask_token
    self.oov_token = opts.oov_token
    if self.oov_token == nil then self.oov_token = kind == "string" and "[UNK]" or -1 end
    check_token("mask_token", self.mask_token)
    check_token("oov_token", self.oov_token)
    self._vocab = nil
    self._idf = nil
    if opts.vocabulary ~= nil then
      self:set_vocabulary(opts.vocabulary, opts.idf_weights)
    elseif opts.idf_weights ~= nil then
      raise("ValueError", sfmt("%s: 'idf_weights' needs 'vocabulary'", cname))
    end
  end

  -- The mask token takes index 0 only in "int" mode (Keras: in the other
  -- modes it is not in the vocabulary and masked inputs are dropped).
  function IndexLookup._mask_in_vocab(self)
    return self.mask_token ~= nil and self.output_mode == "int"
  end
  function IndexLookup._oov_start(self) return self:_mask_in_vocab() and 1 or 0 end
  function IndexLookup._token_start(self) return self:_oov_start() + self.num_oov_indices end

  --- The vocabulary, special tokens first (mask, then the OOV token repeated
  -- num_oov_indices times) unless include_special_tokens is false.
  function IndexLookup.get_vocabulary(self, include_special_tokens)
    local r = {}
    if include_special_tokens ~= false then
      if self:_mask_in_vocab() then r[1] = self.mask_token end
      for _ = 1, self.num_oov_indices do r[#r + 1] = self.oov_token end
    end
    for _, t in ipairs(self._vocab or {}) do r[#r + 1] = t end
    return r
  end

  --- Number of indices (special tokens included).
  function IndexLookup.vocabulary_size(self)
    return self:_token_start() + #(self._vocab or {})
  end

  --- set_vocabulary(vocabulary [, idf_weights]): a Lua list (or a vector
  -- tensor) of tokens; special tokens may lead it (as get_vocabulary gives).
  function IndexLookup.set_vocabulary(self, vocabulary, idf_weights)
    local cname = self._class_name
    local v = vocabulary
    if tf.is_tensor(v) then v = flat_values(v) end
    if type(v) == "string" and self._kind == "string" then
      local f = io.open(v, "r")
      if not f then raise("NotFoundError", sfmt("%s: cannot open vocabulary file '%s'", cname, v)) end
      local lines = {}
      for line in f:lines() do lines[#lines + 1] = (line:gsub("\r$", "")) end
      f:close()
      v = lines
    end
    if type(v) ~= "table" then
      raise("TypeError", sfmt("%s: 'vocabulary' must be a list of tokens, got %s", cname, type(v)))
    end
    v = copy_list(v)
    for i, t in ipairs(v) do
      if self._kind == "string" and type(t) ~= "string" or self._kind == "int" and math.type(t) ~= "integer" then
        raise("TypeError", sfmt("%s: vocabulary entry %d must be %s, got %s", cname, i,
          self._kind == "string" and "a string" or "an integer", tostring(t)))
      end
    end
    -- leading special tokens (as get_vocabulary returns them) are dropped
    local special = {}
    if self:_mask_in_vocab() then special[1] = self.mask_token end
    for _ = 1, self.num_oov_indices do special[#special + 1] = self.oov_token end
    local has_special = #special > 0 and #v >= #special
    for i = 1, #special do if v[i] ~= special[i] then has_special = false end end
    if has_special then v = {table.unpack(v, #special + 1)} end
    local seen = {}
    for i, t in ipairs(v) do
      if t == self.oov_token or (self.mask_token ~= nil and t == self.mask_token) then
        raise("ValueError", sfmt("%s: reserved token %s found in 'vocabulary' at %d: the mask and OOV tokens may only "
          .. "lead it, in get_vocabulary's order", cname, sfmt("%q", t), i))
      end
      if seen[t] then
        raise("ValueError", sfmt("%s: the vocabulary repeats %s (entries %d and %d)", cname, sfmt("%q", t), seen[t], i))
      end
      seen[t] = i
    end
    if self.max_tokens and #v + self:_token_start() > self.max_tokens then
      raise("ValueError", sfmt("%s: a vocabulary of %d tokens (%d with the special ones) is larger than max_tokens %d",
        cname, #v, #v + self:_token_start(), self.max_tokens))
    end
    local idf = nil
    if self.output_mode == "tf_idf" then
      if idf_weights == nil then
        raise("ValueError", sfmt("%s: 'idf_weights' must be given with the vocabulary in output_mode 'tf_idf'", cname))
      end
      idf = tf.is_tensor(idf_weights) and flat_values(idf_weights) or copy_list(idf_weights)
      if has_special then idf = {table.unpack(idf, #special + 1)} end
      if #idf ~= #v then
        raise("ValueError", sfmt("%s: %d idf_weights for a vocabulary of %d tokens", cname, #idf, #v))
      end
    elseif idf_weights ~= nil then
      raise("ValueError", sfmt("%s: 'idf_weights' is only for output_mode 'tf_idf'", cname))
    end
    self:_set(v, idf)
  end

  -- Store tokens (no special ones) and their idf weights; build the tables.
  function IndexLookup._set(self, tokens, idf)
    self._vocab = tokens
    self._idf = idf
    local n = #tokens
    local kdt = self._kind == "string" and tf.string or tf.int64
    local start = self:_token_start()
    local ids = {}
    for i = 1, n do ids[i] = start + i - 1 end
    if n > 0 then
      self._keys = tf.constant(tokens, kdt)
      self._ids = tf.constant(ids, tf.int64)
    else   -- an empty vocabulary: an empty table (every input is OOV)
      self._keys = tf.zeros({0}, kdt)
      self._ids = tf.zeros({0}, tf.int64)
    end
    self._idf_tensor = nil
    if idf then
      local mean = 0
      for _, w in ipairs(idf) do mean = mean + w end
      mean = n > 0 and mean / n or 0
      local full = {}
      for i = 1, start do full[i] = mean end
      for i, w in ipairs(idf) do full[start + i] = w end
      for i = #full + 1, self:_depth() do full[i] = 0 end
      self._idf_full = full
    end
  end

  function IndexLookup._depth(self)
    if self.pad_to_max_tokens then return self.max_tokens end
    return self:vocabulary_size()
  end

  function IndexLookup._check_ready(self)
    if self._vocab == nil then
      raise("FailedPreconditionError", sfmt("%s \"%s\": no vocabulary: give 'vocabulary' or call adapt() first",
        self._class_name, self.name))
    end
  end

  -- Inputs as a tensor of the key dtype.
  function IndexLookup._keys_of(self, x)
    if type(x) == "string" or type(x) == "number" then x = tf.constant(x) end
    if not tf.is_tensor(x) then x = tf.constant(x) end
    if self._kind == "string" then
      if x.dtype ~= tf.string then
        raise("TypeError", sfmt("%s: inputs must be strings, got dtype %s", self._class_name, x.dtype.name))
      end
    else
      if not x.dtype.is_integer then
        raise("TypeError", sfmt("%s: inputs must be integers, got dtype %s", self._class_name, x.dtype.name))
      end
      if x.dtype ~= tf.int64 then x = tf.cast(x, tf.int64) end
    end
    return x
  end

  -- Token -> index (int64), masks and OOV buckets applied.
  function IndexLookup._lookup(self, x)
    local oov_start = self:_oov_start()
    local dflt = self.num_oov_indices == 1 and oov_start or -1
    local ids = internal.lookup_find(self._keys, self._ids, x, tf.constant(dflt, tf.int64), 0)
    if self.num_oov_indices > 1 then
      local b
      if self._kind == "string" then
        b = tf.strings.to_hash_bucket_fast(x, self.num_oov_indices)
      else
        b = tf.math.floormod(x, tf.constant(self.num_oov_indices, tf.int64))
      end
      ids = tf.where(tf.equal(ids, -1), b + oov_start, ids)
    elseif self.num_oov_indices == 0 and not ids:is_symbolic() then
      local bad = tf.reduce_any(tf.less(ids, 0)):totable()
      if bad then
        raise("InvalidArgumentError", sfmt("%s: with num_oov_indices = 0 every input must be in the vocabulary",
          self._class_name))
      end
    end
    if self.mask_token ~= nil then
      local m = tf.equal(x, tf.constant(self.mask_token, x.dtype))
      ids = tf.where(m, tf.constant(self:_mask_in_vocab() and 0 or -1, tf.int64), ids)
    end
    return ids
  end

  -- Index -> token (invert).
  function IndexLookup._invert(self, x)
    if not x.dtype.is_integer then
      raise("TypeError", sfmt("%s: with invert = true inputs must be integer indices, got dtype %s", self._class_name,
        x.dtype.name))
    end
    if x.dtype ~= tf.int64 then x = tf.cast(x, tf.int64) end
    local kdt = self._kind == "string" and tf.string or tf.int64
    local r = internal.lookup_find(self._ids, self._keys, x, tf.constant(self.oov_token, kdt), 0)
    if self:_mask_in_vocab() then
      r = tf.where(tf.equal(x, tf.constant(0, tf.int64)), tf.constant(self.mask_token, kdt), r)
    end
    return r
  end

  -- ids [..., n] (int64, -1 = dropped) with `valid` (bool or nil) -> the
  -- multi_hot / count / tf_idf / one_hot encoding [..., depth].
  function IndexLookup._encode(self, ids, valid, dtype)
    local depth = self:_depth()
    local mode = self.output_mode
    local keep = tf.greater_equal(ids, tf.constant(0, tf.int64))
    if valid ~= nil then keep = tf.logical_and(keep, valid) end
    local oh = tf.one_hot(tf.cast(tf.where(keep, ids, tf.zeros_like(ids)), tf.int32) + 1, depth, {dtype = dtype})
    oh = oh * tf.expand_dims(tf.cast(keep, dtype), -1)
    if mode == "one_hot" then
      local s = ids.shape:as_list()
      if s and #s >= 1 and s[#s] == 1 then return tf.squeeze(oh, -2) end
      return oh
    end
    local counts = tf.reduce_sum(oh, -2)
    if mode == "multi_hot" then return tf.minimum(counts, tf.constant(1, dtype)) end
    if mode == "count" then return counts end
    return counts * tf.constant(self._idf_full, dtype)
  end

  function IndexLookup.call(self, inputs)
    self:_check_ready()
    local x = inputs
    if self.invert then
      if not tf.is_tensor(x) then x = tf.constant(x) end
      return self:_invert(x)
    end
    x = self:_keys_of(x)
    local ids = self:_lookup(x)
    if self.output_mode == "int" then return ids end
    local r = ids.shape:rank()
    if r == 0 then ids = tf.reshape(ids, {1, 1})
    elseif r == 1 then ids = tf.expand_dims(ids, -1) end
    return self:_encode(ids, nil, self.compute_dtype or tf.float32)
  end

  -- int mode: the input's shape; the encodings: (batch, depth) (a rank-1
  -- input is a batch of single tokens).
  local function categorical_shape(shape, mode, depth)
    local d = shape:as_list()
    if mode == "int" or d == nil then return mode == "int" and shape or tf.TensorShape(nil) end
    if #d <= 1 then return tf.TensorShape({d[1] or 1, depth}) end
    local r = {}
    for i = 1, #d - 1 do r[i] = d[i] end
    if mode == "one_hot" and d[#d] ~= 1 then r[#r + 1] = d[#d] end
    r[#r + 1] = depth
    return tf.TensorShape(r)
  end

  function IndexLookup.compute_output_shape(self, shape)
    if self.invert or self.output_mode == "int" then return shape end
    return categorical_shape(shape, self.output_mode, self:_depth())
  end

  -- Count tokens of a list of documents: counts[token], docs[token].
  local function count_into(state, rows)
    for _, row in ipairs(rows) do
      local seen = {}
      for _, t in ipairs(row) do
        state.counts[t] = (state.counts[t] or 0) + 1
        if not seen[t] then
          seen[t] = true
          state.docs[t] = (state.docs[t] or 0) + 1
        end
      end
      state.ndocs = state.ndocs + 1
    end
  end

  -- Vocabulary from counts: by count descending, ties by token descending
  -- (Keras sorts with numpy's lexsort((tokens, counts))[::-1]).
  function IndexLookup._finalize(self, state)
    state.counts[self.oov_token] = nil
    if self.mask_token ~= nil then state.counts[self.mask_token] = nil end
    local toks = {}
    for t in pairs(state.counts) do toks[#toks + 1] = t end
    table.sort(toks, function(a, b)
      local ca, cb = state.counts[a], state.counts[b]
      if ca ~= cb then return ca > cb end
      return a > b
    end)
    if self.max_tokens then
      local keep = self.max_tokens - self:_token_start()
      for i = #toks, math.max(keep, 0) + 1, -1 do toks[i] = nil end
    end
    local idf = nil
    if self.output_mode == "tf_idf" then
      idf = {}
      for i, t in ipairs(toks) do idf[i] = math.log(1 + state.ndocs / (1 + state.docs[t])) end
    end
    self:_set(toks, idf)
  end

  -- The documents of `data` (a tensor, a Lua list, or a tf.data dataset),
  -- in batches, each given to `each(batch tensor)`.
  local function for_batches(cname, data, batch_size, steps, each)
    if is_dataset(data) then
      local n = 0
      for x in data:iter() do
        if steps and n >= steps then break end
        if type(x) == "table" and not tf.is_tensor(x) then x = x[1] end
        each(x)
        n = n + 1
      end
      return
    end
    local x = data
    if type(x) == "table" and not tf.is_tensor(x) then
      if #x == 0 then raise("ValueError", sfmt("%s: adapt() was given no data", cname)) end
      x = tf.constant(x)
    end
    if not tf.is_tensor(x) then
      raise("TypeError", sfmt("%s: adapt() takes a tensor, a Lua list or a tf.data.Dataset, got %s", cname, type(x)))
    end
    local rank = x.shape:rank()
    if rank == 0 then x = tf.reshape(x, {1}) end
    local n = x.shape:as_list()[1]
    local bs = batch_size or 32
    local k = 0
    for i = 1, n, bs do
      if steps and k >= steps then break end
      local m = math.min(bs, n - i + 1)
      local begin, size = {i}, {m}
      for d = 2, x.shape:rank() do begin[d], size[d] = 1, -1 end
      each(tf.slice(x, begin, size))
      k = k + 1
    end
  end

  --- adapt(data [, {batch_size =, steps =}]): learn the vocabulary (and idf
  -- weights in tf_idf mode) from data: a tensor, a Lua list or a dataset.
  function IndexLookup.adapt(self, data, opts)
    opts = opts or {}
    local state = {counts = {}, docs = {}, ndocs = 0}
    for_batches(self._class_name, data, opts.batch_size, opts.steps, function(x)
      x = self:_keys_of(x)
      local r = x.shape:rank()
      local v = x:totable()
      if r == 0 then v = {{v}} elseif r == 1 then
        local rows = {}
        for i, t in ipairs(v) do rows[i] = {t} end
        v = rows
      elseif r > 2 then
        local rows = {}
        for i, t in ipairs(v) do rows[i] = flat_values(tf.constant(t, x.dtype)) end
        v = rows
      end
      count_into(state, v)
    end)
    self:_finalize(state)
  end

  function IndexLookup.get_config(self)
    local c = Layer.get_config(self)
    c.max_tokens = self.max_tokens
    c.num_oov_indices = self.num_oov_indices
    c.mask_token = self.mask_token
    c.oov_token = self.oov_token
    c.output_mode = self.output_mode
    c.invert = self.invert
    c.pad_to_max_tokens = self.pad_to_max_tokens
    c.vocabulary = self._vocab and copy_list(self._vocab) or nil
    c.idf_weights = self._idf and copy_list(self._idf) or nil
    return c
  end

  local LOOKUP_KEYS = {"max_tokens", "num_oov_indices", "mask_token", "oov_token", "vocabulary", "idf_weights",
                       "invert", "output_mode", "sparse", "pad_to_max_tokens", "encoding", "vocabulary_dtype"}

  local StringLookup = IndexLookup:extend("StringLookup")
  L.StringLookup = StringLookup
  --- StringLookup{vocabulary =, num_oov_indices = 1, mask_token = nil,
  -- oov_token = "[UNK]", output_mode = "int", invert = false, max_tokens =,
  -- pad_to_max_tokens = false, idf_weights =}: strings -> int64 indices
  -- (Keras's values) or their encodings.
  function StringLookup.init(self, opts)
    opts = self:_options(opts, LOOKUP_KEYS, 0)
    if opts.encoding ~= nil and tostring(opts.encoding):lower() ~= "utf-8" then
      raise("ValueError", sfmt("StringLookup: 'encoding' must be 'utf-8', got %s", tostring(opts.encoding)))
    end
    self:_setup(opts, "string")
  end

  local IntegerLookup = IndexLookup:extend("IntegerLookup")
  L.IntegerLookup = IntegerLookup
  --- IntegerLookup{vocabulary =, num_oov_indices = 1, mask_token = nil,
  -- oov_token = -1, ...}: integers -> int64 indices; with several OOV
  -- indices an unknown integer k goes to OOV index k mod num_oov_indices.
  function IntegerLookup.init(self, opts)
    opts = self:_options(opts, LOOKUP_KEYS, 0)
    if opts.vocabulary_dtype ~= nil and tf.dtypes.as_dtype(opts.vocabulary_dtype) ~= tf.int64 then
      raise("ValueError", "IntegerLookup: 'vocabulary_dtype' must be int64")
    end
    self:_setup(opts, "int")
  end
  -- }====

  -- {==== TextVectorization
  local STRIP = "[!\"#$%&()\\*\\+,\\-\\./:;<=>?@\\[\\\\\\]^_`{|}~']"   -- Keras's DEFAULT_STRIP_REGEX
  local STANDARDIZE = {lower_and_strip_punctuation = true, lower = true, strip_punctuation = true}
  local SPLIT = {whitespace = true, character = true}

  local TextVectorization = Layer:extend("TextVectorization")
  L.TextVectorization = TextVectorization
  --- TextVectorization{max_tokens =, standardize = "lower_and_strip_punctuation",
  -- split = "whitespace", ngrams =, output_mode = "int", output_sequence_length =,
  -- pad_to_max_tokens = false, vocabulary =, idf_weights =, encoding = "utf-8"}
  function TextVectorization.init(self, opts)
    opts = self:_options(opts, {"max_tokens", "standardize", "split", "ngrams", "output_mode",
      "output_sequence_length", "pad_to_max_tokens", "vocabulary", "idf_weights", "sparse", "ragged", "encoding"}, 0)
    local cname = "TextVectorization"
    local std = opts.standardize
    if std == nil and not rawequal(opts.standardize, false) then std = "lower_and_strip_punctuation" end
    if opts.standardize == false then std = nil end
    if std ~= nil and type(std) ~= "function" and not STANDARDIZE[std] then
      raise("ValueError", sfmt("%s: 'standardize' must be 'lower_and_strip_punctuation', 'lower', "
        .. "'strip_punctuation', false or a function, got %s", cname, tostring(std)))
    end
    self.standardize = std
    local split = opts.split
    if split == nil then split = "whitespace" end
    if split == false then split = nil end
    if split ~= nil and type(split) ~= "function" and not SPLIT[split] then
      raise("ValueError", sfmt("%s: 'split' must be 'whitespace', 'character', false or a function, got %s", cname,
        tostring(split)))
    end
    self.split = split
    local ng = opts.ngrams
    if ng ~= nil then
      if math.type(ng) == "integer" and ng >= 1 then
        local w = {}
        for i = 1, ng do w[i] = i end
        self._ngram_widths = w
      elseif type(ng) == "table" and #ng > 0 then
        for _, v in ipairs(ng) do
          if math.type(v) ~= "integer" or v < 1 then
            raise("ValueError", sfmt("%s: 'ngrams' entries must be integers >= 1, got %s", cname, tostring(v)))
          end
        end
        self._ngram_widths = copy_list(ng)
      else
        raise("ValueError", sfmt("%s: 'ngrams' must be nil, an integer >= 1 or a list of them, got %s", cname,
          tostring(ng)))
      end
      if split == nil then raise("ValueError", sfmt("%s: 'ngrams' needs a 'split'", cname)) end
    end
    self.ngrams = ng
    local mode = opts.output_mode or "int"
    if mode ~= "int" and mode ~= "multi_hot" and mode ~= "count" and mode ~= "tf_idf" then
      raise("ValueError", sfmt("%s: 'output_mode' must be 'int', 'multi_hot', 'count' or 'tf_idf', got %s", cname,
        tostring(mode)))
    end
    self.output_mode = mode
    local osl = opts.output_sequence_length
    if osl ~= nil then
      if mode ~= "int" then
        raise("ValueError", sfmt("%s: 'output_sequence_length' is only for output_mode 'int', got '%s'", cname, mode))
      end
      if math.type(osl) ~= "integer" or osl < 1 then
        raise("ValueError", sfmt("%s: 'output_sequence_length' must be an integer >= 1, got %s", cname, tostring(osl)))
      end
    end
    self.output_sequence_length = osl
    if opts.ragged or opts.sparse then
      raise("UnimplementedError", sfmt("%s: ragged and sparse outputs are not supported", cname))
    end
    self.encoding = opts.encoding or "utf-8"
    if tostring(self.encoding):lower() ~= "utf-8" then
      raise("ValueError", sfmt("%s: 'encoding' must be 'utf-8', got %s", cname, tostring(self.encoding)))
    end
    self.max_tokens = opts.max_tokens
    self.pad_to_max_tokens = opts.pad_to_max_tokens and true or false
    -- the lookup: mask "" (index 0) in int mode, OOV "[UNK]"
    self._lookup_layer = StringLookup{max_tokens = opts.max_tokens, mask_token = mode == "int" and "" or nil,
      output_mode = mode, pad_to_max_tokens = opts.pad_to_max_tokens, vocabulary = opts.vocabulary,
      idf_weights = opts.idf_weights, name = self.name .. "_lookup"}
  end

  -- Standardized strings [batch] (string tensor).
  function TextVectorization._standardize(self, x)
    local std = self.standardize
    if std == nil then return x end
    if type(std) == "function" then
      local r = std(x)
      if not tf.is_tensor(r) or r.dtype ~= tf.string then
        raise("TypeError", "TextVectorization: the 'standardize' function must return a string tensor")
      end
      return r
    end
    -- ASCII only, as Keras's tf.strings.lower(inputs)
    if std == "lower" or std == "lower_and_strip_punctuation" then x = tf.strings.lower(x) end
    if std == "strip_punctuation" or std == "lower_and_strip_punctuation" then
      x = tf.strings.regex_replace(x, STRIP, "")
    end
    return x
  end

  -- tokens [batch, n] (padded with "") and counts [batch] int32.
  function TextVectorization._tokens(self, x)
    local split = self.split
    local toks, counts
    if split == nil then
      toks = tf.expand_dims(x, -1)
      counts = tf.ones(tf.shape(x), tf.int32)
    elseif split == "whitespace" then
      toks, counts = tf.strings.split(x, nil, {pad = ""})
    elseif split == "character" then
      toks, counts = tf.strings.unicode_split(x, "UTF-8", {pad = ""})
    else
      toks, counts = split(x)
      if not tf.is_tensor(toks) or toks.dtype ~= tf.string then
        raise("TypeError", "TextVectorization: the 'split' function must return a string tensor [batch, n] (and "
          .. "optionally the int32 number of tokens of each row)")
      end
      if counts == nil then counts = tf.fill(tf.slice(tf.shape(toks), {1}, {1}), tf.shape(toks)[2]) end
    end
    if self._ngram_widths then
      toks, counts = tf.strings.ngrams(toks, self._ngram_widths, {separator = " ", lengths = counts})
    end
    return toks, counts
  end

  -- Inputs as a string vector [batch].
  local function text_batch(x)
    if type(x) == "string" then x = tf.constant({x}) end
    if not tf.is_tensor(x) then x = tf.constant(x) end
    if x.dtype ~= tf.string then
      raise("TypeError", sfmt("TextVectorization: inputs must be strings, got dtype %s", x.dtype.name))
    end
    local r = x.shape:rank()
    if r == 0 then return tf.reshape(x, {1}) end
    if r == 2 then
      local d = x.shape:as_list()[2]
      if d ~= 1 then
        raise("InvalidArgumentError", sfmt("TextVectorization: inputs of rank 2 must have shape (batch, 1), got %s",
          tostring(x.shape)))
      end
      return tf.reshape(x, {-1})
    end
    if r ~= 1 then
      raise("InvalidArgumentError", sfmt("TextVectorization: inputs must be a vector of strings (or (batch, 1)), got "
        .. "shape %s", tostring(x.shape)))
    end
    return x
  end

  function TextVectorization.call(self, inputs)
    local lk = self._lookup_layer
    lk:_check_ready()
    local x = self:_standardize(text_batch(inputs))
    local toks, counts = self:_tokens(x)
    local ids = lk:_lookup(toks)
    -- the positions within each row's count (sequence_mask needs a known length)
    local pos = tf.cumsum(tf.ones_like(ids, tf.int32), 2)
    local valid = tf.less_equal(pos, tf.expand_dims(counts, -1))
    if self.output_mode ~= "int" then
      return lk:_encode(ids, valid, self.compute_dtype or tf.float32)
    end
    ids = tf.where(valid, ids, tf.zeros_like(ids))
    local osl = self.output_sequence_length
    if osl then
      ids = tf.slice(tf.pad(ids, {{0, 0}, {0, osl}}), {1, 1}, {-1, osl})
    end
    return ids
  end

  function TextVectorization.compute_output_shape(self, shape)
    local d = shape:as_list()
    local b = d and d[1] or -1
    if self.output_mode == "int" then return tf.TensorShape({b, self.output_sequence_length or -1}) end
    return tf.TensorShape({b, self._lookup_layer:_depth()})
  end

  --- adapt(data [, {batch_size =, steps =}]): learn the vocabulary from
  -- texts (a string tensor, a Lua list of strings or a dataset of them).
  function TextVectorization.adapt(self, data, opts)
    opts = opts or {}
    local lk = self._lookup_layer
    local state = {counts = {}, docs = {}, ndocs = 0}
    for_batches("TextVectorization", data, opts.batch_size, opts.steps, function(x)
      local toks, counts = self:_tokens(self:_standardize(text_batch(x)))
      local p, c = toks:totable(), counts:totable()
      local rows = {}
      for i = 1, #c do
        local row = {}
        for j = 1, c[i] do row[j] = p[i][j] end
        rows[i] = row
      end
      count_into(state, rows)
    end)
    lk:_finalize(state)
  end

  function TextVectorization.get_vocabulary(self, include_special_tokens)
    return self._lookup_layer:get_vocabulary(include_special_tokens)
  end
  function TextVectorization.vocabulary_size(self) return self._lookup_layer:vocabulary_size() end
  function TextVectorization.set_vocabulary(self, vocabulary, idf_weights)
    return self._lookup_layer:set_vocabulary(vocabulary, idf_weights)
  end

  function TextVectorization.get_config(self)
    local c = Layer.get_config(self)
    c.max_tokens = self.max_tokens
    c.standardize = self.standardize
    if c.standardize == nil then c.standardize = false end
    c.split = self.split
    if c.split == nil then c.split = false end
    c.ngrams = type(self.ngrams) == "table" and copy_list(self.ngrams) or self.ngrams
    c.output_mode = self.output_mode
    c.output_sequence_length = self.output_sequence_length
    c.pad_to_max_tokens = self.pad_to_max_tokens
    c.encoding = self.encoding
    local lk = self._lookup_layer
    c.vocabulary = lk._vocab and copy_list(lk._vocab) or nil
    c.idf_weights = lk._idf and copy_list(lk._idf) or nil
    return c
  end
  -- }====

  -- {==== Hashing
  local Hashing = Layer:extend("Hashing")
  L.Hashing = Hashing
  --- Hashing{num_bins, mask_value =, salt =, output_mode = "int"}: farmhash
  -- Fingerprint64 of each value (integers as decimal text) mod num_bins (with
  -- a mask_value: masked inputs give 0 and the others 1 + hash mod
  -- (num_bins - 1)); a salt (an integer or two) uses SipHash-2-4 keyed by
  -- it, as Keras.
  function Hashing.init(self, opts)
    opts = self:_options(opts, {"num_bins", "mask_value", "salt", "output_mode", "sparse"}, 1)
    local nb = opts[1] or opts.num_bins
    if math.type(nb) ~= "integer" or nb < 1 then
      raise("ValueError", sfmt("Hashing: 'num_bins' must be an integer >= 1, got %s", tostring(nb)))
    end
    self.num_bins = nb
    self.mask_value = opts.mask_value
    if self.mask_value ~= nil and nb < 2 then
      raise("ValueError", "Hashing: 'num_bins' must be >= 2 with a 'mask_value'")
    end
    local salt = opts.salt
    if salt ~= nil then
      if math.type(salt) == "integer" then salt = {salt, salt} end
      if type(salt) ~= "table" or #salt ~= 2 or math.type(salt[1]) ~= "integer" or math.type(salt[2]) ~= "integer" then
        raise("ValueError", sfmt("Hashing: 'salt' must be an integer or a list of 2 integers, got %s", tostring(salt)))
      end
    end
    self.salt = salt
    self.output_mode = opts.output_mode or "int"
    if self.output_mode ~= "int" and self.output_mode ~= "one_hot" and self.output_mode ~= "multi_hot"
       and self.output_mode ~= "count" then
      raise("ValueError", sfmt("Hashing: 'output_mode' must be 'int', 'one_hot', 'multi_hot' or 'count', got %s",
        tostring(self.output_mode)))
    end
    if opts.sparse then raise("UnimplementedError", "Hashing: sparse outputs are not supported") end
  end

  function Hashing.call(self, inputs)
    local x = inputs
    if not tf.is_tensor(x) then x = tf.constant(x) end
    if x.dtype ~= tf.string and not x.dtype.is_integer then
      raise("TypeError", sfmt("Hashing: inputs must be strings or integers, got dtype %s", x.dtype.name))
    end
    local nb = self.num_bins - (self.mask_value ~= nil and 1 or 0)
    local h
    if self.salt then
      h = internal.strings_hash_bucket(x, nb, true, self.salt[1], self.salt[2])
    else
      h = internal.strings_hash_bucket(x, nb, false)
    end
    if self.mask_value ~= nil then
      local m = tf.equal(x, tf.constant(self.mask_value, x.dtype))
      h = tf.where(m, tf.zeros_like(h), h + 1)
    end
    if self.output_mode == "int" then return h end
    local enc = {output_mode = self.output_mode, _depth = function() return self.num_bins end}
    local r = h.shape:rank()
    if r == 0 then h = tf.reshape(h, {1, 1}) elseif r == 1 then h = tf.expand_dims(h, -1) end
    return IndexLookup._encode(enc, h, nil, self.compute_dtype or tf.float32)
  end

  function Hashing.compute_output_shape(self, shape)
    return categorical_shape(shape, self.output_mode, self.num_bins)
  end

  function Hashing.get_config(self)
    local c = Layer.get_config(self)
    c.num_bins = self.num_bins
    c.mask_value = self.mask_value
    c.salt = self.salt and copy_list(self.salt) or nil
    c.output_mode = self.output_mode
    return c
  end
  -- }====
end
