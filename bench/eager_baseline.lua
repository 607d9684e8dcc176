-- bench/eager_baseline.lua: the figures bench/eager.lua compares against
-- (written by `lua5.4 bench/eager.lua --instr --save`; see bench/README.md).
return {
  chain100_eager_us_per_op = 0.281286,
  chain100_instr = 3270.1,
  chain100_ratio = 0.389182,
  commit = "ad44a56",
  date = "2026-11-28",
  load = "2.70",
  machine = "AMD EPYC, 2 cores",
  numpy_chain100_us_per_op = 0.722763,
  numpy_small_op_us = 0.298235,
  small_op_instr = 2933.79,
  small_op_ratio = 0.689611,
  small_op_us = 0.205666,
}
