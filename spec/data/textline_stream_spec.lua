-- TextLineDataset with buffer_size streams its files in pieces of that many
-- bytes on a reader-pool thread (bindings/textlines.c): the same lines as
-- reading whole files and as a split written here, for every buffer size
-- (lines longer than the buffer, CRLF, empty lines, a last line without LF),
-- plain, GZIP (several members) and ZLIB; errors in the caller at the line
-- they stop; no thread left once collected.
local tf = require("tf")
local support = require("spec.support")
local internal = tf.core.internal

local dir = support.tmpdir()
local function path(name) return dir .. "/" .. name end

--- The reference split: LF ends a line, a CR before it is removed, a last line without LF counts
-- (its final CR removed too, as TensorFlow's InputBuffer::ReadLine does).
local function split(text)
  local out = {}
  local pos = 1
  while pos <= #text do
    local nl = text:find("\n", pos, true)
    local line = text:sub(pos, (nl or #text + 1) - 1)
    line = line:gsub("\r$", "")
    out[#out + 1] = line
    pos = nl and nl + 1 or #text + 1
  end
  return out
end

local long = string.rep("x", 5000)
local text = "first\r\nsecond\n\n" .. long .. "\nend \"quoted\"\r\n\r\n" .. string.rep("line\n", 300) .. "no newline"
local plain = path("a.txt")
support.spit(plain, text)
local text2 = "b1\nb2\n"
support.spit(path("b.txt"), text2)
os.execute("gzip -c " .. plain .. " > " .. path("a.gz") .. "; gzip -c " .. path("b.txt") .. " >> " .. path("a.gz"))
local zlib_ok = os.execute("/usr/bin/python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.compress(open(sys.argv[1], \"rb\").read()))' "
  .. plain .. " > " .. path("a.zz") .. " 2>/dev/null")

local function lines(ds)
  local out = {}
  for x in ds:iter() do out[#out + 1] = x:item() end
  return out
end

local function same_list(a, b)
  assert.are.equal(#b, #a)
  for i = 1, #b do
    if a[i] ~= b[i] then error(("line %d: %q, expected %q"):format(i, a[i], b[i]), 2) end
  end
end

describe("TextLineDataset with buffer_size", function()
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("gives the lines of reading whole files, for any buffer size", function()
    local want = split(text)
    assert.are.equal(307, #want)
    same_list(lines(tf.data.TextLineDataset(plain)), want)
    for _, bs in ipairs({1, 2, 7, 64, 4096, 1 << 20}) do
      same_list(lines(tf.data.TextLineDataset(plain, {buffer_size = bs})), want)
    end
    local both = split(text .. "\n" .. text2)
    same_list(lines(tf.data.TextLineDataset({plain, path("b.txt")}, {buffer_size = 100})), both)
    support.spit(path("empty.txt"), "")
    same_list(lines(tf.data.TextLineDataset(path("empty.txt"), {buffer_size = 8})), {})
  end)

  it("GZIP (members in turn) and ZLIB", function()
    same_list(lines(tf.data.TextLineDataset(path("a.gz"), {compression_type = "GZIP", buffer_size = 33})),
      split(text .. text2))   -- one stream: the members run on
    if not zlib_ok then pending("no /usr/bin/python3 to write a ZLIB file"); return end
    same_list(lines(tf.data.TextLineDataset(path("a.zz"), {compression_type = "ZLIB", buffer_size = 1000})),
      split(text))
  end)

  it("errors: missing file at its turn, truncated GZIP after the lines before it, bad buffer_size", function()
    local missing = path("missing.txt")
    local it = tf.data.TextLineDataset({path("b.txt"), missing}, {buffer_size = 16}):iter()
    assert.are.equal("b1", it():item())
    assert.are.equal("b2", it():item())
    assert.tf_error("NotFoundError", "TextLineDataset: " .. missing .. ": cannot open", function() it() end)
    local gz = support.slurp(path("a.gz"))
    support.spit(path("cut.gz"), gz:sub(1, #gz // 2))
    local got = {}
    assert.tf_error("DataLossError", path("cut.gz") .. ": corrupt or truncated GZIP data", function()
      for x in tf.data.TextLineDataset(path("cut.gz"), {compression_type = "GZIP", buffer_size = 64}):iter() do
        got[#got + 1] = x:item()
      end
    end)
    assert.is_true(#got > 0)
    same_list(got, table.move(split(text), 1, #got, 1, {}))
    local ds = tf.data.TextLineDataset(plain, {buffer_size = 8})
    assert.tf_error("UnimplementedError", "TextLineDataset inside tf.fn: this stage runs in Lua: iterate the dataset " ..
      "outside tf.fn", tf.fn(function()
        local k = 0
        for _ in ds do k = k + 1 end
        return tf.constant(k)
      end))
    assert.tf_error("InvalidArgumentError", "TextLineDataset: 'buffer_size' must be positive, got 0", function()
      tf.data.TextLineDataset(plain, {buffer_size = 0})
    end)
  end)

  it("random bytes and damaged GZIP (a small fuzz): the reference lines, or a DataLossError after a prefix", function()
    local state = 20261128
    local function rng()   -- integers in [0, 2^31)
      state = (state * 1103515245 + 12345) % 2147483648
      return state >> 8
    end
    local alphabet = {"a", "b", "\n", "\r", "\0", "\r\n", "\n\n", "\255", string.rep("z", 300)}
    for round = 1, 40 do
      local parts = {}
      for i = 1, 1 + rng() % 200 do parts[i] = alphabet[1 + rng() % #alphabet] end
      local t = table.concat(parts)
      local f = path("r" .. round .. ".txt")
      support.spit(f, t)
      local bs = ({1, 2, 3, 5, 17, 301, 4096})[1 + rng() % 7]
      same_list(lines(tf.data.TextLineDataset(f, {buffer_size = bs})), split(t))
      -- the same bytes gzipped, then cut or with one byte flipped
      os.execute("gzip -c " .. f .. " > " .. f .. ".gz")
      local gzb = support.slurp(f .. ".gz")
      local bad
      if round % 2 == 0 then
        bad = gzb:sub(1, rng() % #gzb)
      else
        local k = 1 + rng() % #gzb
        bad = gzb:sub(1, k - 1) .. string.char((gzb:byte(k) + 1 + rng() % 255) % 256) .. gzb:sub(k + 1)
      end
      support.spit(f .. ".bad.gz", bad)
      local got = {}
      local ok, err = pcall(function()
        for x in tf.data.TextLineDataset(f .. ".bad.gz", {compression_type = "GZIP", buffer_size = bs}):iter() do
          got[#got + 1] = x:item()
        end
      end)
      local want = split(t)
      if not ok then
        assert.are.equal("DataLossError", err.kind, tostring(err))
        if round % 2 == 0 then   -- cut: what came before is a prefix of the lines (the last one maybe cut)
          for i = 1, #got - 1 do assert.are.equal(want[i], got[i]) end
        end
      else   -- a flip gzip's header does not check (mtime, OS): the same lines
        same_list(got, want)
      end
    end
  end)

  it("runs on the interleave's pool, and no thread is left once collected", function()
    collectgarbage(); collectgarbage()
    local base = internal.read_pool_threads()
    local ds = tf.data.Dataset.from_tensor_slices(tf.constant({plain, path("b.txt")})):interleave(function(f)
      return tf.data.TextLineDataset(f, {buffer_size = 50})
    end, {cycle_length = 2, num_parallel_calls = 2})
    local it = ds:iter()
    assert.are.equal("first", it():item())
    assert.are.equal("b1", it():item())
    assert.are.equal(base + 2, internal.read_pool_threads())
    it = nil
    collectgarbage(); collectgarbage()
    assert.are.equal(base, internal.read_pool_threads())
  end)
end)
