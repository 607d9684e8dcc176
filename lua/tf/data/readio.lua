--- tf.data.readio: what an iterator being built hands to the file readers
-- under it (lua/tf/data/files.lua, lua/tf/data/tfrecord.lua; one table per
-- lua_State, nothing shared between states):
--   get_pool       a function giving the reader pool (tf.core.internal.read_pool,
--                  made on first use) of the interleave whose function's
--                  datasets are being opened: their readers run on its
--                  threads (num_parallel_calls)
--   deterministic  the innermost Options' deterministic setting of the
--                  pipeline being opened (nil: not set)
--   ready[it]      for an iterator function: a function telling whether
--                  its next call returns without waiting (interleave's
--                  deterministic = false takes a ready input first)
--   closer[it]     for an iterator function: a function that stops its
--                  readers now (their threads end or go idle) rather than
--                  when the iterator is collected; take(n) calls it once it
--                  has its n elements
-- with(fields, f, ...): f(...) with the fields set, restored afterwards.
-- close(it): runs it's closer once (nothing when it has none).
local M = {ready = setmetatable({}, {__mode = "k"}), closer = setmetatable({}, {__mode = "k"})}

function M.close(it)
  local c = it and M.closer[it]
  if c then
    M.closer[it] = nil
    c()
  end
end

function M.with(fields, f, ...)
  local old = {}
  for k, v in pairs(fields) do old[k] = M[k]; M[k] = v end
  local r = table.pack(pcall(f, ...))
  for k in pairs(fields) do M[k] = old[k] end
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

return M
