-- Gradient-check cases for the collective ops (see harness.lua). In one
-- process they run as a group of one (no communicator: the identity), so
-- these check the gradient wiring; spec/distribute/collective_grad_spec.lua
-- checks the gradients across ranks under mpirun (scripts/mpi-specs.sh).
local function C() return require("tf.distribute.collective") end
local function distinct(i) return ((i * 7) % 11) * 0.37 - 1.5 end

return {
  cases = {
    all_reduce = {inputs = {{{2, 3}}}, fn = function(_, x) return C().all_reduce(x) end},
    all_reduce_mean = {inputs = {{{3}}}, fn = function(_, x) return C().all_reduce(x, "MEAN") end},
    all_reduce_max = {inputs = {{{4}, distinct}}, fn = function(_, x) return C().all_reduce(x, "MAX") end},
    all_reduce_buckets = {inputs = {{{2}}, {{3}}}, fn = function(tf, a, b)
      local r = C().all_reduce_buckets({a, b}, "SUM")
      return tf.concat({r[1], r[2]}, 1)
    end},
    broadcast = {inputs = {{{2, 2}}}, fn = function(_, x) return C().broadcast(x, 0) end},
    all_gather = {inputs = {{{2, 2}}}, fn = function(_, x) return C().all_gather(x) end},
    reduce_scatter = {inputs = {{{4}}}, fn = function(_, x) return C().reduce_scatter(x, "MEAN") end},
  },
  nondifferentiable = {},
}
