-- tf.keras.callbacks.TensorBoard: the event files Keras writes (train/ and
-- validation/ runs, epoch_/batch_ scalars, weight histograms, the train
-- step's graph), read back by spec/summary/read_events.py.
local tf = require("tf")
local support = require("support")
local E = require("summary.events")

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

describe("tf.keras.callbacks.TensorBoard", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  local function fit(cb_opts, fit_opts)
    tf.random.set_seed(4)
    local X = tf.random.normal({40, 3}, {seed = 1})
    local Y = tf.reduce_sum(X, 2, {keepdims = true})
    local m = tf.keras.Sequential{tf.keras.layers.Dense{4, activation = "relu", name = "hidden"},
                                  tf.keras.layers.Dense{1, name = "out"}}
    m:compile{optimizer = tf.keras.optimizers.SGD{learning_rate = 0.05}, loss = "mse", metrics = {"mae"}}
    cb_opts.log_dir = dir
    local o = {epochs = 3, batch_size = 10, verbose = 0, callbacks = {tf.keras.callbacks.TensorBoard(cb_opts)}}
    for k, v in pairs(fit_opts or {}) do o[k] = v end
    local h = m:fit(X, Y, o)
    return m, h
  end

  it("writes epoch_<metric> scalars per epoch (step = epoch - 1) to train/ and validation/", function()
    local _, h = fit({}, {validation_split = 0.25})
    local train = E.read_dir(dir .. "/train")
    local val = E.read_dir(dir .. "/validation")
    for _, name in ipairs({"loss", "mae"}) do
      local t = E.values(train, "epoch_" .. name)
      local v = E.values(val, "epoch_" .. name)
      assert.equal(3, #t)
      assert.equal(3, #v)
      for e = 1, 3 do
        assert.equal(e - 1, t[e].step)
        assert.equal(f32(h.history[name][e]), t[e].v.values[1])
        assert.equal(f32(h.history["val_" .. name][e]), v[e].v.values[1])
      end
    end
    -- evaluation_<metric>_vs_iterations at the global batch count (3 batches per epoch)
    local ev = E.values(val, "evaluation_loss_vs_iterations")
    assert.same({3, 6, 9}, {ev[1].step, ev[2].step, ev[3].step})
    assert.equal(0, #E.values(train, "batch_loss"))   -- update_freq = "epoch"
    assert.equal(0, #E.values(train, nil) - 6)        -- no histograms by default
  end)

  it("writes batch_ scalars every update_freq batches and the train step's graph", function()
    fit({update_freq = 2})
    local train = E.read_dir(dir .. "/train")
    local b = E.values(train, "batch_loss")
    local steps = {}
    for i, x in ipairs(b) do steps[i] = x.step end
    assert.same({2, 4, 6, 8, 10, 12}, steps)   -- 4 batches x 3 epochs
    local g
    for _, e in ipairs(train) do if e.what == "graph_def" then g = e.graph end end
    assert.truthy(g)
    local ops = {}
    for _, n in ipairs(g.nodes) do ops[n.op] = true end
    assert.truthy(ops.matmul)
    assert.truthy(ops.Placeholder)
  end)

  it("writes weight histograms every histogram_freq epochs (the last one: the final weights)", function()
    local m = fit({histogram_freq = 2, write_graph = false})
    local train = E.read_dir(dir .. "/train")
    for _, e in ipairs(train) do assert.not_equal("graph_def", e.what) end
    local hk = E.values(train, "hidden/kernel_0/histogram")
    assert.same({0, 2}, {hk[1].step, hk[2].step})   -- epochs 1 and 3
    assert.equal(2, #E.values(train, "out/bias_0/histogram"))
    -- the last histogram holds the final kernel: 12 values, bucket counts summing to 12, edges min .. max
    local k = m.layers[1].kernel:numpy()
    local xs = support.flatten(k)
    local lo, hi = math.huge, -math.huge
    for _, x in ipairs(xs) do lo = math.min(lo, x); hi = math.max(hi, x) end
    local vals = hk[2].v.values
    assert.equal(90, #vals)
    assert.equal(lo, vals[1])
    assert.equal(hi, vals[90 - 1])
    local n = 0
    for b = 1, 30 do n = n + vals[b * 3] end
    assert.equal(12, n)
  end)

  it("checks its options", function()
    assert.tf_error("ValueError", "TensorBoard: 'update_freq' must be \"epoch\", \"batch\" or an integer > 0, got 0",
      function() tf.keras.callbacks.TensorBoard{update_freq = 0} end)
    assert.tf_error("TypeError", "TensorBoard: unknown option 'logdir'",
      function() tf.keras.callbacks.TensorBoard{logdir = "x"} end)
    assert.tf_error("ValueError", "TensorBoard: 'profile_batch' is not supported (must be 0), got 2",
      function() tf.keras.callbacks.TensorBoard{profile_batch = 2} end)
    assert.equal("runs/a", tf.keras.callbacks.TensorBoard{"runs/a"}.log_dir)
  end)
end)
