-- A worker of spec/distribute/collective_fault_spec.lua (started by mpirun
-- there, not a spec itself): all-reduces in a loop; rank 1 kills itself
-- with SIGKILL at step 5 (FAULT_MODE=kill), exits (exit), ends its loop
-- and script normally (end) or none of these (none:
-- LTF_MPI_TEST_DIE_IN_CALL kills it inside a call). Every other rank prints one line:
--   rank R: <kind>: <message> | <seconds from the kill to the error>
local tf = require("tf")
local C = require("tf.distribute.collective")
local comm = C.init()
local function pid()
  local f = assert(io.open("/proc/self/stat"))
  local p = f:read("n")
  f:close()
  return p
end
local killed_at = tonumber(os.getenv("FAULT_STEP") or "5")
local mode = os.getenv("FAULT_MODE") or "kill"
for step = 1, 1000 do
  if comm.rank == 1 and step == killed_at and mode ~= "none" then
    -- the others learn the time of death from a file (same host)
    local f = io.open(os.getenv("FAULT_DIR") .. "/killed", "w")
    f:write(string.format("%.6f", C.wtime and C.wtime() or os.time()))
    f:close()
    if mode == "exit" then os.exit(3) end
    if mode == "end" then break end   -- the script ends early, normally
    os.execute("kill -9 " .. pid())
  end
  local ok, e = pcall(C.all_reduce, tf.constant({1.0, 2.0}))
  if not ok then
    local now = C.wtime()
    local f = io.open(os.getenv("FAULT_DIR") .. "/killed")
    local t0 = f and tonumber(f:read("a")) or now
    if f then f:close() end
    io.write(("rank %d: %s: %s | %.3f\n"):format(comm.rank, tostring(e.kind), tostring(e.message), now - t0))
    io.stdout:flush()
    -- every later collective fails at once with the same message
    local ok2, e2 = pcall(C.barrier)
    io.write(("rank %d later: %s: %s\n"):format(comm.rank, tostring(ok2), tostring(e2 and e2.message)))
    os.exit(0)
  end
end
io.write(("rank %d: no error\n"):format(comm.rank))
