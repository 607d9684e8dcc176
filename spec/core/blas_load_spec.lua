-- OpenBLAS is loaded on first use (core/cpu/blas_lib.c, docs/internals.md
-- "OpenBLAS, loaded on first use"): `require("tf")` and small ops do not map
-- it; the first product or factorization does, from $LTF_BLAS_LIBRARY when
-- set; a library that cannot be loaded fails those ops with
-- FailedPreconditionError naming the op, the library and the loader's reason.
-- Each case runs in a child process (this one has loaded OpenBLAS already).
require("tf")

local q = require("support").shell_quote

-- stdout of a Lua snippet run in a fresh lua5.4, with 'env' ("NAME=value ...") set
local function run(code, env)
  local out = os.tmpname()
  local cmd = string.format("env -u LTF_BLAS_LIBRARY %s LUA_PATH_5_4=%s LUA_CPATH_5_4=%s lua5.4 -e %s >%s 2>&1",
    env or "", q(package.path), q(package.cpath), q(code), out)
  local ok = os.execute(cmd)
  local f = io.open(out, "rb"); local s = f:read("a"); f:close(); os.remove(out)
  assert(ok, "child failed: " .. s)
  return s
end

local PRELUDE = [[
local tf = require("tf")
local function mapped()
  local f = io.open("/proc/self/maps"); local s = f:read("a"); f:close()
  return s:find("libopenblas", 1, true) ~= nil
end
local function try(f, ...)
  local ok, e = pcall(f, ...)
  if ok then return "ok" end
  return tostring(e.kind) .. "|" .. tostring(e.message)
end
]]

describe("OpenBLAS loading", function()
  it("is not mapped by require('tf') and small ops, and is by the first matmul", function()
    local s = run(PRELUDE .. [[
      io.write("after require: ", tostring(mapped()), "\n")
      local y = tf.add(tf.constant({1, 2}), tf.constant({3, 4}))
      io.write("after add: ", tostring(mapped()), " ", tostring(y:numpy()[2]), "\n")
      local p = tf.matmul(tf.ones({64, 64}), tf.fill({64, 64}, 2.0))
      io.write("after matmul: ", tostring(mapped()), " ", tostring(p:numpy()[64][64]), "\n")
    ]])
    assert.equal("after require: false\nafter add: false 6\nafter matmul: true 128.0\n", s)
  end)

  it("is taken from LTF_BLAS_LIBRARY when set", function()
    -- the real file behind the SONAME, by its path
    local p = io.popen("readlink -f /usr/lib/x86_64-linux-gnu/libopenblas.so.0 2>/dev/null"):read("l")
    if not p or p == "" then return pending("no /usr/lib/x86_64-linux-gnu/libopenblas.so.0") end
    local s = run(PRELUDE .. [[
      local x = tf.constant({{4.0, 2.0}, {2.0, 3.0}}, tf.float64)
      local l = tf.linalg.cholesky(x):numpy()
      io.write(string.format("%.12f %.12f %.12f %s\n", l[1][1], l[2][1], l[2][2], tostring(mapped())))
    ]], "LTF_BLAS_LIBRARY=" .. q(p))
    -- chol([[4,2],[2,3]]) = [[2,0],[1,sqrt(2)]]
    assert.equal(string.format("%.12f %.12f %.12f true\n", 2, 1, math.sqrt(2)), s)
  end)

  it("fails the ops that need it, naming the op and the library, when it cannot be loaded", function()
    local s = run(PRELUDE .. [[
      io.write(tostring((tf.constant({1.5, 2}) * 2):numpy()[2]), "\n")
      io.write(try(tf.matmul, tf.ones({2, 2}), tf.ones({2, 2})), "\n")
      io.write(try(tf.linalg.cholesky, tf.eye(2)), "\n")
      io.write(try(tf.linalg.triangular_solve, tf.eye(2), tf.ones({2, 1})), "\n")
      io.write(tostring(tf.reduce_sum(tf.ones({3, 3})):numpy()), " ", tostring(mapped()), "\n")
    ]], "LTF_BLAS_LIBRARY=/nonexistent/libopenblas.so.0")
    local why = "(/nonexistent/libopenblas.so.0: cannot open shared object file: No such file or directory)" ..
                "; install libopenblas0 or set LTF_BLAS_LIBRARY"
    assert.equal("4.0\n" ..
      "FailedPreconditionError|matmul: OpenBLAS could not be loaded " .. why .. "\n" ..
      "FailedPreconditionError|cholesky: OpenBLAS could not be loaded " .. why .. "\n" ..
      "FailedPreconditionError|triangular_solve: OpenBLAS could not be loaded " .. why .. "\n" ..
      "9.0 false\n", s)
  end)

  it("names the missing symbol when the library is not a BLAS", function()
    local s = run(PRELUDE .. [[
      io.write(try(tf.matmul, tf.ones({2, 2}), tf.ones({2, 2})), "\n")
    ]], "LTF_BLAS_LIBRARY=libz.so.1")
    assert.equal("FailedPreconditionError|matmul: OpenBLAS could not be loaded (libz.so.1: no symbol cblas_sgemm)" ..
                 "; install libopenblas0 or set LTF_BLAS_LIBRARY\n", s)
  end)
end)
