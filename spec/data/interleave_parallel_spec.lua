-- interleave's num_parallel_calls and TFRecordDataset's num_parallel_reads
-- read files on a pool of threads (bindings/readpool.c): the same elements
-- in the same order as the sequential path (against an independent Lua
-- reference of TensorFlow's interleave order), every element exactly once
-- with deterministic = false, a worker's errors raised in the caller with
-- file and offset, and no thread left once an iterator stopped early is
-- collected.
local tf = require("tf")
local support = require("spec.support")
if not tf.io or not tf.io.TFRecordWriter then require("tf.io_tfrecord")(tf) end
local internal = tf.core.internal

local dir = support.tmpdir()
local function path(name) return dir .. "/" .. name end

-- file k holds sizes[k] records "f<k>-r<j>" (file 3 spans several worker chunks)
local sizes = {7, 1, 9000, 0, 13, 5}
local files, records = {}, {}
for k, n in ipairs(sizes) do
  files[k] = path("f" .. k .. ".tfrecord")
  records[k] = {}
  local w <close> = tf.io.TFRecordWriter(files[k])
  for j = 1, n do
    local r = "f" .. k .. "-r" .. j
    records[k][j] = r
    w:write(r)
  end
end
local textfiles = {}
for k, n in ipairs(sizes) do
  textfiles[k] = path("t" .. k .. ".txt")
  local lines = {}
  for j = 1, n do lines[j] = records[k][j] .. "\n" end
  support.spit(textfiles[k], table.concat(lines))
end

--- TensorFlow's interleave order, written out independently after
-- InterleaveDatasetOp's GetNext: the slot whose turn it is gives an element
-- (block_length in a row), an exhausted slot is closed and the turn moves
-- on, an empty slot takes the next input and tries again.
local function reference(inputs, cycle, block)
  local out, slots, nexti, open, eoi = {}, {}, 1, 0, false
  local idx, bi = 1, 0
  local function advance() bi = 0; idx = idx % cycle + 1 end
  while not eoi or open > 0 do
    local s = slots[idx]
    if s then
      if s.at < #s.list then
        s.at = s.at + 1
        out[#out + 1] = s.list[s.at]
        bi = bi + 1
        if bi == block then advance() end
      else
        slots[idx] = nil
        open = open - 1
        advance()
      end
    elseif not eoi then
      if nexti > #inputs then eoi = true
      else
        slots[idx] = {list = inputs[nexti], at = 0}
        nexti = nexti + 1
        open = open + 1
      end
    else
      advance()
    end
  end
  return out
end

local function collect(ds)
  local out = {}
  for x in ds:iter() do out[#out + 1] = x:item() end
  return out
end

local function same_list(a, b)
  assert.are.equal(#b, #a)
  for i = 1, #b do
    if a[i] ~= b[i] then error(("element %d: %s, expected %s"):format(i, tostring(a[i]), tostring(b[i])), 2) end
  end
end

local function same_multiset(a, b)
  assert.are.equal(#b, #a)
  local count = {}
  for _, x in ipairs(b) do count[x] = (count[x] or 0) + 1 end
  for _, x in ipairs(a) do
    assert.is_true((count[x] or 0) > 0, "unexpected or repeated element " .. tostring(x))
    count[x] = count[x] - 1
  end
end

local function tfrecord_ds(f) return tf.data.TFRecordDataset(f) end

describe("interleave on reader threads", function()
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("the reference order matches a hand-worked case", function()
    same_list(reference({{"a1", "a2", "a3"}, {"b1"}, {"c1", "c2"}}, 2, 2), {"a1", "a2", "b1", "a3", "c1", "c2"})
  end)

  for _, case in ipairs({{3, 2, 2}, {2, 1, 4}, {4, 3, tf.data.AUTOTUNE}, {6, 5, 1}, {1, 2, 2}}) do
    local C, B, P = case[1], case[2], case[3]
    it(("TFRecord files: cycle %d, block %d, %d threads: TensorFlow's order"):format(C, B, P), function()
      local want = reference(records, C, B)
      local ds = tf.data.Dataset.from_tensor_slices(tf.constant(files))
      local par = collect(ds:interleave(tfrecord_ds, {cycle_length = C, block_length = B, num_parallel_calls = P}))
      same_list(par, want)
      same_list(collect(ds:interleave(tfrecord_ds, {cycle_length = C, block_length = B})), want)
    end)
  end

  it("text files and a map over the records keep the order too", function()
    local ds = tf.data.Dataset.from_tensor_slices(tf.constant(textfiles))
    local got = collect(ds:interleave(function(f) return tf.data.TextLineDataset(f) end,
      {cycle_length = 3, block_length = 4, num_parallel_calls = 2}))
    same_list(got, reference(records, 3, 4))
    local mapped = collect(tf.data.Dataset.from_tensor_slices(tf.constant(files)):interleave(function(f)
      return tf.data.TFRecordDataset(f):map(function(x) return tf.strings.length(x) end)
    end, {cycle_length = 2, num_parallel_calls = 2}))
    local want = {}
    for i, r in ipairs(reference(records, 2, 1)) do want[i] = #r end
    same_list(mapped, want)
  end)

  it("TFRecordDataset's num_parallel_reads is an interleave of its files, block 1", function()
    same_list(collect(tf.data.TFRecordDataset(files, {num_parallel_reads = 3})), reference(records, 3, 1))
    same_list(collect(tf.data.TFRecordDataset(files, {num_parallel_reads = tf.data.AUTOTUNE})),
      reference(records, math.min(internal.cpu_count(), #files), 1))
  end)

  it("deterministic = false (argument or options) gives every element exactly once", function()
    local all = {}
    for _, r in ipairs(records) do for _, x in ipairs(r) do all[#all + 1] = x end end
    local ds = tf.data.Dataset.from_tensor_slices(tf.constant(files))
    same_multiset(collect(ds:interleave(tfrecord_ds, {cycle_length = 3, block_length = 2, num_parallel_calls = 3,
                                                      deterministic = false})), all)
    local o = tf.data.Options{experimental_deterministic = false}
    local nd = ds:interleave(tfrecord_ds, {cycle_length = 4, num_parallel_calls = 2}):with_options(o)
    assert.is_false(nd:options().deterministic)
    same_multiset(collect(nd), all)
    local tds = tf.data.Dataset.from_tensor_slices(tf.constant(textfiles))
    same_multiset(collect(tds:interleave(function(f) return tf.data.TextLineDataset(f) end,
      {cycle_length = 4, num_parallel_calls = 4, deterministic = false})), all)
    assert.tf_error("TypeError", "interleave: 'deterministic' must be a boolean", function()
      ds:interleave(tfrecord_ds, {deterministic = 1})
    end)
  end)

  it("deterministic = false takes a ready reader's records while the one whose turn it is waits", function()
    -- a named pipe whose records arrive two seconds late, beside a plain file
    local fifo = path("late.fifo")
    assert.is_true(os.execute("mkfifo " .. fifo))
    local function run(det)
      os.execute("(sleep 2; cat " .. files[6] .. ") > " .. fifo .. " &")
      return collect(tf.data.Dataset.from_tensor_slices(tf.constant({fifo, files[1]})):interleave(tfrecord_ds,
        {cycle_length = 2, num_parallel_calls = 2, deterministic = det}))
    end
    local nd = run(false)
    same_list(nd, {"f1-r1", "f1-r2", "f1-r3", "f1-r4", "f1-r5", "f1-r6", "f1-r7",
                   "f6-r1", "f6-r2", "f6-r3", "f6-r4", "f6-r5"})
    same_list(run(true), reference({records[6], records[1]}, 2, 1))
    -- TFRecordDataset's own num_parallel_reads, with the options' deterministic = false
    os.execute("(sleep 2; cat " .. files[6] .. ") > " .. fifo .. " &")
    local o = tf.data.Options{deterministic = false}
    same_list(collect(tf.data.TFRecordDataset({fifo, files[1]}, {num_parallel_reads = 2}):with_options(o)), nd)
  end)

  it("a corrupt record read on a worker is raised in the caller with its file and offset", function()
    local bad = path("bad.tfrecord")
    local good = support.slurp(files[1])
    -- record 3 of file 1 starts at 2 * (16 + 5) = 42; its data at 54
    support.spit(bad, good:sub(1, 54) .. "X" .. good:sub(56))
    local ds = tf.data.Dataset.from_tensor_slices(tf.constant({files[5], bad, files[6]}))
    local it = ds:interleave(tfrecord_ds, {cycle_length = 3, num_parallel_calls = 3}):iter()
    local got = {}
    assert.tf_error("DataLossError", bad .. ": corrupted record at 42 (the data's checksum does not match)", function()
      while true do
        local x = it()
        if x == nil then break end
        got[#got + 1] = x:item()
      end
    end)
    -- the records before the corrupt one came first, in order
    same_list(got, {"f5-r1", "f1-r1", "f6-r1", "f5-r2", "f1-r2", "f6-r2", "f5-r3"})
    local missing = path("no-such.tfrecord")
    assert.tf_error("NotFoundError", missing, function()
      collect(tf.data.Dataset.from_tensor_slices(tf.constant({files[1], missing})):interleave(tfrecord_ds,
        {cycle_length = 2, num_parallel_calls = 2}))
    end)
    assert.tf_error("InvalidArgumentError", "'num_parallel_calls' must be positive or AUTOTUNE", function()
      ds:interleave(tfrecord_ds, {num_parallel_calls = 0})
    end)
  end)

  it("take(n) stops the readers once it has its elements; others leave no thread once collected", function()
    collectgarbage(); collectgarbage()
    local base = internal.read_pool_threads()
    local ds = tf.data.Dataset.from_tensor_slices(tf.constant(files))
      :interleave(tfrecord_ds, {cycle_length = 4, num_parallel_calls = 4}):take(3)
    local it = ds:iter()
    same_list({it():item(), it():item()}, {"f1-r1", "f2-r1"})
    assert.are.equal(base + 4, internal.read_pool_threads())
    -- the third element completes take(3): the readers and the pool stop at once, no collection needed
    assert.are.equal("f3-r1", it():item())
    assert.are.equal(base, internal.read_pool_threads())
    assert.is_nil(it())
    -- the same for text files and TFRecord batches, without take: once collected
    local it3 = tf.data.Dataset.from_tensor_slices(tf.constant(textfiles)):interleave(function(f)
      return tf.data.TextLineDataset(f, {buffer_size = 16}) end, {cycle_length = 3, num_parallel_calls = 3}):iter()
    assert.are.equal("f1-r1", it3():item())
    assert.are.equal(base + 3, internal.read_pool_threads())
    local it4 = tf.data.TFRecordDataset(files[3]):map(function(x) return x end):take(2):iter()
    assert.are.equal("f3-r1", it4():item())
    assert.are.equal(base + 4, internal.read_pool_threads())
    assert.are.equal("f3-r2", it4():item())
    assert.are.equal(base + 3, internal.read_pool_threads())
    it3 = nil
    collectgarbage(); collectgarbage()
    assert.are.equal(base, internal.read_pool_threads())
    -- datasets without file readers start no thread
    local it2 = tf.data.Dataset.range(1, 4):interleave(function(x) return tf.data.Dataset.from_tensors(x) end,
      {cycle_length = 2, num_parallel_calls = 2}):iter()
    assert.are.equal(1, it2():item())
    assert.are.equal(base, internal.read_pool_threads())
    -- a reader alone has one thread of its own
    local one = tf.data.TFRecordDataset(files[3]):iter()
    assert.are.equal("f3-r1", one():item())
    assert.are.equal(base + 1, internal.read_pool_threads())
    one = nil
    collectgarbage(); collectgarbage()
    assert.are.equal(base, internal.read_pool_threads())
  end)
end)
