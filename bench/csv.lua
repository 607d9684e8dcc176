-- bench/csv.lua: parsing a CSV of 1M rows x 10 float columns (about 90 MB)
-- the ways a luatf user reads one: CsvDataset(...):batch(n) (the whole file
-- parsed by core/csv.c, batches sliced out), TextLineDataset + decode_csv
-- over batches of lines, and make_csv_dataset (dict batches, no shuffle).
-- Wall clock (tf.core.monotonic), best of 3 passes; MB/s of file bytes.
-- Usage: lua5.4 bench/csv.lua [path] [rows]   (writes the file if missing)
local tf = require("tf")
local now = tf.core.monotonic
do   -- tf.io is lua/tf/io.lua (it loads tf.io_csv); without it install decode_csv directly
  local ok, io_ = pcall(function() return tf.io end)
  if not (ok and io_ and io_.decode_csv) then require("tf.io_csv")(tf, ok and io_ or nil) end
end
local path = arg[1] or "/tmp/luatf-bench/csv_1m.csv"
local rows = tonumber(arg[2] or "1000000")
local f = io.open(path, "rb")
if not f then
  os.execute("mkdir -p " .. path:match("^(.*)/") )
  local out = assert(io.open(path, "wb"))
  local seed = 12345
  local buf = {}
  for r = 1, rows do
    local line = {}
    for c = 1, 10 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      line[c] = string.format("%.6f", seed / 2147483648 * 100 - 50)
    end
    buf[#buf + 1] = table.concat(line, ",")
    if #buf == 10000 then out:write(table.concat(buf, "\n"), "\n"); buf = {} end
  end
  if #buf > 0 then out:write(table.concat(buf, "\n"), "\n") end
  out:close()
  f = assert(io.open(path, "rb"))
end
local size = f:seek("end")
f:close()
local mb = size / 1e6
local defaults = {}
for c = 1, 10 do defaults[c] = 0.0 end

local function best(fn)
  local b = math.huge
  for _ = 1, 3 do
    collectgarbage()
    local t0 = now()
    local n = fn()
    local dt = now() - t0
    assert(n == rows, "read " .. tostring(n) .. " rows")
    if dt < b then b = dt end
  end
  return b
end

local results = {}
local function report(name, dt)
  results[#results + 1] = {name, dt}
  print(string.format("RESULT luatf_csv_%s_MBps %.1f", name, mb / dt))
end

report("csvdataset", best(function()
  local n = 0
  for c1 in tf.data.experimental.CsvDataset(path, defaults):batch(65536) do n = n + c1.shape[1] end
  return n
end))
report("textline_decode_csv", best(function()
  local n = 0
  for lines in tf.data.TextLineDataset(path):batch(65536) do
    local cols = {tf.io.decode_csv(lines, defaults)}
    n = n + cols[1].shape[1]
  end
  return n
end))
report("make_csv_dataset", best(function()
  local n = 0
  local names = {}
  for c = 1, 10 do names[c] = "c" .. c end
  for b in tf.data.experimental.make_csv_dataset(path, 65536, {column_names = names, header = false,
      column_defaults = defaults, shuffle = false, num_epochs = 1}) do
    n = n + b.c1.shape[1]
  end
  return n
end))

print(string.format("\nCSV %d rows x 10 float32 columns, %.1f MB (best of 3, wall clock)", rows, mb))
print("| reader | seconds | MB/s | target |")
print("|---|---|---|---|")
for _, r in ipairs(results) do
  print(string.format("| %s | %.2f | %.0f | >= 50 MB/s |", r[1], r[2], mb / r[2]))
end
