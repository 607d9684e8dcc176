-- tf.saved_model with GPU-resident variables and constants (a real GPU or
-- the simulated one: LTF_GPU_SIM=1, as scripts/test.sh runs spec/gpu): the
-- values are copied to the host when saved; loaded variables live on the
-- CPU and the loaded graph runs where its inputs are.
local support = require("support")
local G = require("gpu_support")
local tf = require("tf")
local gpu_it = G.make_it(it, function(why) pending(why) end)

describe("tf.saved_model on the GPU", function()
  gpu_it("saves GPU variables and constants and runs the loaded graph on GPU or CPU inputs", function()
    local dir = support.tmpdir()
    local v
    tf.device("/gpu:0", function() v = tf.Variable(tf.constant({1.0, 2.0}), {name = "gv"}) end)
    assert.equal(G.GPU, v.device)
    local c = tf.constant({10.0, 20.0}):gpu()
    local f = tf.fn(function(x) return x * v + c end)
    local x = tf.constant({1.0, 3.0}):gpu()
    assert.same({11.0, 26.0}, f(x):cpu():totable())
    tf.saved_model.save(f, dir)
    local m = tf.saved_model.load(dir)
    assert.equal(G.CPU, m.variables[1].device)
    local y = m(x)
    assert.same({11.0, 26.0}, y:cpu():totable())
    assert.same({11.0, 26.0}, m(tf.constant({1.0, 3.0})):totable())
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)
