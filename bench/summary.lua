-- bench/summary.lua: the cost of tf.summary.scalar inside a traced training
-- step (issue 20: under 2 us per call). A tf.fn step (Dense 32 -> 32 on a
-- batch of 16, SGD) is timed without summaries and with N scalar summaries
-- of its loss (the step a tf.Variable set with set_step, incremented in
-- the step); the difference divided by N is the per-call cost: the
-- write_summary node's kernel (an Event serialized with protobuf-c, framed
-- as a TFRecord into the writer's buffer) and its dispatch in the plan.
-- Also the eager per-call cost. No peer: TensorFlow is not installed here;
-- the target is absolute.
-- Usage: lua5.4 bench/summary.lua [N]
package.path = "bench/?.lua;" .. package.path
local tf = require("tf")
local T = require("timing")

local N = tonumber(arg[1]) or 32
local dir = os.getenv("BENCH_OUT") and (os.getenv("BENCH_OUT") .. "/summary-logs") or "/tmp/luatf-summary-bench"
os.execute("rm -rf '" .. dir .. "'")
local w = tf.summary.create_file_writer(dir, {max_queue = 1000, flush_millis = 1000})
w:set_as_default()
local step = tf.Variable(tf.constant(0, tf.int64))
tf.summary.experimental.set_step(step)

local W = tf.Variable(tf.random.normal({32, 32}, {seed = 1}) * 0.1)
local x = tf.random.normal({16, 32}, {seed = 2})
local y = tf.random.normal({16, 32}, {seed = 3})

local function make(n)
  return tf.fn(function(xb, yb)
    local tape = tf.GradientTape()
    local loss = tape:record(function() return tf.reduce_mean(tf.square(tf.matmul(xb, W) - yb)) end)
    local g = tape:gradient(loss, W)
    W:assign_sub(g * 0.01)
    for i = 1, n do tf.summary.scalar("loss", loss) end
    step:assign_add(tf.constant(1, tf.int64))
    return loss
  end)
end

local plain, with = make(0), make(N)
local t_plain = T.timed(function(k) for _ = 1, k do plain(x, y) end end)
local t_with = T.timed(function(k) for _ = 1, k do with(x, y) end end)
local per_traced = (t_with - t_plain) / N
local t_eager = T.timed(function(k) for _ = 1, k do tf.summary.scalar("eager", 0.5) end end)
w:close()
print(("traced step without summaries      %8.2f us"):format(t_plain * 1e6))
print(("traced step with %3d scalars        %8.2f us"):format(N, t_with * 1e6))
print(("tf.summary.scalar in a traced step  %8.3f us per call (target < 2 us)"):format(per_traced * 1e6))
print(("tf.summary.scalar eagerly           %8.3f us per call"):format(t_eager * 1e6))
T.result("summary_scalar_traced_us", per_traced * 1e6, "us")
T.result("summary_scalar_eager_us", t_eager * 1e6, "us")
