-- tf.data from files and the transformations of lua/tf/data/files.lua:
-- values by hand (TensorFlow's documented examples where there are some).
local tf = require("tf")
local S = require("spec.support")
local D = tf.data.Dataset

local function lua_list(ds)
  local out = {}
  for x in ds:as_table_iterator() do out[#out + 1] = x end
  return out
end

describe("file datasets", function()
  local dir
  setup(function()
    dir = S.tmpdir()
    S.spit(dir .. "/a.txt", "a1\na2\r\n\na4")
    S.spit(dir .. "/b.txt", "b1\nb2\nb3\n")
    S.spit(dir .. "/c.txt", "")
  end)
  teardown(function() os.execute("rm -rf " .. S.shell_quote(dir)) end)

  it("TextLineDataset: the lines of several files, LF/CRLF removed, empty lines kept", function()
    assert.same({"a1", "a2", "", "a4", "b1", "b2", "b3"},
      lua_list(tf.data.TextLineDataset({dir .. "/a.txt", dir .. "/c.txt", dir .. "/b.txt"})))
  end)

  it("TextLineDataset: num_parallel_reads interleaves the files line by line", function()
    assert.same({"a1", "b1", "a2", "b2", "", "b3", "a4"},
      lua_list(tf.data.TextLineDataset({dir .. "/a.txt", dir .. "/b.txt"}, {num_parallel_reads = 2})))
  end)

  it("TextLineDataset: GZIP and ZLIB files", function()
    os.execute("gzip -c " .. S.shell_quote(dir .. "/b.txt") .. " > " .. S.shell_quote(dir .. "/b.gz"))
    os.execute("env -u LD_PRELOAD python3 -c 'import zlib,sys; sys.stdout.buffer.write(zlib.compress(open(sys.argv[1],\"rb\").read()))' " ..
      S.shell_quote(dir .. "/a.txt") .. " > " .. S.shell_quote(dir .. "/a.z"))
    assert.same({"b1", "b2", "b3"}, lua_list(tf.data.TextLineDataset(dir .. "/b.gz", {compression_type = "GZIP"})))
    assert.same({"a1", "a2", "", "a4"}, lua_list(tf.data.TextLineDataset(dir .. "/a.z", {compression_type = "ZLIB"})))
    assert.tf_error("DataLossError", "corrupt or truncated GZIP data", function()
      lua_list(tf.data.TextLineDataset(dir .. "/a.txt", {compression_type = "GZIP"}))
    end)
    assert.tf_error("InvalidArgumentError", "compression_type must be \"\", \"GZIP\" or \"ZLIB\"", function()
      tf.data.TextLineDataset(dir .. "/a.txt", {compression_type = "BZ2"})
    end)
  end)

  it("TextLineDataset: batch slices the lines, across files", function()
    local bs = {}
    for b in tf.data.TextLineDataset({dir .. "/a.txt", dir .. "/b.txt"}):batch(3) do bs[#bs + 1] = b:totable() end
    assert.same({{"a1", "a2", ""}, {"a4", "b1", "b2"}, {"b3"}}, bs)
  end)

  it("the next file is read ahead on a worker thread: its errors come in order, an abandoned read is joined", function()
    local got = {}
    assert.tf_error("NotFoundError", "TextLineDataset: " .. dir .. "/missing.txt: cannot open", function()
      for l in tf.data.TextLineDataset({dir .. "/b.txt", dir .. "/missing.txt"}) do got[#got + 1] = l:item() end
    end)
    assert.same({"b1", "b2", "b3"}, got)   -- the first file's lines came before the second file's error
    for _ = 1, 3 do
      for _ in tf.data.TextLineDataset({dir .. "/a.txt", dir .. "/b.txt", dir .. "/a.txt"}) do break end
      collectgarbage()
    end
    local ds = tf.data.TextLineDataset({dir .. "/a.txt", dir .. "/b.txt", dir .. "/a.txt"})
    assert.equal(11, #ds:as_list())
  end)

  it("FixedLengthRecordDataset: header, footer, records", function()
    S.spit(dir .. "/f.bin", "HHabcdefFFF")
    assert.same({"ab", "cd", "ef"},
      lua_list(tf.data.FixedLengthRecordDataset(dir .. "/f.bin", 2, {header_bytes = 2, footer_bytes = 3})))
    assert.tf_error("InvalidArgumentError", "has body length 6, which is not an exact multiple of the record " ..
      "length (4 bytes)", function()
        lua_list(tf.data.FixedLengthRecordDataset(dir .. "/f.bin", 4, {header_bytes = 2, footer_bytes = 3}))
      end)
  end)

  it("list_files: sorted without shuffle, a reproducible permutation with a seed", function()
    local all = lua_list(D.list_files(dir .. "/*.txt", {shuffle = false}))
    assert.same({dir .. "/a.txt", dir .. "/b.txt", dir .. "/c.txt"}, all)
    local s1 = lua_list(D.list_files(dir .. "/*.txt", {seed = 5}))
    local s2 = lua_list(D.list_files(dir .. "/*.txt", {seed = 5}))
    assert.same(s1, s2)
    table.sort(s1)
    assert.same(all, s1)
    assert.tf_error("InvalidArgumentError", "list_files: No files matched pattern: " .. dir .. "/*.csv", function()
      D.list_files(dir .. "/*.csv")
    end)
  end)

  it("list_files + interleave(TextLineDataset)", function()
    local ds = D.list_files(dir .. "/[ab].txt", {shuffle = false})
      :interleave(function(f) return tf.data.TextLineDataset(f) end, {cycle_length = 2, block_length = 2})
    assert.same({"a1", "a2", "b1", "b2", "", "a4", "b3"}, lua_list(ds))
  end)
end)

describe("transformations", function()
  it("interleave: TensorFlow's documented order", function()
    -- tf.data.Dataset.range(1, 6).interleave(lambda x: from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    local ds = D.range(1, 6):interleave(function(x) return D.from_tensors(x):repeat_(6) end,
      {cycle_length = 2, block_length = 4, num_parallel_calls = tf.data.AUTOTUNE})
    assert.same({1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5},
      lua_list(ds))
    assert.tf_error("TypeError", "interleave: the function must return a tf.data.Dataset", function()
      lua_list(D.range(2):interleave(function(x) return x end, {cycle_length = 1}))
    end)
  end)

  it("flat_map", function()
    local ds = D.from_tensor_slices({{1, 2, 3}, {4, 5, 6}}):flat_map(function(r) return D.from_tensor_slices(r) end)
    assert.same({1, 2, 3, 4, 5, 6}, lua_list(ds))
  end)

  it("window: size, shift, stride, drop_remainder (TensorFlow's examples)", function()
    local function wins(ds)
      local out = {}
      for w in ds do out[#out + 1] = lua_list(w) end
      return out
    end
    assert.same({{0, 1, 2}, {3, 4, 5}, {6}}, wins(D.range(7):window(3)))
    assert.same({{0, 1, 2}, {3, 4, 5}}, wins(D.range(7):window(3, {drop_remainder = true})))
    assert.same({{0, 1, 2}, {2, 3, 4}, {4, 5, 6}, {6}}, wins(D.range(7):window(3, {shift = 2})))
    assert.same({{0, 2, 4}, {1, 3, 5}, {2, 4, 6}, {3, 5}, {4, 6}, {5}, {6}},
      wins(D.range(7):window(3, {shift = 1, stride = 2})))
    assert.equal(4, D.range(7):window(3, {shift = 2}):cardinality())
    assert.equal(3, D.range(7):window(3, {shift = 1, stride = 2, drop_remainder = true}):cardinality())
    -- a tuple element gives a tuple of datasets; flat_map + batch makes tensors of windows
    local w = D.from_tensor_slices({tf.constant({1, 2, 3, 4}), tf.constant({5, 6, 7, 8})}):window(2)
      :flat_map(function(a, b) return D.zip(a:batch(2), b:batch(2)) end)
    local got = {}
    for a, b in w do got[#got + 1] = {a:totable(), b:totable()} end
    assert.same({{{1, 2}, {5, 6}}, {{3, 4}, {7, 8}}}, got)
  end)

  it("shard: 1-based index", function()
    assert.same({0, 3, 6, 9}, lua_list(D.range(10):shard(3, 1)))
    assert.same({2, 5, 8}, lua_list(D.range(10):shard(3, 3)))
    assert.equal(4, D.range(10):shard(3, 1):cardinality())
    assert.equal(3, D.range(10):shard(3, 2):cardinality())
    assert.tf_error("InvalidArgumentError", "shard: 'index' is 1-based and must be in 1..3, got 0", function()
      D.range(10):shard(3, 0)
    end)
  end)

  it("apply", function()
    local ds = D.range(5):apply(function(d) return d:skip(1):take(2) end)
    assert.same({1, 2}, lua_list(ds))
    assert.tf_error("TypeError", "apply: the function must return a tf.data.Dataset, got number", function()
      D.range(5):apply(function() return 3 end)
    end)
  end)

  it("options / with_options: the outermost setting wins", function()
    local o = D.range(3):with_options(tf.data.Options{deterministic = false, threading = {private_threadpool_size = 2}})
      :with_options(tf.data.Options{deterministic = true}):options()
    assert.is_true(o.deterministic)
    assert.equal(2, o.threading.private_threadpool_size)
    assert.is_true(D.range(3):options().deterministic)
    assert.tf_error("TypeError", "Options: unexpected keyword argument 'determinstic'", function()
      tf.data.Options{determinstic = true}
    end)
  end)

  it("element_spec", function()
    local ds = D.from_tensor_slices({tf.zeros({5, 3}), tf.constant({1, 2, 3, 4, 5})})
    local s = ds:element_spec()
    assert.same({3}, s[1].shape:as_list())
    assert.equal(tf.float32, s[1].dtype)
    assert.same({}, s[2].shape:as_list())
    local b = ds:batch(2):element_spec()
    assert.same({tf.None, 3}, b[1].shape:as_list())
    assert.same({2, 3}, ds:batch(2, true):element_spec()[1].shape:as_list())
    local m = D.range(3):map(function(x) return {v = tf.cast(x, tf.float32)} end):element_spec()
    assert.equal(tf.float32, m.v.dtype)
  end)

  it("as_table_iterator gives Lua values", function()
    local got = {}
    for x, y in D.from_tensor_slices({tf.constant({{1, 2}, {3, 4}}), tf.constant({"a", "b"})}):as_table_iterator() do
      got[#got + 1] = {x, y}
    end
    assert.same({{{1, 2}, "a"}, {{3, 4}, "b"}}, got)
  end)

  it("for x in ds: a generic for over a dataset, nested loops independent", function()
    local pairs_ = {}
    local ds = D.range(3)
    for x in ds do
      for y in ds do pairs_[#pairs_ + 1] = x:item() * 10 + y:item() end
    end
    assert.same({0, 1, 2, 10, 11, 12, 20, 21, 22}, pairs_)
    local n = 0
    for _ in ds do n = n + 1; break end
    for _ in ds do n = n + 1 end
    assert.equal(4, n)
  end)

  it("from_generator with a partial last batch over two epochs calls the iterator no more after its end", function()
    local calls_after_end = 0
    local gen = function()
      local i, ended = 0, false
      return function()
        if ended then calls_after_end = calls_after_end + 1; error("file is already closed") end
        i = i + 1
        if i > 5 then ended = true; return nil end
        return i
      end
    end
    local ds = D.from_generator(gen, {output_signature = tf.TensorSpec({}, tf.int32)}):batch(2):repeat_(2)
    local sizes = {}
    for b in ds do sizes[#sizes + 1] = b.shape[1] end
    assert.same({2, 2, 1, 2, 2, 1}, sizes)
    assert.equal(0, calls_after_end)
  end)
end)

describe("save / load / cache(filename)", function()
  local dir
  setup(function() dir = S.tmpdir() end)
  teardown(function() os.execute("rm -rf " .. S.shell_quote(dir)) end)

  it("save then load gives the same elements (dtypes, shapes, strings, dicts)", function()
    local ds = D.from_tensor_slices({{x = tf.constant({{1.5, 2}, {3, 4}}), s = tf.constant({"a", ""})},
                                     tf.constant({7, 8}, tf.int64)})
    ds:save(dir .. "/ds")
    local l = D.load(dir .. "/ds")
    assert.equal(2, l:cardinality())
    local got = {}
    for e, y in l do got[#got + 1] = {e.x:totable(), e.s:item(), y:item(), e.x.dtype, y.dtype} end
    assert.same({{{1.5, 2}, "a", 7, tf.float32, tf.int64}, {{3, 4}, "", 8, tf.float32, tf.int64}}, got)
  end)

  it("a corrupt or truncated file is a DataLossError", function()
    D.range(3):save(dir .. "/r")
    local s = S.slurp(dir .. "/r")
    S.spit(dir .. "/r2", s:sub(1, #s - 5))
    assert.tf_error("DataLossError", "truncated", function() lua_list(D.load(dir .. "/r2")) end)
    local i = #s - 40
    S.spit(dir .. "/r3", s:sub(1, i - 1) .. string.char((s:byte(i) + 1) % 256) .. s:sub(i + 1))
    assert.tf_error("DataLossError", "checksum mismatch", function() lua_list(D.load(dir .. "/r3")) end)
    assert.tf_error("NotFoundError", "load: " .. dir .. "/nope: no such file", function() D.load(dir .. "/nope") end)
  end)

  it("cache(filename): the first complete pass writes the file, the next process reads it", function()
    local script = dir .. "/c.lua"
    S.spit(script, [[
      local tf = require("tf")
      local calls = 0
      local ds = tf.data.Dataset.from_generator(function()
        local i = 0
        return function() i = i + 1; if i <= 3 then calls = calls + 1; return i * 10 end end
      end):cache(arg[1])
      local v = {}
      for x in ds do v[#v + 1] = x:item() end
      io.write(table.concat(v, ","), " calls=", calls, "\n")
    ]])
    local function run()
      local p = io.popen("lua5.4 " .. S.shell_quote(script) .. " " .. S.shell_quote(dir .. "/cache") .. " 2>&1")
      local out = p:read("a")
      p:close()
      return out
    end
    assert.equal("10,20,30 calls=3\n", run())
    assert.equal("10,20,30 calls=0\n", run())
  end)

  it("cache(filename): a partial pass leaves no cache file", function()
    local ds = D.range(5):cache(dir .. "/partial")
    for x in ds do if x:item() == 1 then break end end
    collectgarbage()
    collectgarbage()
    assert.is_nil(io.open(dir .. "/partial", "rb"))
    assert.same({0, 1, 2, 3, 4}, lua_list(ds))
    assert.is_not_nil(io.open(dir .. "/partial", "rb"))
    assert.same({0, 1, 2, 3, 4}, lua_list(ds))
  end)
end)
