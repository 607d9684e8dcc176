--- tf.data.TFRecordDataset: the records of TFRecord files (docs/tfrecord.md).
-- Each file is read by core/tfrecord.c on a worker thread of its own
-- (bindings/tfrecord.c), which checks the CRCs and keeps chunks of records
-- ready; elements are scalar string tensors. ds:batch(n) right after the
-- source takes whole 1-D string tensors from the worker (no per-record
-- tensor). Inside tf.fn the files are read once, when the function is
-- traced, into a string tensor the graph loop indexes.
-- Installed by lua/tf/data/init.lua with the helpers it shares ('I').
return function(tf, I)
  local core = tf.core
  local internal = core.internal
  local Dataset, new, raise, kw, check_int = I.Dataset, I.new, I.raise, I.kw, I.check_int
  local iters, card, graphs, UNK = I.iters, I.card, I.graphs, I.UNK
  local is_tensor = tf.is_tensor
  local what = "TFRecordDataset"

  local COMP = {[""] = "", NONE = "", ZLIB = "ZLIB", GZIP = "GZIP"}

  local function check_comp(c, who)
    if c == nil then return "" end
    if type(c) ~= "string" or COMP[c] == nil then
      raise("InvalidArgumentError", "%s: 'compression_type' must be \"\", \"ZLIB\" or \"GZIP\", got %s", who,
        type(c) == "string" and ("'" .. c .. "'") or type(c))
    end
    return COMP[c]
  end

  --- filenames: a string, an array of strings, a string tensor (scalar or
  -- vector) or a dataset of string scalars -> array of Lua strings.
  local function file_list(f)
    local out = {}
    local function add(v, where)
      if is_tensor(v) then
        if v.dtype ~= tf.string then
          raise("TypeError", "%s: 'filenames' must hold strings, got a %s tensor%s", what, v.dtype.name, where)
        end
        if v.rank == 0 then out[#out + 1] = v:item()
        else for _, s in ipairs(v:totable()) do out[#out + 1] = s end end
      elseif type(v) == "string" then out[#out + 1] = v
      else raise("TypeError", "%s: 'filenames' must be strings, got %s%s", what, type(v), where) end
    end
    if getmetatable(f) == Dataset then
      local it = I.iter_of(f)
      while true do
        local e = it()
        if e == nil then break end
        add(e[1], " in the filenames dataset")
      end
    elseif type(f) == "table" and not is_tensor(f) and getmetatable(f) == nil then
      for i, v in ipairs(f) do add(v, " at filenames[" .. i .. "]") end
    else
      add(f, "")
    end
    return out
  end

  --- tf.data.TFRecordDataset(filenames [, {compression_type =, buffer_size =,
  -- num_parallel_reads =, skip_corrupt =}]) (TensorFlow's positional order
  -- compression_type, buffer_size, num_parallel_reads works too).
  local function TFRecordDataset(filenames, opts, buffer_size, num_parallel_reads)
    if filenames == nil then raise("TypeError", "%s: 'filenames' is required", what) end
    if type(opts) ~= "table" then
      opts = {compression_type = opts, buffer_size = buffer_size, num_parallel_reads = num_parallel_reads}
    end
    opts = kw(opts, what, {compression_type = true, buffer_size = true, num_parallel_reads = true,
                           skip_corrupt = true, name = true})
    local comp = check_comp(opts.compression_type, what)
    local bs = 0
    if opts.buffer_size ~= nil then bs = check_int(opts.buffer_size, what, "buffer_size") end
    local par = 1
    if opts.num_parallel_reads ~= nil then
      par = check_int(opts.num_parallel_reads, what, "num_parallel_reads", true)
      if par == tf.data.AUTOTUNE then par = internal.cpu_count() end
      if par < 1 then raise("InvalidArgumentError", "%s: 'num_parallel_reads' must be >= 1 or AUTOTUNE, got %d", what, par) end
    end
    local files = file_list(filenames)
    return new("TFRecord", {_files = files, _comp = comp, _bs = bs, _par = par, _skip = opts.skip_corrupt and true or false})
  end
  tf.data.TFRecordDataset = TFRecordDataset

  card.TFRecord = function() return UNK end

  local ropen, rnext, rbatch, rclose, rready = internal.tfrecord_reader_open, internal.tfrecord_next,
    internal.tfrecord_next_batch, internal.tfrecord_reader_close, internal.tfrecord_ready
  local rmany = internal.tfrecord_next_many
  local readio = require("tf.data.readio")

  --- A stream of the records of d's files, 'take(h)' giving the next element
  -- from reader h (a scalar) or up to n records (a vector). With
  -- num_parallel_reads = P > 1, it is TensorFlow's interleave of the files
  -- with cycle_length P, block_length 1 (the order of the sequential
  -- interleave, as deterministic parallel interleave keeps): up to P files
  -- are open at once, read on the threads of a pool, and taken from in turn;
  -- an ended file's slot takes the next file on its next turn. With the
  -- pipeline's Options deterministic = false, a ready file goes first when
  -- the one whose turn it is would wait.
  local function stream(d, take)
    local files, nf = d._files, #d._files
    local P = d._par
    local nextfile = 1
    -- the readers run on the threads of the enclosing interleave's pool, or
    -- of a pool of num_parallel_reads threads, or each on a thread of its own
    local pool = readio.get_pool and readio.get_pool()
    if pool == nil and P > 1 then pool = internal.read_pool(math.min(P, math.max(nf, 1))) end
    local slots, nopen, cur, eoi = {}, 0, 1, false
    local function open_next()
      if nextfile > nf then eoi = true; return false end
      local f = files[nextfile]
      nextfile = nextfile + 1
      local h = ropen(f, d._comp, d._bs, d._skip, pool)
      nopen = nopen + 1
      return h
    end
    -- the first P files are opened at once (slot k takes file k, as visiting
    -- the empty slots in turn would), so that they are read meanwhile
    for k = 1, P do slots[k] = open_next() end
    local function close_all()
      for k = 1, P do if slots[k] then rclose(slots[k]); slots[k] = false end end
      nopen = 0
    end
    local function stop()   -- no more records: the readers are closed now
      close_all()
      eoi = true
      nextfile = nf + 1
    end
    -- deterministic = false (the pipeline's options): a ready file's record
    -- goes first when the one whose turn it is would wait (nil: none)
    local det = readio.deterministic ~= false or P == 1
    local function any_ready()
      while true do
        local h = slots[cur]
        if not h or rready(h) then return nil end
        for k = 1, P - 1 do
          local j = (cur - 1 + k) % P + 1
          local g = slots[j]
          if g and rready(g) then
            local ok, x, off = pcall(take, g)
            if not ok then
              close_all()
              eoi = true
              error(x, 0)
            end
            if x ~= nil then return x, off end
            rclose(g)
            slots[j] = false
            nopen = nopen - 1
            if not eoi then slots[j] = open_next() end
            goto again
          end
        end
        if pool then internal.read_pool_wait(pool, 5) else return nil end
        ::again::
      end
    end
    return function()
      if not det then
        local x, off = any_ready()
        if x ~= nil then return x, off end
      end
      while not eoi or nopen > 0 do
        local h = slots[cur]
        if h then
          local ok, x, off = pcall(take, h)
          if not ok then
            close_all()
            eoi = true
            error(x, 0)
          end
          if x ~= nil then
            cur = cur % P + 1
            return x, off
          end
          rclose(h)
          slots[cur] = false
          nopen = nopen - 1
          cur = cur % P + 1
        elseif not eoi then
          slots[cur] = open_next()
        else
          cur = cur % P + 1
        end
      end
      return nil
    end, function()   -- ready: the next call returns without waiting
      local h = slots[cur]
      if h then return rready(h) end
      return true
    end, stop
  end

  iters.TFRecord = function(d)
    if d._par > 1 then   -- one record from each file in turn
      local nxt, ready, stop = stream(d, rnext)
      local it = function()
        local x = nxt()
        if x == nil then return nil end
        return {n = 1, x}
      end
      readio.ready[it] = ready
      readio.closer[it] = stop
      return it
    end
    -- one file at a time: the records of a worker chunk come in one call
    local nxt, ready, stop = stream(d, function(h) return rmany(h, 4096) end)
    local buf, bi, bn = nil, 0, 0
    local it = function()
      if bi >= bn then
        buf = nxt()
        if buf == nil then bi, bn = 0, 0; return nil end
        bi, bn = 0, #buf
      end
      bi = bi + 1
      local x = buf[bi]
      buf[bi] = false
      return {n = 1, x}
    end
    readio.ready[it] = function() return bi < bn or ready() end
    readio.closer[it] = function() stop(); buf, bi, bn = nil, 0, 0 end
    return it
  end

  -- batch right after the source: whole string vectors from the workers
  local base_batch = iters.Batch
  iters.Batch = function(d)
    local src = d._input
    if src.kind ~= "TFRecord" or src._par > 1 then return base_batch(d) end
    local B, drop = d._size, d._drop
    local nxt, _, stop = stream(src, function(h) return rbatch(h, B) end)
    local pending = nil
    local it
    it = function()
      local x = pending or nxt()
      pending = nil
      if x == nil then return nil end
      local k = x.shape[1]
      while k < B do   -- a file ended (or a reader's chunk): top up from the next
        local y = nxt()
        if y == nil then break end
        local need = B - k
        local m = y.shape[1]
        if m > need then
          pending = tf.slice(y, {need + 1}, {m - need})
          y = tf.slice(y, {1}, {need})
          m = need
        end
        x = tf.concat({x, y}, 1)
        k = k + m
      end
      if drop and k < B then return nil end
      return {n = 1, x}
    end
    readio.closer[it] = function() stop(); pending = nil end
    return it
  end

  --- Inside tf.fn: the records, read when tracing, as one string vector.
  graphs.TFRecord = function(d)
    local parts = {}
    local nxt = stream(d, function(h) return rbatch(h, 1 << 20) end)
    while true do
      local x = nxt()
      if x == nil then break end
      parts[#parts + 1] = x
    end
    local all
    if #parts == 0 then all = tf.constant({}, tf.string)
    elseif #parts == 1 then all = parts[1]
    else all = tf.concat(parts, 1) end
    local n = all.shape[1]
    local function pos(i)
      if type(i) == "number" then return tf.constant(i, tf.int32) end
      if i.dtype ~= tf.int32 then return tf.cast(i, tf.int32) end
      return i
    end
    return {n = n, elem = function(i) return {n = 1, tf.gather(all, pos(i))} end,
            gather = function(idx) return {n = 1, tf.gather(all, pos(idx))} end}
  end
end
