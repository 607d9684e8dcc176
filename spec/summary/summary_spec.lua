-- tf.summary: event files read back by an independent decoder
-- (spec/summary/read_events.py: TFRecord CRCs checked in Python, Events
-- parsed with python3-protobuf from proto/*.proto), values compared with
-- Lua recomputations; record_if and step semantics; writes inside tf.fn;
-- errors.
local tf = require("tf")
local support = require("support")
local E = require("summary.events")

local function rmrf(d) os.execute("rm -rf '" .. d .. "'") end

-- float32 rounding of a Lua number
local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- TensorBoard's histogram buckets (plugins/histogram/summary_v2.py), in Lua
local function buckets(xs, k)
  local out = {}
  if k == 0 then return out end
  if #xs == 0 then
    for _ = 1, k * 3 do out[#out + 1] = 0 end
    return out
  end
  local lo, hi = math.huge, -math.huge
  for _, x in ipairs(xs) do lo = math.min(lo, x); hi = math.max(hi, x) end
  local range = hi - lo
  local counts = {}
  for b = 1, k do counts[b] = 0 end
  if range == 0 then
    counts[k] = #xs
    for b = 1, k do out[#out + 1] = lo; out[#out + 1] = lo; out[#out + 1] = counts[b] end
    return out
  end
  local width = range / k
  for _, x in ipairs(xs) do
    local b = math.floor((x - lo) / width)
    if b > k - 1 then b = k - 1 end
    counts[b + 1] = counts[b + 1] + 1
  end
  for b = 0, k - 1 do
    out[#out + 1] = lo + b * (range / k)
    out[#out + 1] = b == k - 1 and hi or lo + (b + 1) * (range / k)
    out[#out + 1] = counts[b + 1]
  end
  return out
end

describe("tf.summary event files", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function()
    tf.summary.experimental.set_step(nil)
    rmrf(dir)
  end)

  it("are named as TensorFlow names them and start with file_version brain.Event:2", function()
    local w = tf.summary.create_file_writer(dir .. "/a/b", {filename_suffix = ".luatf"})
    w:close()
    local events, path = E.read_dir(dir .. "/a/b")
    local f = assert(io.open("/proc/sys/kernel/hostname"))
    local host = f:read("l")
    f:close()
    assert.truthy(path:match("/events%.out%.tfevents%.%d%d%d%d%d%d%d%d%d%d%." .. host:gsub("%p", "%%%0")
      .. "%.%d+%.%d+%.luatf$"), path)
    assert.equal(w.path, path)
    assert.equal(1, #events)
    assert.equal("file_version", events[1].what)
    assert.equal("brain.Event:2", events[1].file_version)
    assert.equal(0, events[1].step)
    assert.near(os.time(), events[1].wall_time, 5)
    -- the default suffix is TF2's ".v2"
    local w2 = tf.summary.create_file_writer(dir .. "/c")
    w2:close()
    assert.truthy(E.files(dir .. "/c")[1]:match("%.v2$"))
  end)

  it("hold scalars (float32 tensors, the scalars plugin) with their steps and descriptions", function()
    local w = tf.summary.create_file_writer(dir)
    do
      local _ <close> = w:as_default()
      assert.is_true(tf.summary.scalar("loss", 0.1, {step = 1, description = "the **loss**"}))
      assert.is_true(tf.summary.scalar("loss", tf.constant(0.25, tf.float64), {step = 2}))
      assert.is_true(tf.summary.scalar("acc", tf.constant(3, tf.int32), {step = 2}))
      tf.summary.experimental.set_step(9)
      tf.summary.scalar("loss", tf.Variable(1.5), {})
      -- the C fast path's edge cases: step 0 and negative, a long tag and description (heap buffer)
      tf.summary.scalar(("t"):rep(600), -2, {step = 0, description = ("d"):rep(700)})
      tf.summary.scalar("neg", true, {step = -3})
    end
    w:close()
    local ev = E.read_dir(dir)
    local loss = E.values(ev, "loss")
    assert.equal(3, #loss)
    assert.same({1, 2, 9}, {loss[1].step, loss[2].step, loss[3].step})
    assert.same({f32(0.1)}, loss[1].v.values)
    assert.same({0.25}, loss[2].v.values)
    assert.same({1.5}, loss[3].v.values)
    local v = loss[1].v
    assert.equal("scalars", v.plugin)
    assert.equal("", v.content)
    assert.equal(1, v.data_class)          -- DATA_CLASS_SCALAR
    assert.equal(1, v.dtype)               -- DT_FLOAT
    assert.same({}, v.shape)
    assert.equal("tensor", v.kind)
    assert.equal("the **loss**", v.description)
    assert.same({3}, E.values(ev, "acc")[1].v.values)
    local long = E.values(ev, ("t"):rep(600))[1]
    assert.same({0, {-2}, ("d"):rep(700), 1}, {long.step, long.v.values, long.v.description, long.v.data_class})
    local neg = E.values(ev, "neg")[1]
    assert.same({-3, {1}}, {neg.step, neg.v.values})
  end)

  it("hold histograms with TensorBoard's bucket layout (recomputed in Lua)", function()
    local w = tf.summary.create_file_writer(dir)
    local rng = support.lcg(5)
    local xs = {}
    for i = 1, 200 do xs[i] = rng() * 4 - 1 end
    xs[17] = 3.0   -- the maximum lands in the last bucket
    local cases = {
      {tag = "uniform", data = xs, k = 30},
      {tag = "few", data = {1, 2, 2, 3, 10}, k = 4},
      {tag = "single", data = {2.5, 2.5, 2.5}, k = 5},
      {tag = "empty", data = {}, k = 3},
      {tag = "none", data = {1, 2}, k = 0},
    }
    w:as_default(function()
      for i, c in ipairs(cases) do
        local t = #c.data == 0 and tf.zeros({0}, tf.float64) or tf.constant(c.data, tf.float64)
        tf.summary.histogram(c.tag, t, {step = i, buckets = c.k})
      end
      tf.summary.histogram("default30", tf.constant({{1, 2}, {3, 4}}, tf.float32), {step = 7})
    end)
    w:close()
    local ev = E.read_dir(dir)
    for i, c in ipairs(cases) do
      local got = E.values(ev, c.tag)[1]
      assert.equal(i, got.step)
      assert.equal("histograms", got.v.plugin)
      assert.equal(2, got.v.data_class)    -- DATA_CLASS_TENSOR
      assert.equal(2, got.v.dtype)         -- DT_DOUBLE
      assert.same({c.k, 3}, got.v.shape)
      local want = buckets(c.data, c.k)
      assert.equal(#want, #got.v.values, c.tag)
      for j = 1, #want do assert.near(want[j], got.v.values[j], 1e-12, c.tag .. " " .. j) end
    end
    local d = E.values(ev, "default30")[1].v
    assert.same({30, 3}, d.shape)
    local total = 0
    for b = 1, 30 do total = total + d.values[b * 3] end
    assert.equal(4, total)
    assert.equal(1, d.values[30 * 3])  -- the maximum's bucket
    assert.equal(1, d.values[3])
    assert.equal(0, d.values[2 * 3])
  end)

  it("hold text and WAV audio (16-bit PCM) as TensorBoard's text and audio plugins read them", function()
    local w = tf.summary.create_file_writer(dir)
    local clip = {}
    for k = 1, 4 do
      clip[k] = {}
      for t = 1, 6 do clip[k][t] = {math.sin(k + t), -1.5 + t * 0.5} end   -- 2 channels, values past +-1 clamp
    end
    w:as_default(function()
      tf.summary.text("notes", "# Hello\nworld", {step = 3})
      tf.summary.text("table", tf.constant({"a", "b"}), {step = 3})
      tf.summary.audio("clips", tf.constant(clip), 16000, {step = 4, max_outputs = 3})
    end)
    w:close()
    local ev = E.read_dir(dir)
    local t = E.values(ev, "notes")[1]
    assert.equal("text", t.v.plugin)
    assert.equal(7, t.v.dtype)
    assert.equal("# Hello\nworld", t.v.strings[1].text)
    assert.same({2}, E.values(ev, "table")[1].v.shape)
    assert.equal("b", E.values(ev, "table")[1].v.strings[2].text)
    local a = E.values(ev, "clips")[1]
    assert.equal(4, a.step)
    assert.equal("audio", a.v.plugin)
    assert.equal("100b", a.v.content)     -- AudioPluginData{encoding: WAV}
    assert.equal(3, a.v.data_class)       -- DATA_CLASS_BLOB_SEQUENCE
    assert.same({3, 2}, a.v.shape)        -- max_outputs clips: (wav, label)
    for k = 1, 3 do
      local s = a.v.strings[2 * k - 1]
      assert.equal("", a.v.strings[2 * k].text)
      assert.same({channels = 2, sampwidth = 2, rate = 16000, frames = 6}, {channels = s.wav.channels,
        sampwidth = s.wav.sampwidth, rate = s.wav.rate, frames = s.wav.frames})
      for tt = 1, 6 do
        for c = 1, 2 do
          local x = f32(clip[k][tt][c])
          local want = math.max(-32768, math.min(32767, math.floor(x * 32768 + 0.5)))
          if x * 32768 < 0 and (x * 32768) % 1 == 0.5 then want = want - 1 end   -- roundf: half away from zero
          assert.equal(want, s.wav.samples[(tt - 1) * 2 + c], k .. " " .. tt .. " " .. c)
        end
      end
    end
  end)

  it("hold PNG images that decode (PIL) to the data given", function()
    if not (tf.io and tf.io.encode_png) then
      pending("tf.io.encode_png is not merged yet")
      return
    end
    local w = tf.summary.create_file_writer(dir)
    local px = {}
    for k = 1, 4 do
      px[k] = {}
      for y = 1, 3 do
        px[k][y] = {}
        for x = 1, 5 do px[k][y][x] = {(k * 37 + y * 91 + x * 53) % 256, (k * 7 + y * 3 + x * 201) % 256, (k + y * x * 29) % 256} end
      end
    end
    w:as_default(function()
      tf.summary.image("imgs", tf.constant(px, tf.uint8), {step = 2, max_outputs = 2})
      tf.summary.image("float", tf.constant({{{{0.0}, {0.5}, {1.0}}}}), {step = 2})
    end)
    w:close()
    local ev = E.read_dir(dir)
    local v = E.values(ev, "imgs")[1].v
    assert.equal("images", v.plugin)
    assert.equal(3, v.data_class)
    assert.same({4}, v.shape)   -- width, height, 2 images
    assert.equal("5", v.strings[1].text)
    assert.equal("3", v.strings[2].text)
    for k = 1, 2 do
      local png = v.strings[2 + k].png
      assert.equal(5, png.width)
      assert.equal(3, png.height)
      for y = 1, 3 do
        for x = 1, 5 do assert.same(px[k][y][x], png.pixels[(y - 1) * 5 + x]) end
      end
    end
    local g = E.values(ev, "float")[1].v.strings[3].png
    assert.same({{0}, {127}, {255}}, g.pixels)   -- convert_image_dtype: floor(x * 255.5), saturated
  end)
end)

describe("tf.summary semantics", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function()
    tf.summary.experimental.set_step(nil)
    rmrf(dir)
  end)

  it("write nothing without a default writer (returns false), as TensorFlow", function()
    local w = tf.summary.create_file_writer(dir)
    assert.is_false(tf.summary.scalar("x", 1, {step = 1}))
    assert.is_false(tf.summary.should_record_summaries())
    -- no step needed when nothing would be written
    assert.is_false(tf.summary.scalar("x", 1))
    w:close()
    assert.equal(1, #E.read_dir(dir))
  end)

  it("need a step: ValueError 'No step set' as TensorFlow, nothing written", function()
    local w = tf.summary.create_file_writer(dir)
    w:as_default(function()
      assert.tf_error("ValueError", "No step set. Please specify one either through the `step` argument or through "
        .. "tf.summary.experimental.set_step()", function() tf.summary.scalar("x", 1) end)
    end)
    w:close()
    assert.equal(1, #E.read_dir(dir))
  end)

  it("take the step from the keyword, then set_step, then as_default's step; scopes restore", function()
    local w = tf.summary.create_file_writer(dir)
    w:as_default({step = 5}, function()
      tf.summary.scalar("a", 1)
      tf.summary.scalar("a", 2, {step = 6})
      tf.summary.experimental.set_step(tf.constant(8, tf.int32))
      assert.equal(8, tf.summary.experimental.get_step():numpy())
      tf.summary.scalar("a", 3)
    end)
    assert.is_nil(tf.summary.experimental.get_step())   -- as_default's step is restored on exit
    w:close()
    local a = E.values(E.read_dir(dir), "a")
    assert.same({5, 6, 8}, {a[1].step, a[2].step, a[3].step})
  end)

  it("record_if: booleans, functions and bool tensors gate writes; scopes nest and restore", function()
    local w = tf.summary.create_file_writer(dir)
    w:set_as_default(1)
    local on = false
    tf.summary.record_if(false, function()
      assert.is_false(tf.summary.scalar("r", 1))
      assert.is_false(tf.summary.should_record_summaries())
      tf.summary.record_if(true, function() tf.summary.scalar("r", 2) end)
    end)
    do
      local _ <close> = tf.summary.record_if(function() return on end)
      tf.summary.scalar("r", 3)
      on = true
      tf.summary.scalar("r", 4)
    end
    tf.summary.record_if(tf.constant(false), function() tf.summary.scalar("r", 5) end)
    tf.summary.record_if(tf.constant(true), function() tf.summary.scalar("r", 6) end)
    assert.is_true(tf.summary.should_record_summaries())
    w:close()
    assert.is_false(tf.summary.scalar("r", 7))   -- the closed writer is no longer the default
    local r = E.values(E.read_dir(dir), "r")
    local got = {}
    for i, x in ipairs(r) do got[i] = x.v.values[1] end
    assert.same({2, 4, 6}, got)
  end)

  it("flush: max_queue and explicit flushes put events in the file before close", function()
    local w = tf.summary.create_file_writer(dir, {max_queue = 3, flush_millis = 1000000})
    w:set_as_default(1)
    tf.summary.scalar("q", 1)
    tf.summary.scalar("q", 2)
    -- records in the file, counted from their length fields (io.popen would
    -- flush every C stream of the process: Lua's popen calls fflush(NULL))
    local function records()
      local s, n, pos = support.slurp(w.path), 0, 1
      while pos + 8 <= #s do
        pos = pos + 16 + string.unpack("<I8", s, pos)
        n = n + 1
      end
      return n
    end
    assert.equal(1, records())        -- 2 pending
    tf.summary.scalar("q", 3)
    assert.equal(4, records())        -- the third flushed the queue
    tf.summary.scalar("q", 4)
    assert.equal(4, records())
    tf.summary.flush()
    assert.equal(5, records())
    w:close()
    assert.equal(5, #E.read(w.path))
  end)

  it("a writer nothing refers to is closed by the collector, its events flushed", function()
    local path
    local noop = tf.summary.create_noop_writer()
    do
      local w = tf.summary.create_file_writer(dir, {max_queue = 100})
      path = w.path
      w:as_default(function() tf.summary.scalar("g", 1, {step = 1}) end)
      tf.summary.scalar("g", 2, {step = 2})   -- no default writer any more: not written
      w:set_as_default()
      tf.summary.scalar("g", 3, {step = 3})
      noop:set_as_default()   -- drops the last reference to w
    end
    collectgarbage()
    collectgarbage()
    noop:close()            -- no default writer again
    assert.is_false(tf.summary.should_record_summaries())
    local g = E.values(E.read(path), "g")
    assert.same({1, 3}, {g[1].v.values[1], g[2].v.values[1]})
  end)

  it("write inside tf.fn at every call: the writer captured, the step a tensor (a variable read each call)", function()
    local w = tf.summary.create_file_writer(dir)
    local step = tf.Variable(tf.constant(0, tf.int64))
    tf.summary.experimental.set_step(step)
    local f = tf.fn(function(x)
      tf.summary.scalar("fx", x * 2)
      tf.summary.histogram("hx", x, {buckets = 2})
      step:assign_add(tf.constant(1, tf.int64))
      return x + 1
    end)
    w:as_default(function()
      for i = 1, 3 do f(tf.constant(i + 0.5)) end
    end)
    assert.equal(1, f:tracing_count())
    local has_op = false
    for _, n in ipairs(f:get_concrete_function(tf.constant(1.0)).graph:nodes()) do
      if n.op == "write_summary" then has_op = true end
    end
    assert.is_true(has_op)
    w:close()
    local ev = E.read_dir(dir)
    local fx = E.values(ev, "fx")
    assert.equal(3, #fx)
    for i = 1, 3 do
      assert.equal(i - 1, fx[i].step)
      assert.equal((i + 0.5) * 2, fx[i].v.values[1])
    end
    assert.same({i = 3.5, s = {3.5, 3.5, 0, 3.5, 3.5, 1}}, {i = 3.5, s = E.values(ev, "hx")[3].v.values})
  end)

  it("inside tf.fn a record_if tensor condition is checked at every call", function()
    local w = tf.summary.create_file_writer(dir)
    local f = tf.fn(function(x, keep)
      return tf.summary.record_if(keep, function()
        tf.summary.scalar("c", x, {step = 1})
        return x
      end)
    end)
    w:as_default(function()
      f(tf.constant(1.0), tf.constant(true))
      f(tf.constant(2.0), tf.constant(false))
      f(tf.constant(3.0), tf.constant(true))
    end)
    assert.equal(1, f:tracing_count())
    w:close()
    local c = E.values(E.read_dir(dir), "c")
    assert.same({1, 3}, {c[1].v.values[1], c[2].v.values[1]})
  end)

  it("trace_on / trace_export write the graph of a tf.fn (names, ops, inputs, shapes)", function()
    local w = tf.summary.create_file_writer(dir)
    local f = tf.fn(function(x, y) return tf.matmul(x, y) + 1 end)
    tf.summary.trace_on({graph = true})
    f(tf.ones({2, 3}), tf.ones({3, 4}))
    w:as_default(function() assert.is_true(tf.summary.trace_export("matmul_graph", {step = 0})) end)
    w:close()
    local ev = E.read_dir(dir)
    local g = ev[2].graph
    assert.equal("graph_def", ev[2].what)
    local want = f:get_concrete_function(tf.ones({2, 3}), tf.ones({3, 4})).graph:nodes()
    assert.equal(#want, #g.nodes)
    local by = {}
    for i, n in ipairs(g.nodes) do
      by[n.name] = n
      assert.equal(want[i].name, n.name)
      assert.equal(want[i].op, n.op)
      local ins = {}
      for j, s in ipairs(want[i].inputs) do ins[j] = s:gsub(":0$", "") end
      assert.same(ins, n.input)
    end
    local mm
    for _, n in ipairs(g.nodes) do if n.op == "matmul" then mm = n end end
    assert.same({2, 4}, mm.shape)
    assert.equal(1, mm.T)   -- DT_FLOAT
    -- trace_export without trace_on writes nothing
    assert.is_false(tf.summary.trace_export("again"))
  end)

  it("errors name the function and the argument", function()
    local w = tf.summary.create_file_writer(dir)
    w:set_as_default(1)
    assert.tf_error("ValueError", "scalar: 'data' must be a scalar, got shape (2,)", function()
      tf.summary.scalar("s", tf.constant({1, 2}))
    end)
    assert.tf_error("TypeError", "scalar: 'data' must be numeric, got string", function()
      tf.summary.scalar("s", tf.constant("x"))
    end)
    assert.tf_error("TypeError", "scalar: unknown option 'stepp'", function() tf.summary.scalar("s", 1, {stepp = 1}) end)
    assert.tf_error("ValueError", "audio: 'data' must be [k, t, c], got shape (3,)", function()
      tf.summary.audio("a", tf.constant({0.1, 0.2, 0.3}), 8000)
    end)
    assert.tf_error("ValueError", "audio: unknown encoding 'mp3' (only \"wav\")", function()
      tf.summary.audio("a", tf.zeros({1, 2, 1}), 8000, {encoding = "mp3"})
    end)
    assert.tf_error("TypeError", "create_file_writer: 'logdir' must be a string, got number", function()
      tf.summary.create_file_writer(3)
    end)
    assert.tf_error("TypeError", "record_if: 'condition' must be a boolean, a function or a bool tensor, got string",
      function() tf.summary.record_if("yes") end)
    w:close()
    assert.equal(1, #E.read_dir(dir))
  end)
end)
