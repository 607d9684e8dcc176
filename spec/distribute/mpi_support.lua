-- spec/distribute/mpi_support.lua: starting worker scripts under mpirun
-- from a spec (as CI does: --allow-run-as-root --oversubscribe on a small
-- machine), and knowing when that cannot be done (then the spec is pending).
local M = {}

--- The size of the MPI job this process is a rank of (nil: not started by mpirun/srun).
function M.job_size()
  for _, k in ipairs({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) do
    local v = tonumber(os.getenv(k) or "")
    if v then return v end
  end
  return nil
end

--- nil when multi-process specs can run, else the reason they cannot.
function M.unavailable()
  if M.job_size() then
    return "this process is a rank of an MPI job (scripts/mpi-specs.sh); the spec starts its own mpirun " ..
      "when run by plain busted"
  end
  if not os.execute("command -v mpirun >/dev/null 2>&1") then return "mpirun not found (apt-get install openmpi-bin)" end
  if not package.searchpath("tf.distribute.collective", package.path) then
    return "tf.distribute.collective (the MPI module) is not installed"
  end
  local tf = require("tf")
  local ok, C = pcall(require, "tf.distribute.collective")
  if ok and type(C) == "function" then C = C(tf) or tf.distribute.collective end
  if not ok or not C.available() then return "luatf's MPI module was not built (libopenmpi-dev)" end
  return nil
end

--- Environment for an mpirun started by a spec: under the sanitizer run
-- (scripts/sanitize.sh preloads ASan into lua5.4, and mpirun and its ranks
-- inherit it) leak detection is off for the job: OpenMPI leaves its own
-- allocations at exit, in components it has unloaded by then, so their
-- stacks end in "<unknown module>" and no suppression can name them. The
-- ranks are still checked for memory errors; luatf's collective code is
-- leak-checked by the one-process specs and ctest test_collective.
function M.env()
  if (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) then
    local a = os.getenv("ASAN_OPTIONS") or ""
    return "ASAN_OPTIONS='" .. (a ~= "" and a .. ":" or "") .. "detect_leaks=0' "
  end
  return ""
end

--- Run 'script' (with its arguments) in 'np' processes; returns ok and
-- the combined output. A job that runs past 'limit' seconds is killed.
function M.run(np, script, args, limit)
  -- single-threaded workers (two or three of them share a small machine)
  local env = {"-x LTF_NUM_THREADS=1", "-x OPENBLAS_NUM_THREADS=1"}
  for _, k in ipairs({"LUA_PATH_5_4", "LUA_CPATH_5_4", "LUA_PATH", "LUA_CPATH"}) do
    if os.getenv(k) then env[#env + 1] = "-x " .. k end
  end
  local cmd = (M.env() .. "timeout %d mpirun --allow-run-as-root --oversubscribe -np %d %s lua5.4 %s %s 2>&1"):format(
    limit or 300, np, table.concat(env, " "), script, table.concat(args or {}, " "))
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok = p:close()
  return ok == true, out
end

--- A fresh temporary directory.
function M.tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end

--- The numbers of a file, one a line (lines that are not numbers are kept in 'words').
function M.read_numbers(path)
  local nums, words = {}, {}
  local f = io.open(path)
  if not f then return nil end
  for line in f:lines() do
    local v = tonumber(line)
    if v then nums[#nums + 1] = v else words[#words + 1] = line end
  end
  f:close()
  return nums, words
end

return M
