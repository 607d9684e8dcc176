--- tf.data from files (docs/data.md "Datasets from files", "CSV"): file
-- sources (TextLineDataset, FixedLengthRecordDataset, CsvDataset,
-- list_files), interleave, flat_map, window, shard, apply, cache(filename),
-- save/load, element_spec, as_table_iterator, options/with_options, and the
-- generic-for protocol (`for x in ds do`). Installed by lua/tf/data/init.lua
-- with its internals in 'P'.
--
-- File sources are "FileChunks" stages: each file is read (and
-- decompressed, and for CSV parsed) by ONE C call into column tensors
-- (bindings/csv.c, core/csv.c); elements are rows of those columns, and a
-- batch right after the source is sliced out of them (one slice per column
-- and batch, a concat where a batch spans two files).
return function(tf, P)
  local core = tf.core
  local internal = core.internal
  local is_tensor = tf.is_tensor
  local pack, unpack = table.pack, table.unpack
  local sfmt = string.format
  local Dataset, new, iters, card, iter_of = P.Dataset, P.new, P.iters, P.card, P.iter_of
  local raise, kw, check_int, check_self, check_fn, check_ds = P.raise, P.kw, P.check_int, P.check_self,
    P.check_fn, P.check_ds
  local batch_fast, is_plain_table, flatten_elem, tracing, no_graph = P.batch_fast, P.is_plain_table,
    P.flatten_elem, P.tracing, P.no_graph
  local INF, UNK = P.INF, P.UNK
  local data = tf.data
  local readio = require("tf.data.readio")

  local function unary(kind, input, fields)
    fields._input = input
    return new(kind, fields)
  end

  -- {==== file names
  --- A list of Lua strings from a string, an array of strings, a string
  -- tensor (scalar or vector) or a dataset of string scalars.
  local function file_list(x, what)
    local out = {}
    local function add(v)
      if is_tensor(v) then
        if v.dtype ~= tf.string then
          raise("TypeError", "%s: 'filenames' must be strings, got a %s tensor", what, v.dtype.name)
        end
        if v.rank == 0 then out[#out + 1] = v:item()
        else for _, s in ipairs(v:totable()) do out[#out + 1] = s end end
      elseif type(v) == "string" then out[#out + 1] = v
      else raise("TypeError", "%s: 'filenames' must be a string, an array of strings, a string tensor or a dataset " ..
        "of strings, got %s", what, type(v)) end
    end
    if getmetatable(x) == Dataset then
      for _, v in ipairs(x:as_list()) do add(v) end
    elseif is_plain_table(x) then
      for _, v in ipairs(x) do add(v) end
    else add(x) end
    if #out == 0 then raise("InvalidArgumentError", "%s: 'filenames' is empty", what) end
    return out
  end

  local function comp_type(c, what)
    if c == nil or c == "" then return "" end
    if c ~= "GZIP" and c ~= "ZLIB" then
      raise("InvalidArgumentError", "%s: compression_type must be \"\", \"GZIP\" or \"ZLIB\", got %s", what, tostring(c))
    end
    return c
  end
  -- }====

  -- {==== FileChunks: one chunk (a list of column vectors) per file
  local function chunk_rows(flat) return flat[1].shape[1] end

  --- What to load for file i: its path, or the handle of a read started
  -- ahead; starts reading file i + 1 on a worker thread (bindings/csv.c,
  -- file_prefetch: the bytes only, no tensors), so that the next file's I/O
  -- and decompression overlap the consumption of this one.
  local function reader_ahead(d)
    local ahead = {}
    -- reads run on the threads of the enclosing interleave's pool (readio.get_pool), or on one of their own
    local pool = readio.get_pool and readio.get_pool()
    -- the first file is read from the moment the iterator exists (so the
    -- datasets interleave keeps open read their files at the same time)
    if d._comp ~= nil and #d._files > 0 then ahead[1] = internal.file_prefetch(d._files[1], d._comp, pool) end
    return function(i)
      local h = ahead[i]
      ahead[i] = nil
      local files = d._files
      if d._comp ~= nil and i + 1 <= #files and ahead[i + 1] == nil then
        ahead[i + 1] = internal.file_prefetch(files[i + 1], d._comp, pool)
      end
      return h or files[i]
    end, function(i)   -- whether file i's read has ended (or it has none: read when needed)
      local h = ahead[i]
      return h == nil or internal.file_ready(h)
    end, function()   -- stop: reads started ahead are dropped now
      for i, h in pairs(ahead) do internal.file_prefetch_close(h); ahead[i] = nil end
    end
  end

  --- The elements of the files in turn (cycle 1), or interleaved one
  -- element at a time over 'cycle' files (num_parallel_reads).
  iters.FileChunks = function(d)
    if tracing() then
      no_graph(d._what, "files are read by Lua-side readers: iterate the dataset outside tf.fn")
    end
    local files, load, rebuild, cycle = d._files, d._load, d._rebuild, d._cycle
    local nextfile = 0
    local src, src_ready, src_stop = reader_ahead(d)
    local function open()
      nextfile = nextfile + 1
      if nextfile > #files then return nil end
      local flat = load(src(nextfile))
      return {flat = flat, n = chunk_rows(flat), r = 0}
    end
    local slots, cur = {}, 1
    for s = 1, cycle do slots[s] = false end
    local ended = false
    local it = function()
      while true do
        local live = false
        for s = 1, cycle do
          if slots[s] == false and not ended then
            slots[s] = open()
            if slots[s] == nil then ended = true; slots[s] = false end
          end
          if slots[s] then live = true end
        end
        if not live then return nil end
        local c = slots[cur]
        local here = cur
        cur = cur % cycle + 1
        if c then
          if c.r < c.n then
            c.r = c.r + 1
            local out = {}
            for j, t in ipairs(c.flat) do out[j] = tf.gather(t, c.r) end
            return rebuild(out)
          end
          slots[here] = false
        end
      end
    end
    readio.ready[it] = function()   -- a row is there, or the next file's read has ended
      local c = slots[cur]
      if c and c.r < c.n then return true end
      return ended or src_ready(nextfile + 1)
    end
    readio.closer[it] = function()
      src_stop()
      ended = true
      for s = 1, cycle do slots[s] = false end
    end
    return it
  end
  card.FileChunks = function() return UNK end

  --- batch(n) right after a file source (files read in turn): slices of
  -- the column tensors, concatenated where a batch spans files.
  batch_fast.FileChunks = function(d, B, drop)
    if d._cycle > 1 or tracing() then return nil end
    local files, load, rebuild = d._files, d._load, d._rebuild
    local fi, flat, n, r = 0, nil, 0, 0
    local src = reader_ahead(d)
    return function()
      local pieces, got = {}, 0
      while got < B do
        if r >= n then
          fi = fi + 1
          if fi > #files then break end
          flat = load(src(fi))
          n, r = chunk_rows(flat), 0
        else
          local k = math.min(B - got, n - r)
          local part = {}
          for j, t in ipairs(flat) do
            local b, z = {r + 1}, {k}
            for q = 2, t.rank do b[q] = 1; z[q] = -1 end
            part[j] = tf.slice(t, b, z)
          end
          pieces[#pieces + 1] = part
          r, got = r + k, got + k
        end
      end
      if got == 0 or (drop and got < B) then return nil end
      if #pieces == 1 then return rebuild(pieces[1]) end
      local out = {}
      for j = 1, #pieces[1] do
        local col = {}
        for p = 1, #pieces do col[p] = pieces[p][j] end
        out[j] = tf.concat(col, 1)
      end
      return rebuild(out)
    end
  end

  local function single(flat) return {n = 1, flat[1]} end

  --- TextLineDataset with buffer_size: the lines of each file in chunks of
  -- about buffer_size bytes, read on a reader-pool thread (the next file is
  -- opened when the current one is, so its first chunk is read meanwhile).
  iters.TextStream = function(d)
    if tracing() then no_graph("TextLineDataset", "files are read by Lua-side readers: iterate the dataset outside tf.fn") end
    local files, comp, bs = d._files, d._comp, d._bs
    local pool = readio.get_pool and readio.get_pool()
    local lopen, lnext, lready, lclose = internal.lines_open, internal.lines_next, internal.lines_ready,
      internal.lines_close
    local fi, h, ahead, ahead_err = 0, nil, nil, nil
    local cur, n, r = nil, 0, 0
    local it = function()
      while true do
        if r < n then
          r = r + 1
          return {n = 1, tf.gather(cur, r)}
        end
        if h then
          local ok, t = pcall(lnext, h)
          if not ok then
            lclose(h); h = nil
            if ahead then lclose(ahead); ahead = nil end
            fi = #files
            error(t, 0)
          end
          if t then cur, n, r = t, t.shape[1], 0
          else lclose(h); h = nil end
        else
          fi = fi + 1
          if fi > #files then return nil end
          if ahead_err then   -- the file opened ahead failed: raised at its turn
            local e = ahead_err
            ahead_err = nil
            fi = #files
            error(e, 0)
          end
          h = ahead or lopen(files[fi], comp, bs, pool)
          ahead = nil
          if fi + 1 <= #files then
            local ok, x = pcall(lopen, files[fi + 1], comp, bs, pool)
            if ok then ahead = x else ahead_err = x end
          end
        end
      end
    end
    readio.ready[it] = function() return r < n or h == nil or lready(h) end
    readio.closer[it] = function()
      if h then lclose(h); h = nil end
      if ahead then lclose(ahead); ahead = nil end
      ahead_err, cur, n, r, fi = nil, nil, 0, 0, #files
    end
    return it
  end
  card.TextStream = function() return UNK end

  --- tf.data.TextLineDataset(filenames [, {compression_type=, buffer_size=, num_parallel_reads=}]):
  -- the lines of the files (string scalars, LF or CRLF removed), file after file. With buffer_size
  -- (and one file at a time) the files are streamed in pieces of that many bytes (TextStream).
  function data.TextLineDataset(filenames, opts)
    local what = "TextLineDataset"
    if type(opts) == "string" then opts = {compression_type = opts} end
    opts = kw(opts, what, {compression_type = true, buffer_size = true, num_parallel_reads = true, name = true})
    local files = file_list(filenames, what)
    local comp = comp_type(opts.compression_type, what)
    local cycle = opts.num_parallel_reads and check_int(opts.num_parallel_reads, what, "num_parallel_reads", true) or 1
    if cycle == -1 then cycle = #files end
    if cycle < 1 then raise("InvalidArgumentError", "%s: 'num_parallel_reads' must be positive, got %d", what, cycle) end
    if opts.buffer_size ~= nil and math.min(cycle, #files) == 1 then
      -- bounded memory: the files are read buffer_size bytes at a time (bindings/textlines.c)
      local bs = check_int(opts.buffer_size, what, "buffer_size", true)
      if bs < 1 then raise("InvalidArgumentError", "%s: 'buffer_size' must be positive, got %d", what, bs) end
      return new("TextStream", {_what = what, _files = files, _comp = comp, _bs = bs})
    end
    return new("FileChunks", {_what = what, _files = files, _cycle = math.min(cycle, #files), _rebuild = single,
      _comp = comp,
      _load = function(f) return {internal.read_lines(f, comp)} end})
  end

  --- tf.data.FixedLengthRecordDataset(filenames, record_bytes [, {header_bytes=, footer_bytes=,
  -- compression_type=, buffer_size=, num_parallel_reads=}]): string scalars of record_bytes bytes.
  function data.FixedLengthRecordDataset(filenames, record_bytes, opts)
    local what = "FixedLengthRecordDataset"
    opts = kw(opts, what, {header_bytes = true, footer_bytes = true, compression_type = true, buffer_size = true,
                           num_parallel_reads = true, name = true})
    local files = file_list(filenames, what)
    record_bytes = check_int(record_bytes, what, "record_bytes", true)
    local hb = check_int(opts.header_bytes or 0, what, "header_bytes")
    local fb = check_int(opts.footer_bytes or 0, what, "footer_bytes")
    if record_bytes < 1 then
      raise("InvalidArgumentError", "%s: 'record_bytes' must be positive, got %d", what, record_bytes)
    end
    local comp = comp_type(opts.compression_type, what)
    local cycle = opts.num_parallel_reads and check_int(opts.num_parallel_reads, what, "num_parallel_reads", true) or 1
    if cycle == -1 then cycle = #files end
    return new("FileChunks", {_what = what, _files = files, _cycle = math.max(1, math.min(cycle, #files)), _comp = comp,
      _rebuild = single, _load = function(f) return {internal.read_fixed(f, record_bytes, hb, fb, comp)} end})
  end

  --- Dataset.list_files(file_pattern [, {shuffle=true, seed=}]): the
  -- matching file names (string scalars), sorted, then shuffled unless
  -- shuffle = false (with a seed the order is reproducible).
  function Dataset.list_files(pattern, opts)
    local what = "list_files"
    if type(opts) == "boolean" then opts = {shuffle = opts} end
    opts = kw(opts, what, {shuffle = true, seed = true, name = true})
    local pats = file_list(pattern, what)
    local names, seen = {}, {}
    for _, p in ipairs(pats) do
      for _, f in ipairs(internal.glob(p)) do
        if not seen[f] then seen[f] = true; names[#names + 1] = f end
      end
    end
    if #names == 0 then
      raise("InvalidArgumentError", "list_files: No files matched pattern: %s", table.concat(pats, ","))
    end
    table.sort(names)
    local ds = Dataset.from_tensor_slices(tf.constant(names))
    if opts.shuffle == nil or opts.shuffle then ds = ds:shuffle(#names, {seed = opts.seed}) end
    return ds
  end
  -- }====

  -- {==== CSV
  local function is_dtype(x) return getmetatable(x) ~= nil and rawget(getmetatable(x), "__name") == "tf.DType" end
  local CSV_DTYPES = {float32 = true, float64 = true, int32 = true, int64 = true, string = true}

  --- record_defaults entries as tensors: a number (integer: int32, float:
  -- float32), a string, a tensor (scalar, one-element vector, or empty:
  -- required) or a dtype (required).
  local function csv_defaults(defs, what)
    if not is_plain_table(defs) or #defs == 0 then
      raise("InvalidArgumentError", "%s: 'record_defaults' must be a non-empty array", what)
    end
    local out = {}
    for i, v in ipairs(defs) do
      local t
      if is_dtype(v) then t = tf.constant({}, v)
      elseif is_tensor(v) then t = v
      elseif math.type(v) == "integer" then t = tf.constant(v, tf.int32)
      elseif math.type(v) == "float" then t = tf.constant(v, tf.float32)
      elseif type(v) == "string" then t = tf.constant(v)
      elseif is_plain_table(v) and #v <= 1 then
        t = #v == 0 and tf.constant({}, tf.float32) or csv_defaults({v[1]}, what)[1]
      else
        raise("TypeError", "%s: record_defaults[%d] must be a number, a string, a tensor or a dtype, got %s", what, i,
          type(v))
      end
      if not CSV_DTYPES[t.dtype.name] then
        raise("InvalidArgumentError", "%s: record_defaults[%d] has dtype %s: expected float32, float64, int32, int64 " ..
          "or string", what, i, t.dtype.name)
      end
      if t.rank > 1 or (t.rank == 1 and t.shape[1] > 1) then
        raise("InvalidArgumentError", "%s: record_defaults[%d] must be a scalar, a one-element vector or empty " ..
          "(required), got shape %s", what, i, tostring(t.shape))
      end
      out[i] = t
    end
    return out
  end

  --- select_cols (1-based, increasing) as an int64 tensor of 0-based indices.
  local function csv_select(sel, n, what)
    if sel == nil then return tf.constant({}, tf.int64) end
    if is_tensor(sel) then sel = sel:totable() end
    if not is_plain_table(sel) or #sel ~= n then
      raise("InvalidArgumentError", "%s: 'select_cols' must list one (1-based) column per record default: %d " ..
        "entries for %d defaults", what, is_plain_table(sel) and #sel or 0, n)
    end
    local z = {}
    for i, c in ipairs(sel) do
      if math.type(c) ~= "integer" or c < 1 or (i > 1 and c <= sel[i - 1]) then
        raise("InvalidArgumentError", "%s: 'select_cols' must be increasing 1-based column positions, got %s at %d",
          what, tostring(c), i)
      end
      z[i] = c - 1
    end
    return tf.constant(z, tf.int64)
  end

  local function csv_opts(opts, what)
    local delim = opts.field_delim or ","
    if type(delim) ~= "string" or #delim ~= 1 then
      raise("InvalidArgumentError", "%s: 'field_delim' must be one character, got %s", what, tostring(delim))
    end
    local quote = opts.use_quote_delim
    if quote == nil then quote = true end
    local na = opts.na_value or ""
    if type(na) ~= "string" then raise("TypeError", "%s: 'na_value' must be a string", what) end
    return delim, quote, na
  end

  --- tf.io.decode_csv's implementation (lua/tf/io_csv.lua installs it):
  -- one tensor per column, returned as multiple values.
  function data._decode_csv(records, record_defaults, opts)
    local what = "decode_csv"
    opts = kw(opts, what, {field_delim = true, use_quote_delim = true, na_value = true, select_cols = true,
                           name = true})
    local defs = csv_defaults(record_defaults, what)
    local sel = csv_select(opts.select_cols, #defs, what)
    local delim, quote, na = csv_opts(opts, what)
    if not is_tensor(records) then records = tf.constant(records) end
    return internal.decode_csv(records, sel, delim, quote, na, unpack(defs))
  end

  local csv_exclude   -- below
  local CSV_KW = {compression_type = true, buffer_size = true, header = true, field_delim = true,
                  use_quote_delim = true, na_value = true, select_cols = true, exclude_cols = true, name = true}

  local function csv_source(files, defs, opts, what, rebuild)
    local sel = csv_select(opts.select_cols, #defs, what)
    local delim, quote, na = csv_opts(opts, what)
    local comp = comp_type(opts.compression_type, what)
    local header = opts.header and true or false
    return new("FileChunks", {_what = what, _files = files, _cycle = 1, _comp = comp,
      _rebuild = rebuild or function(flat) flat.n = #defs; return flat end,
      _load = function(f) return pack(internal.csv_read(f, comp, delim, quote, na, header, sel, unpack(defs))) end})
  end

  --- The fields of a CSV line (quotes respected): their count.
  local function count_fields(line, delim, quote)
    local n, inq = 1, false
    for ch in line:gmatch(".") do
      if quote and ch == '"' then inq = not inq elseif ch == delim and not inq then n = n + 1 end
    end
    return n
  end

  --- exclude_cols (1-based, increasing) as the select_cols of the other
  -- columns: the column count is that of the first line of the first file.
  csv_exclude = function(opts, path, ndefs, what)
    if opts.select_cols ~= nil then
      raise("InvalidArgumentError", "%s: 'select_cols' and 'exclude_cols' are mutually exclusive: give one", what)
    end
    local ex = opts.exclude_cols
    if is_tensor(ex) then ex = ex:totable() end
    if not is_plain_table(ex) then
      raise("TypeError", "%s: 'exclude_cols' must be a list of 1-based column positions, got %s", what, type(ex))
    end
    for i, c in ipairs(ex) do
      if math.type(c) ~= "integer" or c < 1 or (i > 1 and c <= ex[i - 1]) then
        raise("InvalidArgumentError", "%s: 'exclude_cols' must be increasing 1-based column positions, got %s at %d",
          what, tostring(c), i)
      end
    end
    local delim, quote = csv_opts(opts, what)
    local comp = comp_type(opts.compression_type, what)
    local line
    local f = comp == "" and io.open(path, "rb")
    if f then
      line = f:read("l") or ""
      f:close()
    else
      line = internal.read_bytes(path, comp):match("^([^\n]*)")   -- raises the reader's error for a missing file
    end
    line = line:gsub("\r$", "")
    local ncols = count_fields(line, delim, quote)
    local drop, sel = {}, {}
    for _, c in ipairs(ex) do
      if c > ncols then
        raise("InvalidArgumentError", "%s: 'exclude_cols' names column %d, but %s has %d columns", what, c, path, ncols)
      end
      drop[c] = true
    end
    for c = 1, ncols do if not drop[c] then sel[#sel + 1] = c end end
    if #sel ~= ndefs then
      raise("InvalidArgumentError", "%s: %s has %d columns, %d excluded: %d record_defaults expected, got %d", what,
        path, ncols, #ex, #sel, ndefs)
    end
    return sel
  end

  --- tf.data.experimental.CsvDataset(filenames, record_defaults [, {header=, field_delim=,
  -- use_quote_delim=, na_value=, select_cols= | exclude_cols=, compression_type=, buffer_size=}]):
  -- one tuple of column scalars per record.
  function data.experimental.CsvDataset(filenames, record_defaults, opts)
    local what = "CsvDataset"
    opts = kw(opts, what, CSV_KW)
    local files, defs = file_list(filenames, what), csv_defaults(record_defaults, what)
    if opts.exclude_cols ~= nil then
      local o = {}
      for k, v in pairs(opts) do o[k] = v end
      o.select_cols = csv_exclude(opts, files[1], #defs, what)
      o.exclude_cols = nil
      opts = o
    end
    return csv_source(files, defs, opts, what)
  end

  --- Split the first line of 'path' (header names).
  local function csv_header(path, comp, delim, quote)
    local text = internal.read_bytes(path, comp)
    local line = text:match("^([^\n]*)") or ""
    line = line:gsub("\r$", "")
    local names = {internal.decode_csv(tf.constant({line}), tf.constant({}, tf.int64), delim, quote, "",
      unpack((function()
        local n = 1
        local inq = false
        for ch in line:gmatch(".") do
          if quote and ch == '"' then inq = not inq elseif ch == delim and not inq then n = n + 1 end
        end
        local ds = {}
        for i = 1, n do ds[i] = tf.constant("") end
        return ds
      end)()))}
    for i, t in ipairs(names) do names[i] = t:totable()[1] end
    return names, text
  end

  --- TensorFlow's type inference (make_csv_dataset without column_defaults):
  -- per column the first type of int32, int64, float32, float64, string
  -- that every value (of up to 'rows' records) parses as.
  local ORDER = {"int32", "int64", "float32", "float64", "string"}
  local function infer_type(s, na, cur)
    if s == "" or s == na then return cur end
    local start = cur or 1
    for k = start, 5 do
      local ok
      if k <= 2 then
        local v = s:match("^[+-]?%d+$") and math.tointeger(tonumber(s))
        ok = v ~= nil and (k == 2 or (v >= -2147483648 and v <= 2147483647))
        if v == nil and s:match("^[+-]?%d+$") then ok = false end
      elseif k <= 4 then
        local v = tonumber(s)
        ok = v ~= nil and not s:match("^0[xX]") and (k == 4 or math.abs(v) <= 3.4028234663852886e38 or v ~= v)
      else ok = true end
      if ok then return k end
    end
    return 5
  end

  --- tf.data.experimental.make_csv_dataset(file_pattern, batch_size [, {column_names=,
  -- column_defaults=, label_name=, select_columns=, field_delim=, use_quote_delim=, na_value=,
  -- header=true, num_epochs=, shuffle=true, shuffle_buffer_size=10000, shuffle_seed=,
  -- prefetch_buffer_size=, num_rows_for_inference=100, compression_type=, ignore_errors=false}]):
  -- batches of {column name = column values} (and the label column apart when label_name is set).
  function data.experimental.make_csv_dataset(file_pattern, batch_size, opts)
    local what = "make_csv_dataset"
    opts = kw(opts, what, {column_names = true, column_defaults = true, label_name = true, select_columns = true,
      field_delim = true, use_quote_delim = true, na_value = true, header = true, num_epochs = true, shuffle = true,
      shuffle_buffer_size = true, shuffle_seed = true, prefetch_buffer_size = true, num_parallel_reads = true,
      sloppy = true, num_rows_for_inference = true, compression_type = true, ignore_errors = true,
      encoding = true})
    batch_size = check_int(batch_size, what, "batch_size", true)
    if batch_size < 1 then raise("InvalidArgumentError", "%s: 'batch_size' must be positive, got %d", what, batch_size) end
    local pats = file_list(file_pattern, what)
    local files = {}
    for _, p in ipairs(pats) do
      local m = internal.glob(p)
      for _, f in ipairs(m) do files[#files + 1] = f end
    end
    if #files == 0 then raise("InvalidArgumentError", "%s: No files matched pattern: %s", what, table.concat(pats, ",")) end
    table.sort(files)
    local delim, quote, na = csv_opts(opts, what)
    local comp = comp_type(opts.compression_type, what)
    local header = opts.header
    if header == nil then header = true end
    local names = opts.column_names
    local first_text
    if names == nil then
      if not header then
        raise("InvalidArgumentError", "%s: column_names are required when header is false", what)
      end
      names, first_text = csv_header(files[1], comp, delim, quote)
    end
    local seen = {}
    for i, n in ipairs(names) do
      if seen[n] then raise("InvalidArgumentError", "%s: column name %q appears twice", what, n) end
      seen[n] = i
    end
    -- the selected columns (names or 1-based positions), in file order
    local sel
    if opts.select_columns ~= nil then
      sel = {}
      for _, c in ipairs(opts.select_columns) do
        local i = type(c) == "string" and seen[c] or c
        if math.type(i) ~= "integer" or i < 1 or i > #names then
          raise("InvalidArgumentError", "%s: select_columns entry %s is not a column (names: %s)", what, tostring(c),
            table.concat(names, ", "))
        end
        sel[#sel + 1] = i
      end
      table.sort(sel)
    else
      sel = {}
      for i = 1, #names do sel[i] = i end
    end
    local label = opts.label_name
    if label ~= nil then
      local found = false
      for _, i in ipairs(sel) do if names[i] == label then found = true end end
      if not found then
        raise("InvalidArgumentError", "%s: label_name %q is not among the columns (%s)", what, tostring(label),
          table.concat(names, ", "))
      end
    end
    local defs = opts.column_defaults
    if defs == nil then
      -- infer from the first records of the first file
      first_text = first_text or internal.read_bytes(files[1], comp)
      local limit = opts.num_rows_for_inference or 100
      local types = {}
      local k, line_no = 0, 0
      for line in first_text:gmatch("[^\n]+") do
        line_no = line_no + 1
        if not (header and line_no == 1) then
          k = k + 1
          if k > limit then break end
          line = line:gsub("\r$", "")
          local fields = {}
          local pos = 1
          -- simple split honouring quotes
          local buf, inq = {}, false
          for ch in (line .. delim):gmatch(".") do
            if quote and ch == '"' then inq = not inq
            elseif ch == delim and not inq then fields[#fields + 1] = table.concat(buf); buf = {}
            else buf[#buf + 1] = ch end
          end
          _ = pos
          for j, i in ipairs(sel) do types[j] = infer_type(fields[i] or "", na, types[j]) end
        end
      end
      defs = {}
      for j = 1, #sel do
        local ty = ORDER[types[j] or 5]
        defs[j] = ty == "string" and tf.constant("") or tf.constant(0, tf[ty])
      end
    else
      if #defs ~= #sel then
        raise("InvalidArgumentError", "%s: %d column_defaults for %d columns", what, #defs, #sel)
      end
    end
    defs = csv_defaults(defs, what)
    local sel_names = {}
    for j, i in ipairs(sel) do sel_names[j] = names[i] end
    local function rebuild(flat)
      local feats = {}
      local lab
      for j, nm in ipairs(sel_names) do
        if nm == label then lab = flat[j] else feats[nm] = flat[j] end
      end
      if label ~= nil then return {n = 2, feats, lab} end
      return {n = 1, feats}
    end
    local ds = csv_source(files, defs, {header = header, field_delim = delim, use_quote_delim = quote, na_value = na,
      select_cols = opts.select_columns ~= nil and sel or nil, compression_type = comp}, what, rebuild)
    local epochs = opts.num_epochs
    if epochs == nil then epochs = -1 end
    if epochs ~= 1 then ds = ds:repeat_(epochs) end
    local shuffle = opts.shuffle
    if shuffle == nil then shuffle = true end
    if shuffle then ds = ds:shuffle(opts.shuffle_buffer_size or 10000, {seed = opts.shuffle_seed}) end
    ds = ds:batch(batch_size)
    return ds
  end
  -- }====

  -- {==== transformations
  --- ds:apply(fn): fn(ds), which must return a dataset.
  function Dataset:apply(fn)
    check_self(self, "apply")
    check_fn(fn, "apply")
    local r = fn(self)
    if getmetatable(r) ~= Dataset then
      raise("TypeError", "apply: the function must return a tf.data.Dataset, got %s", type(r))
    end
    return r
  end

  local function call_ds_fn(fn, e, what)
    local r = fn(unpack(e, 1, e.n))
    if getmetatable(r) ~= Dataset then
      raise("TypeError", "%s: the function must return a tf.data.Dataset, got %s", what,
        tostring(getmetatable(r) and getmetatable(r).__name or type(r)))
    end
    return r
  end

  --- ds:flat_map(fn): fn(values...) returns a dataset; its elements in turn.
  function Dataset:flat_map(fn)
    check_self(self, "flat_map")
    check_fn(fn, "flat_map")
    return unary("FlatMap", self, {_fn = fn})
  end
  iters.FlatMap = function(d)
    if tracing() then no_graph("flat_map", "its function runs in Lua: iterate the dataset outside tf.fn") end
    local it = iter_of(d._input)
    local inner
    return function()
      while true do
        if inner then
          local e = inner()
          if e ~= nil then return e end
          inner = nil
        end
        local x = it()
        if x == nil then return nil end
        inner = iter_of(call_ds_fn(d._fn, x, "flat_map"))
      end
    end
  end
  card.FlatMap = function(d)
    if d._input:cardinality() == INF then return INF end
    return UNK
  end

  --- ds:interleave(fn [, {cycle_length=, block_length=1, num_parallel_calls=, deterministic=}]):
  -- TensorFlow's order: cycle_length datasets from fn(element) open at
  -- once, block_length elements from each in turn; an ended one is
  -- replaced by the dataset of the next input element.
  function Dataset:interleave(fn, opts)
    check_self(self, "interleave")
    check_fn(fn, "interleave")
    local what = "interleave"
    if math.type(opts) == "integer" then opts = {cycle_length = opts} end
    opts = kw(opts, what, {cycle_length = true, block_length = true, num_parallel_calls = true,
                           deterministic = true, name = true})
    local cyc = opts.cycle_length
    if cyc == nil or cyc == data.AUTOTUNE then cyc = internal.cpu_count and internal.cpu_count() or 2 end
    cyc = check_int(cyc, what, "cycle_length", true)
    local blk = check_int(opts.block_length or 1, what, "block_length", true)
    if cyc < 1 then raise("InvalidArgumentError", "interleave: 'cycle_length' must be positive, got %d", cyc) end
    if blk < 1 then raise("InvalidArgumentError", "interleave: 'block_length' must be positive, got %d", blk) end
    local par
    if opts.num_parallel_calls ~= nil then
      par = check_int(opts.num_parallel_calls, what, "num_parallel_calls", true)
      if par < -1 or par == 0 then
        raise("InvalidArgumentError", "interleave: 'num_parallel_calls' must be positive or AUTOTUNE, got %d", par)
      end
      if par == data.AUTOTUNE then par = internal.cpu_count() end
    end
    local det = opts.deterministic
    if det ~= nil and type(det) ~= "boolean" then
      raise("TypeError", "interleave: 'deterministic' must be a boolean or nil, got %s", type(det))
    end
    return unary("Interleave", self, {_fn = fn, _cycle = cyc, _block = blk, _par = par, _det = det})
  end
  iters.Interleave = function(d)
    if tracing() then no_graph("interleave", "its function runs in Lua: iterate the dataset outside tf.fn") end
    local it = iter_of(d._input)
    local C, B = d._cycle, d._block
    local slots, open, idx, bi, eoi = {}, 0, 1, 0, false
    -- deterministic: the argument, else the pipeline's options, else true
    local det = d._det
    if det == nil then det = readio.deterministic end
    if det == nil then det = true end
    -- the file readers of fn's datasets run on a pool of num_parallel_calls
    -- threads (one without it), made when the first reader asks for it
    local pool
    local function get_pool()
      pool = pool or internal.read_pool(d._par or 1)
      return pool
    end
    local function open_slot(x)
      local ds = call_ds_fn(d._fn, x, "interleave")
      return readio.with({get_pool = get_pool}, iter_of, ds)
    end
    local function advance() bi = 0; idx = idx % C + 1 end
    --- Fill the empty slots now, in the order the cycle will visit them
    -- (the same input element goes to the same slot as filling each on its
    -- visit would): their datasets' iterators exist at once, so file
    -- sources among them read their files on the pool's threads meanwhile.
    local function fill()
      for k = 0, C - 1 do
        if eoi then return end
        local j = (idx - 1 + k) % C + 1
        if not slots[j] then
          local x = it()
          if x == nil then eoi = true; return end
          slots[j] = open_slot(x)
          open = open + 1
        end
      end
    end
    local ready = readio.ready
    --- deterministic = false: when the slot whose turn it is would wait,
    -- an element of another slot that is ready goes first; when none is
    -- ready, wait for any of the pool's readers (nil: take the slot's turn)
    local function any_ready()
      while true do
        local s = slots[idx]
        local r = s and ready[s]
        if not r or r() then return nil end
        for k = 1, C - 1 do
          local j = (idx - 1 + k) % C + 1
          local t = slots[j]
          if t and ready[t] and ready[t]() then
            local e = t()
            if e ~= nil then return e end
            slots[j] = nil   -- ended: the next input takes its place
            open = open - 1
            if not eoi then
              local x = it()
              if x == nil then eoi = true
              else
                slots[j] = open_slot(x)
                open = open + 1
              end
            end
            goto again
          end
        end
        if not pool then return nil end
        internal.read_pool_wait(pool, 5)
        ::again::
      end
    end
    local iter
    iter = function()
      while not eoi or open > 0 do
        if not eoi and not slots[idx] then fill() end
        if not det then
          local e = any_ready()
          if e ~= nil then return e end
        end
        local s = slots[idx]
        if s then
          local e = s()
          if e ~= nil then
            bi = bi + 1
            if bi == B then advance() end
            return e
          end
          slots[idx] = nil
          open = open - 1
          advance()
        elseif not eoi then
          local x = it()
          if x == nil then eoi = true
          else
            slots[idx] = open_slot(x)
            open = open + 1
          end
        else
          advance()
        end
      end
      return nil
    end
    readio.closer[iter] = function()   -- the open datasets' readers and the pool's threads end now
      for j = 1, C do
        if slots[j] then readio.close(slots[j]); slots[j] = nil end
      end
      open, eoi = 0, true
      readio.close(it)
      if pool then internal.read_pool_close(pool) end
    end
    return iter
  end
  card.Interleave = card.FlatMap

  --- ds:shard(num_shards, index): every num_shards-th element starting at
  -- position 'index' -- 1-BASED (1..num_shards) as luatf's positions are
  -- (enumerate starts at 1; TensorFlow's worker index i is i + 1 here).
  function Dataset:shard(num_shards, index)
    check_self(self, "shard")
    num_shards = check_int(num_shards, "shard", "num_shards", true)
    index = check_int(index, "shard", "index", true)
    if num_shards < 1 then raise("InvalidArgumentError", "shard: 'num_shards' must be positive, got %d", num_shards) end
    if index < 1 or index > num_shards then
      raise("InvalidArgumentError", "shard: 'index' is 1-based and must be in 1..%d, got %d (TensorFlow's 0-based " ..
        "index i is i + 1 in luatf)", num_shards, index)
    end
    return unary("Shard", self, {_n = num_shards, _i = index})
  end
  iters.Shard = function(d)
    local it = iter_of(d._input)
    local n, i, pos = d._n, d._i, 0
    return function()
      while true do
        local e = it()
        if e == nil then return nil end
        pos = pos + 1
        if (pos - 1) % n == i - 1 then return e end
      end
    end
  end
  card.Shard = function(d)
    local c = d._input:cardinality()
    if c < 0 then return c end
    return c // d._n + (((d._i - 1) < c % d._n) and 1 or 0)
  end

  --- A dataset over a Lua array of packed elements (window contents).
  local function list_ds(elems) return new("List", {_elems = elems}) end
  iters.List = function(d)
    local i, es = 0, d._elems
    return function()
      i = i + 1
      return es[i]
    end
  end
  card.List = function(d) return #d._elems end

  --- ds:window(size [, {shift=size, stride=1, drop_remainder=false}]) (or
  -- window(size, shift, stride, drop_remainder)): each element is a
  -- dataset of up to 'size' elements (a tuple element gives a tuple of
  -- datasets); window k starts at element (k - 1) * shift + 1 and takes
  -- every stride-th element.
  function Dataset:window(size, shift, stride, drop)
    check_self(self, "window")
    local what = "window"
    if is_plain_table(shift) then
      local o = kw(shift, what, {shift = true, stride = true, drop_remainder = true, name = true})
      shift, stride, drop = o.shift, o.stride, o.drop_remainder
    end
    size = check_int(size, what, "size", true)
    shift = check_int(shift or size, what, "shift", true)
    stride = check_int(stride or 1, what, "stride", true)
    for _, p in ipairs({{"size", size}, {"shift", shift}, {"stride", stride}}) do
      if p[2] < 1 then raise("InvalidArgumentError", "window: '%s' must be positive, got %d", p[1], p[2]) end
    end
    return unary("Window", self, {_size = size, _shift = shift, _stride = stride, _drop = drop and true or false})
  end
  iters.Window = function(d)
    local it = iter_of(d._input)
    local size, shift, stride, drop = d._size, d._shift, d._stride, d._drop
    local buf, base, ended, start = {}, 1, false, 1   -- buf[k] is input element base + k - 1
    local function fetch(upto)
      while not ended and base + #buf - 1 < upto do
        local e = it()
        if e == nil then ended = true else buf[#buf + 1] = e end
      end
    end
    return function()
      while true do
        local last = start + (size - 1) * stride
        fetch(last)
        local w = {}
        for p = start, last, stride do
          local e = buf[p - base + 1]
          if e == nil then break end
          w[#w + 1] = e
        end
        if #w == 0 or (drop and #w < size) then return nil end
        start = start + shift
        -- drop what no later window needs
        local keep_from = start - base + 1
        if keep_from > 1 then
          local nb = {}
          for k = keep_from, #buf do nb[#nb + 1] = buf[k] end
          base = base + keep_from - 1
          buf = nb
        end
        local k = w[1].n
        local out = {n = k}
        for c = 1, k do
          local col = {}
          for j, e in ipairs(w) do col[j] = {n = 1, e[c]} end
          out[c] = list_ds(col)
        end
        return out
      end
    end
  end
  card.Window = function(d)
    local c = d._input:cardinality()
    if c < 0 then return c end
    if d._drop then
      local span = (d._size - 1) * d._stride + 1
      if c < span then return 0 end
      return (c - span) // d._shift + 1
    end
    return (c + d._shift - 1) // d._shift
  end

  --- ds:with_options(tf.data.Options{...}) / ds:options(): options travel
  -- with the pipeline (the outermost setting wins).
  local Options = {__name = "tf.data.Options"}
  Options.__index = Options
  local OPT_KW = {deterministic = true, threading = true, experimental_optimization = true, autotune = true,
                  experimental_deterministic = true}
  function data.Options(t)
    t = kw(t, "Options", OPT_KW)
    local o = setmetatable({}, Options)
    if t.deterministic ~= nil then o.deterministic = t.deterministic and true or false end
    if t.experimental_deterministic ~= nil then o.deterministic = t.experimental_deterministic and true or false end
    o.threading = {}
    if t.threading ~= nil then
      local th = kw(t.threading, "Options.threading", {private_threadpool_size = true, max_intra_op_parallelism = true})
      for k, v in pairs(th) do o.threading[k] = check_int(v, "Options.threading", k) end
    end
    return o
  end
  function Dataset:with_options(o)
    check_self(self, "with_options")
    if getmetatable(o) ~= Options then
      raise("TypeError", "with_options: expected a tf.data.Options, got %s", type(o))
    end
    return unary("WithOptions", self, {_options = o})
  end
  iters.WithOptions = function(d)
    local det = d._options.deterministic
    if det == nil then return iter_of(d._input) end
    return readio.with({deterministic = det}, iter_of, d._input)
  end
  card.WithOptions = function(d) return d._input:cardinality() end
  function Dataset:options()
    check_self(self, "options")
    local r = data.Options()
    local chain = {}
    local function walk(x)
      if x.kind == "WithOptions" then chain[#chain + 1] = x._options end
      if x._input then walk(x._input) end
      if x._inputs then for _, y in ipairs(x._inputs) do walk(y) end end
    end
    walk(self)
    for k = #chain, 1, -1 do   -- inner first, outer overrides
      local o = chain[k]
      if o.deterministic ~= nil then r.deterministic = o.deterministic end
      for a, v in pairs(o.threading) do r.threading[a] = v end
    end
    if r.deterministic == nil then r.deterministic = true end
    return r
  end
  -- }====

  -- {==== Lua values and the generic for
  local function to_lua(x)
    if is_tensor(x) then
      if x.rank == 0 then return x:item() end
      return x:totable()
    end
    if is_plain_table(x) then
      local r = {}
      for k, v in pairs(x) do r[k] = to_lua(v) end
      return r
    end
    return x
  end

  --- ds:as_table_iterator(): an iterator giving each element as Lua values
  -- (scalars as numbers/strings/booleans, others as nested tables).
  function Dataset:as_table_iterator()
    check_self(self, "as_table_iterator")
    local nxt
    return function()
      nxt = nxt or iter_of(self)
      local e = nxt()
      if e == nil then return nil end
      local r = {}
      for c = 1, e.n do r[c] = to_lua(e[c]) end
      return unpack(r, 1, e.n)
    end
  end

  --- `for x, y in ds do ... end`: Lua's generic for calls ds(nil, control)
  -- each step; a nil control starts a new pass, otherwise the pass that
  -- last returned 'control' (its first value) goes on.
  local passes = setmetatable({}, {__mode = "k"})
  function Dataset.__call(ds, _, control)
    local nxt
    if control ~= nil then
      nxt = passes[control]
      passes[control] = nil
    end
    if nxt == nil then nxt = iter_of(ds) end
    local e = nxt()
    if e == nil then return nil end
    local first = e[1]
    if type(first) == "table" or type(first) == "userdata" then passes[first] = nxt end
    return unpack(e, 1, e.n)
  end
  -- }====

  -- {==== element_spec
  local function spec_of_tensor(t, lead)
    local dims = {}
    if lead ~= nil then dims[1] = lead end
    local rk = t.rank
    for k = 1, rk do dims[#dims + 1] = t.shape[k] or tf.None end
    return tf.TensorSpec(dims, t.dtype)
  end
  local function spec_map(x, lead)
    if is_tensor(x) then return spec_of_tensor(x, lead) end
    if getmetatable(x) == Dataset then return {dataset = x:element_spec()} end
    local r = {}
    for k, v in pairs(x) do r[k] = spec_map(v, lead) end
    return r
  end
  local function spec_drop_lead(s)
    if s.kind == "TensorSpec" then
      local dims = s.shape:as_list() or {}
      local nd = {}
      for k = 2, #dims do nd[#nd + 1] = dims[k] end
      return tf.TensorSpec(nd, s.dtype)
    end
    local r = {}
    for k, v in pairs(s) do r[k] = spec_drop_lead(v) end
    return r
  end
  local function first_element(d)
    local e = iter_of(d)()
    if e == nil then
      raise("InvalidArgumentError", "element_spec: the %s dataset is empty: its element spec cannot be found", d.kind)
    end
    return e
  end

  --- The component specs of d's elements, packed {n =, ...}.
  local PASS = {Shuffle = true, Take = true, Skip = true, Repeat = true, Prefetch = true, Cache = true,
                Filter = true, Shard = true, WithOptions = true, FileCache = true}
  local function specs_of(d)
    local k = d.kind
    if k == "TensorSlices" then
      local e = d._rebuild(d._flat)
      local specs = {n = e.n}
      for c = 1, e.n do specs[c] = spec_drop_lead(spec_map(e[c])) end
      return specs
    elseif PASS[k] then
      return specs_of(d._input)
    elseif k == "Batch" then
      local inner = specs_of(d._input)
      local lead = d._drop and d._size or tf.None
      local function add(s)
        if s.kind == "TensorSpec" then
          local dims = s.shape:as_list() or {}
          table.insert(dims, 1, lead)
          return tf.TensorSpec(dims, s.dtype)
        end
        local r = {}
        for a, v in pairs(s) do r[a] = add(v) end
        return r
      end
      local specs = {n = inner.n}
      for c = 1, inner.n do specs[c] = add(inner[c]) end
      return specs
    end
    local e = first_element(d)
    local specs = {n = e.n}
    for c = 1, e.n do specs[c] = spec_map(e[c]) end
    return specs
  end

  --- ds:element_spec(): a tf.TensorSpec per component (an array of them
  -- for tuples, a table for dict elements). Shapes come from the stages
  -- where they are static (tensor slices, batch: tf.None for a batch
  -- dimension that may be partial, shuffle/take/...), else from the first
  -- element.
  function Dataset:element_spec()
    check_self(self, "element_spec")
    local specs = specs_of(self)
    if specs.n == 1 then return specs[1] end
    return {unpack(specs, 1, specs.n)}
  end
  -- }====

  -- {==== luatf's dataset file: save/load and cache(filename)
  -- A file of records: the magic line "luatf-dataset 1\n", then records of
  -- [uint32 LE payload length][uint32 LE masked CRC32C of the payload]
  -- [payload]. Record 1 is the structure of an element (a string, see
  -- encode_struct); each next record one element: per component (in
  -- flatten order) "dtype rank d1 .. dk nbytes\n" then nbytes of
  -- tensor_bytes; the last record is "END <count>". A file without its END
  -- record, or with any CRC mismatch, is a DataLossError.
  local MAGIC = "luatf-dataset 1\n"

  local function encode_struct(x)
    if is_tensor(x) then return "#" end
    if is_plain_table(x) then
      local ks = {}
      for k in pairs(x) do ks[#ks + 1] = k end
      table.sort(ks, function(a, b)
        if type(a) ~= type(b) then return type(a) < type(b) end
        return a < b
      end)
      local parts = {}
      for _, k in ipairs(ks) do
        local key = math.type(k) == "integer" and ("i" .. k) or ("s" .. #k .. ":" .. k)
        parts[#parts + 1] = key .. "=" .. encode_struct(x[k])
      end
      return "{" .. table.concat(parts, ";") .. "}"
    end
    raise("TypeError", "save: elements must be tensors or tables of tensors, got %s", type(x))
  end
  --- The flat leaves (same order as encode_struct's) and a rebuild from a
  -- struct string.
  local function leaves(x, out)
    if is_tensor(x) then out[#out + 1] = x; return out end
    local ks = {}
    for k in pairs(x) do ks[#ks + 1] = k end
    table.sort(ks, function(a, b)
      if type(a) ~= type(b) then return type(a) < type(b) end
      return a < b
    end)
    for _, k in ipairs(ks) do leaves(x[k], out) end
    return out
  end
  local function decode_struct(s, flat, pos)
    local i = 1
    local function parse()
      local c = s:sub(i, i)
      if c == "#" then
        i = i + 1
        local v = flat[pos]
        pos = pos + 1
        return v
      end
      if c ~= "{" then raise("DataLossError", "load: corrupt element structure") end
      i = i + 1
      local r = {}
      while s:sub(i, i) ~= "}" do
        local key
        if s:sub(i, i) == "i" then
          local num, e = s:match("^i(%-?%d+)=()", i)
          if not num then raise("DataLossError", "load: corrupt element structure") end
          key, i = math.tointeger(tonumber(num)), e
        else
          local len, e = s:match("^s(%d+):()", i)
          if not len then raise("DataLossError", "load: corrupt element structure") end
          len = tonumber(len)
          key = s:sub(e, e + len - 1)
          i = e + len + 1
        end
        r[key] = parse()
        if s:sub(i, i) == ";" then i = i + 1 end
      end
      i = i + 1
      return r
    end
    return parse()
  end

  local function u32(n) return string.pack("<I4", n) end
  local function crc(s) return internal.crc32c(s) end

  local function write_record(f, payload)
    f:write(u32(#payload), u32(crc(payload)), payload)
  end

  local function elem_payload(e)
    local flat = leaves({unpack(e, 1, e.n)}, {})
    local parts = {}
    for _, t in ipairs(flat) do
      local b = internal.tensor_bytes(t)
      local dims = {}
      for k = 1, t.rank do dims[k] = t.shape[k] end
      parts[#parts + 1] = sfmt("%s %d%s %d\n", t.dtype.name, t.rank,
        #dims > 0 and (" " .. table.concat(dims, " ")) or "", #b)
      parts[#parts + 1] = b
    end
    return table.concat(parts)
  end

  --- A writer of the dataset file at 'path' (written to a temporary name,
  -- renamed into place by finish(): a partial pass leaves no file at path).
  local function writer(path, what)
    local tmp = sfmt("%s.tmp-%d-%d", path, os.time(), math.random(0, 1 << 30))
    local f, err = io.open(tmp, "wb")
    if not f then raise("NotFoundError", "%s: cannot write %s: %s", what, path, tostring(err)) end
    f:write(MAGIC)
    local w = {count = 0}
    function w.add(e)
      if w.struct == nil then
        w.struct = encode_struct({unpack(e, 1, e.n)}) .. "|" .. e.n
        write_record(f, w.struct)
      else
        local s = encode_struct({unpack(e, 1, e.n)}) .. "|" .. e.n
        if s ~= w.struct then raise("InvalidArgumentError", "%s: elements have different structures", what) end
      end
      write_record(f, elem_payload(e))
      w.count = w.count + 1
    end
    function w.finish()
      if w.struct == nil then write_record(f, "|0") end
      write_record(f, sfmt("END %d", w.count))
      f:close()
      local ok, e2 = os.rename(tmp, path)
      if not ok then raise("InternalError", "%s: cannot rename %s to %s: %s", what, tmp, path, tostring(e2)) end
      w.done = true
    end
    function w.abort()
      if not w.done then
        pcall(f.close, f)
        os.remove(tmp)
        w.done = true
      end
    end
    return w
  end

  --- Read the dataset file: an iterator of packed elements.
  local function reader(path, what)
    local f, err = io.open(path, "rb")
    if not f then raise("NotFoundError", "%s: %s: cannot open: %s", what, path, tostring(err)) end
    if f:read(#MAGIC) ~= MAGIC then
      f:close()
      raise("DataLossError", "%s: %s: not a luatf dataset file (wrong magic line)", what, path)
    end
    local off = #MAGIC
    local function record()
      local h = f:read(8)
      if h == nil then return nil end
      if #h < 8 then raise("DataLossError", "%s: %s: truncated record header at offset %d", what, path, off) end
      local len, c = string.unpack("<I4I4", h)
      local p = f:read(len) or ""
      if #p < len then raise("DataLossError", "%s: %s: truncated record at offset %d", what, path, off) end
      if crc(p) ~= c then raise("DataLossError", "%s: %s: checksum mismatch in the record at offset %d", what, path, off) end
      off = off + 8 + len
      return p
    end
    local head = record()
    if head == nil then raise("DataLossError", "%s: %s: truncated: no structure record", what, path) end
    local struct, k = head:match("^(.*)|(%d+)$")
    if not k then raise("DataLossError", "%s: %s: corrupt structure record", what, path) end
    k = tonumber(k)
    local finished = false
    return function()
      if finished then return nil end
      local p = record()
      if p == nil then
        f:close()
        finished = true
        raise("DataLossError", "%s: %s: truncated: the END record is missing", what, path)
      end
      if p:sub(1, 4) == "END " then
        f:close()
        finished = true
        return nil
      end
      local flat, pos = {}, 1
      while pos <= #p do
        local line_end = p:find("\n", pos, true)
        if not line_end then raise("DataLossError", "%s: %s: corrupt element at offset %d", what, path, off) end
        local hdr = p:sub(pos, line_end - 1)
        local words = {}
        for w in hdr:gmatch("%S+") do words[#words + 1] = w end
        local dt = tf.dtypes.as_dtype(words[1])
        local rank = tonumber(words[2])
        local dims = {}
        for q = 1, rank do dims[q] = math.tointeger(tonumber(words[2 + q])) end
        local nb = math.tointeger(tonumber(words[3 + rank]))
        local bytes = p:sub(line_end + 1, line_end + nb)
        flat[#flat + 1] = internal.tensor_from_bytes(bytes, dt, dims)
        pos = line_end + nb + 1
      end
      local vals = decode_struct(struct, flat, 1)
      vals.n = k
      return vals
    end
  end

  local function end_count(path)
    local f = io.open(path, "rb")
    if not f then return nil end
    local size = f:seek("end")
    -- the END record is the last: scan back for its header
    for back = 13, math.min(size, 40) do
      f:seek("set", size - back)
      local h = f:read(8)
      if h and #h == 8 then
        local len = string.unpack("<I4", h)
        if len == back - 8 then
          local p = f:read(len)
          local n = p and p:match("^END (%d+)$")
          if n then f:close(); return math.tointeger(tonumber(n)) end
        end
      end
    end
    f:close()
    return nil
  end

  --- ds:save(path): every element to the file 'path' (luatf's format
  -- above; written under a temporary name and renamed when complete).
  function Dataset:save(path, opts)
    check_self(self, "save")
    if type(path) ~= "string" then raise("TypeError", "save: 'path' must be a string, got %s", type(path)) end
    kw(opts, "save", {compression = true, shard_func = true, checkpoint_args = true})
    if self:cardinality() == INF then raise("InvalidArgumentError", "save: the dataset is infinite") end
    local w = writer(path, "save")
    local ok, err = pcall(function()
      local it = iter_of(self)
      while true do
        local e = it()
        if e == nil then break end
        w.add(e)
      end
      w.finish()
    end)
    if not ok then w.abort(); error(err, 0) end
  end

  --- Dataset.load(path): the dataset saved at 'path'.
  function Dataset.load(path, opts)
    if type(path) ~= "string" then raise("TypeError", "load: 'path' must be a string, got %s", type(path)) end
    kw(opts, "load", {element_spec = true, compression = true, reader_func = true})
    local f = io.open(path, "rb")
    if not f then raise("NotFoundError", "load: %s: no such file", path) end
    f:close()
    return new("Load", {_path = path})
  end
  iters.Load = function(d)
    if tracing() then no_graph("Dataset.load", "the file is read in Lua: iterate outside tf.fn") end
    return reader(d._path, "load")
  end
  card.Load = function(d) return end_count(d._path) or UNK end

  --- ds:cache(filename): the first complete pass is written to 'filename'
  -- (luatf's dataset file, renamed into place only when the pass ends), and
  -- every later pass, in this process or the next, reads that file instead
  -- of the input. cache() / cache("") keep the elements in memory.
  local mem_cache = Dataset.cache
  function Dataset:cache(filename)
    check_self(self, "cache")
    if filename == nil or filename == "" then return mem_cache(self) end
    if type(filename) ~= "string" then
      raise("TypeError", "cache: 'filename' must be a string, got %s", type(filename))
    end
    return unary("FileCache", self, {_path = filename})
  end
  iters.FileCache = function(d)
    if tracing() then no_graph("cache(filename)", "the cache file is read in Lua: iterate outside tf.fn") end
    local f = io.open(d._path, "rb")
    if f then
      f:close()
      return reader(d._path, "cache")
    end
    local it = iter_of(d._input)
    local w = writer(d._path, "cache")
    local guard = setmetatable({}, {__gc = function() w.abort() end})
    return function()
      local _ = guard
      if w.done then return nil end
      local ok, e = pcall(it)
      if not ok then w.abort(); error(e, 0) end
      if e == nil then w.finish(); return nil end
      w.add(e)
      return e
    end
  end
  card.FileCache = function(d) return d._input:cardinality() end
  -- }====
end
