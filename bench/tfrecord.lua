-- bench/tfrecord.lua: reading a TFRecord file of 100k records of 1 KB
-- (about 102 MB) with tf.data.TFRecordDataset beside `cat FILE > /dev/null`
-- on the same file, page cache warm (issue 20: >= 80% of cat's speed).
-- Median of 5 runs each, wall clock (tf.core.monotonic).
--   lua5.4 bench/tfrecord.lua [FILE] [RECORDS] [BYTES]   (bash bench/tfrecord.sh)
local tf = require("tf")
if not tf.io or not tf.io.TFRecordWriter then require("tf.io_tfrecord")(tf) end
local now = tf.core.monotonic

local path = arg[1] or "/var/tmp/luatf-tfrecord-bench.tfrecord"
local n = tonumber(arg[2] or 100000)
local size = tonumber(arg[3] or 1024)

local f = io.open(path, "rb")
local have = f and f:seek("end") == n * (size + 16)
if f then f:close() end
if not have then
  local w <close> = tf.io.TFRecordWriter(path)
  local rec = {}
  for i = 1, n do
    rec[1] = string.format("%08d", i)
    w:write(rec[1] .. string.rep(string.char(65 + i % 26), size - 8))
  end
end
local bytes = n * (size + 16)

local function median(fn, runs)
  local t = {}
  for r = 1, runs do
    local t0 = now()
    fn()
    t[r] = now() - t0
  end
  table.sort(t)
  return t[(runs + 1) // 2]
end

local function cat() os.execute("cat '" .. path .. "' > /dev/null") end
local function empty() os.execute("true") end
local function batched(b)
  return function()
    local k = 0
    for x in tf.data.TFRecordDataset(path):batch(b):iter() do k = k + x.shape[1] end
    assert(k == n, "read " .. k .. " records")
  end
end
local function per_record()
  local k = 0
  for _ in tf.data.TFRecordDataset(path):iter() do k = k + 1 end
  assert(k == n)
end

-- interleave of 4 files (the same records split in 4) on 1 vs 2 reader threads
local parts = {}
for q = 1, 4 do
  parts[q] = path .. ".part" .. q
  local g = io.open(parts[q], "rb")
  local ok = g and g:seek("end") == (n // 4) * (size + 16)
  if g then g:close() end
  if not ok then
    local w <close> = tf.io.TFRecordWriter(parts[q])
    for i = (q - 1) * (n // 4) + 1, q * (n // 4) do
      w:write(string.format("%08d", i) .. string.rep(string.char(65 + i % 26), size - 8))
    end
  end
end
local function interleaved(threads)
  return function()
    local k = 0
    local ds = tf.data.Dataset.from_tensor_slices(tf.constant(parts)):interleave(function(f)
      return tf.data.TFRecordDataset(f):batch(1000)
    end, {cycle_length = 4, num_parallel_calls = threads})
    for x in ds:iter() do k = k + x.shape[1] end
    assert(k == 4 * (n // 4), "read " .. k .. " records")
  end
end

cat(); cat()   -- warm the page cache
local t_shell = median(empty, 5)
local t_cat = median(cat, 5) - t_shell   -- the shell's start-up is not cat's reading
local rows = {
  {"cat FILE > /dev/null (shell start-up subtracted)", t_cat},
  {"TFRecordDataset(f):batch(1000), string vectors", median(batched(1000), 5)},
  {"TFRecordDataset(f):batch(100)", median(batched(100), 5)},
  {"TFRecordDataset(f), one scalar string tensor per record", median(per_record, 5)},
  {"interleave of 4 files (batch(1000) each), 1 thread", median(interleaved(1), 5)},
  {"interleave of 4 files (batch(1000) each), 2 threads", median(interleaved(2), 5)},
}
print(string.format("TFRecord read: %d records of %d bytes, %.1f MB, %s", n, size, bytes / 1e6, path))
print(string.format("%-58s %10s %10s %10s", "what", "ms", "MB/s", "vs cat"))
for _, r in ipairs(rows) do
  print(string.format("%-58s %10.1f %10.0f %9.0f%%", r[1], r[2] * 1e3, bytes / r[2] / 1e6, 100 * t_cat / r[2]))
end
