--- What the specs in spec/gpu/ share: "the GPU" is a real one or the
-- simulated one (LTF_GPU_SIM=1, as scripts/test.sh runs that folder a second
-- time); without one each case is pending with the reason.
local tf = require("tf")

local M = {
  GPU = "/job:localhost/replica:0/task:0/device:GPU:0",
  CPU = "/job:localhost/replica:0/task:0/device:CPU:0",
  have_gpu = #tf.config.list_physical_devices("GPU") > 0,
}

--- An it(name, fn) that makes the case pending when there is no GPU; takes
-- busted's `it` and a function calling its `pending` (they live in the spec
-- file's environment, and `pending` there changes once a case runs).
function M.make_it(it, pending)
  return function(name, fn)
    it(name, function()
      if not M.have_gpu then
        pending("no GPU: tf.config.list_physical_devices('GPU') is empty (scripts/test.sh runs these with LTF_GPU_SIM=1)")
        return
      end
      fn()
    end)
  end
end

return M
