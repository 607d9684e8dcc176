-- tf.linalg: factorizations through LAPACK, checked against plain-Lua
-- float64 references (products, determinants by elimination, hand-worked
-- small cases), batched, float32 and float64, inside tf.fn with unknown
-- dims, and the error kinds and messages TensorFlow gives.
local tf = require("tf")

-- {==== plain-Lua references
local function mmul(a, b)
  local c = {}
  for i = 1, #a do
    c[i] = {}
    for j = 1, #b[1] do
      local s = 0
      for k = 1, #b do s = s + a[i][k] * b[k][j] end
      c[i][j] = s
    end
  end
  return c
end

local function tr(a)
  local t = {}
  for j = 1, #a[1] do
    t[j] = {}
    for i = 1, #a do t[j][i] = a[i][j] end
  end
  return t
end

local function eye(n)
  local e = {}
  for i = 1, n do
    e[i] = {}
    for j = 1, n do e[i][j] = i == j and 1 or 0 end
  end
  return e
end

-- determinant by Gaussian elimination with partial pivoting
local function det(a)
  local n, m, d = #a, {}, 1
  for i = 1, n do m[i] = {table.unpack(a[i])} end
  for c = 1, n do
    local p = c
    for r = c + 1, n do if math.abs(m[r][c]) > math.abs(m[p][c]) then p = r end end
    if m[p][c] == 0 then return 0 end
    if p ~= c then m[p], m[c] = m[c], m[p]; d = -d end
    d = d * m[c][c]
    for r = c + 1, n do
      local f = m[r][c] / m[c][c]
      for k = c, n do m[r][k] = m[r][k] - f * m[c][k] end
    end
  end
  return d
end

local function lcg(seed)
  local s = seed
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648 * 2 - 1
  end
end

local function random_matrix(rows, cols, seed, shift)
  local r, a = lcg(seed), {}
  for i = 1, rows do
    a[i] = {}
    for j = 1, cols do a[i][j] = r() + ((i == j and shift) or 0) end
  end
  return a
end

local function spd(n, seed)
  local a = random_matrix(n, n, seed)
  local s = mmul(a, tr(a))
  for i = 1, n do s[i][i] = s[i][i] + n end
  return s
end

local F64 = tf.float64
-- }====

describe("tf.linalg.cholesky", function()
  it("factors a 2x2 matrix by hand", function()
    local l = tf.linalg.cholesky(tf.constant({{4, 2}, {2, 3}}, F64))
    assert.tensor_near({{2, 0}, {1, math.sqrt(2)}}, l, {atol = 1e-14})
  end)

  it("gives L with L L^T = A over a batch, float64 and float32", function()
    local a1, a2 = spd(5, 1), spd(5, 2)
    for _, dt in ipairs({tf.float64, tf.float32}) do
      local l = tf.linalg.cholesky(tf.constant({a1, a2}, dt))
      assert.shape({2, 5, 5}, l)
      local lt = l:totable()
      for b, a in ipairs({a1, a2}) do
        for i = 1, 5 do for j = i + 1, 5 do assert.are.equal(0, lt[b][i][j]) end end
        assert.tensor_near(a, tf.constant(mmul(lt[b], tr(lt[b])), F64), {atol = dt == F64 and 1e-12 or 1e-4})
      end
    end
  end)

  it("reads only the lower triangle", function()
    local l = tf.linalg.cholesky(tf.constant({{4, 99}, {2, 3}}, F64))
    assert.tensor_near({{2, 0}, {1, math.sqrt(2)}}, l, {atol = 1e-14})
  end)

  it("raises InvalidArgumentError for a matrix that is not positive definite", function()
    assert.tf_error("InvalidArgumentError",
      "cholesky: Cholesky decomposition was not successful. The input might not be valid.",
      tf.linalg.cholesky, tf.constant({{1, 2}, {2, 1}}, F64))
  end)

  it("refuses non-square matrices, integer dtypes and vectors", function()
    assert.tf_error("InvalidArgumentError",
      "cholesky: 'input' must be a square matrix (or a batch of them), got shape (2, 3)",
      tf.linalg.cholesky, tf.ones({2, 3}))
    assert.tf_error("TypeError", "cholesky: 'input' has dtype int32, expected float32 or float64",
      tf.linalg.cholesky, tf.constant({{1, 0}, {0, 1}}))
    assert.tf_error("InvalidArgumentError", "cholesky: 'input' must have rank >= 2, got shape (3,)",
      tf.linalg.cholesky, tf.ones({3}))
  end)
end)

describe("tf.linalg.inv", function()
  it("inverts a 2x2 matrix by hand, and its transpose with adjoint", function()
    local a = tf.constant({{4, 7}, {2, 6}}, F64)
    assert.tensor_near({{0.6, -0.7}, {-0.2, 0.4}}, tf.linalg.inv(a), {atol = 1e-14})
    assert.tensor_near({{0.6, -0.2}, {-0.7, 0.4}}, tf.linalg.inv(a, {adjoint = true}), {atol = 1e-14})
    assert.tensor_near({{0.6, -0.2}, {-0.7, 0.4}}, tf.linalg.inv(a, true), {atol = 1e-14})
  end)

  it("gives A^-1 A = I over a batch", function()
    local a1, a2 = random_matrix(4, 4, 3, 2), random_matrix(4, 4, 4, -2)
    local inv = tf.linalg.inv(tf.constant({a1, a2}, F64)):totable()
    assert.tensor_near(eye(4), tf.constant(mmul(inv[1], a1), F64), {atol = 1e-12})
    assert.tensor_near(eye(4), tf.constant(mmul(inv[2], a2), F64), {atol = 1e-12})
  end)

  it("raises InvalidArgumentError for a singular matrix", function()
    assert.tf_error("InvalidArgumentError", "inv: Input is not invertible.",
      tf.linalg.inv, tf.constant({{1, 2}, {2, 4}}, F64))
  end)

  it("returns an empty batch and 0x0 matrices as they are", function()
    assert.shape({0, 3, 3}, tf.linalg.inv(tf.zeros({0, 3, 3})))
    assert.shape({2, 0, 0}, tf.linalg.inv(tf.zeros({2, 0, 0})))
  end)
end)

describe("tf.linalg.det and slogdet", function()
  it("match determinants by elimination, with negative and zero ones", function()
    local a1, a2 = random_matrix(4, 4, 5), random_matrix(4, 4, 6, -1.5)
    local sing = {{1, 2, 3}, {2, 4, 6}, {1, 0, 1}}
    assert.tensor_near({det(a1), det(a2)}, tf.linalg.det(tf.constant({a1, a2}, F64)), {rtol = 1e-12})
    assert.tensor_near(0, tf.linalg.det(tf.constant(sing, F64)), {atol = 1e-12})
    local sign, logabs = tf.linalg.slogdet(tf.constant({a1, a2}, F64))
    local d = {det(a1), det(a2)}
    assert.tensor_near({d[1] < 0 and -1 or 1, d[2] < 0 and -1 or 1}, sign)
    assert.tensor_near({math.log(math.abs(d[1])), math.log(math.abs(d[2]))}, logabs, {atol = 1e-12})
  end)

  it("slogdet of a singular matrix is sign 0 and log|det| -inf", function()
    local sign, logabs = tf.linalg.slogdet(tf.constant({{1, 2}, {2, 4}}, F64))
    assert.are.equal(0, sign:item())
    assert.are.equal(-math.huge, logabs:item())
  end)

  it("det of a 0x0 matrix is 1 (empty product) and keeps float32", function()
    local d = tf.linalg.det(tf.zeros({2, 0, 0}))
    assert.are.same({1, 1}, d:totable())
    assert.are.equal(tf.float32, d.dtype)
  end)
end)

describe("tf.linalg.solve", function()
  it("solves A X = B and A^T X = B with adjoint", function()
    local a, b = random_matrix(4, 4, 7, 3), random_matrix(4, 2, 8)
    local x = tf.linalg.solve(tf.constant(a, F64), tf.constant(b, F64)):totable()
    assert.tensor_near(b, tf.constant(mmul(a, x), F64), {atol = 1e-12})
    x = tf.linalg.solve(tf.constant(a, F64), tf.constant(b, F64), {adjoint = true}):totable()
    assert.tensor_near(b, tf.constant(mmul(tr(a), x), F64), {atol = 1e-12})
  end)

  it("solves a batch", function()
    local a = {random_matrix(3, 3, 9, 3), random_matrix(3, 3, 10, 3)}
    local b = {random_matrix(3, 1, 11), random_matrix(3, 1, 12)}
    local x = tf.linalg.solve(tf.constant(a, F64), tf.constant(b, F64)):totable()
    for k = 1, 2 do assert.tensor_near(b[k], tf.constant(mmul(a[k], x[k]), F64), {atol = 1e-12}) end
  end)

  it("raises for a singular matrix, mismatched shapes and dtypes", function()
    assert.tf_error("InvalidArgumentError", "solve: Input matrix is not invertible.",
      tf.linalg.solve, tf.constant({{1, 2}, {2, 4}}, F64), tf.ones({2, 1}, F64))
    assert.tf_error("InvalidArgumentError",
      "solve: 'matrix' (.., n, n) and 'rhs' (.., n, k) must have the same batch dimensions and n, "
        .. "got (2, 2) and (3, 1)",
      tf.linalg.solve, tf.eye(2), tf.ones({3, 1}))
    assert.tf_error("TypeError", "solve: 'matrix' and 'rhs' must have the same dtype, got float32 and float64",
      tf.linalg.solve, tf.eye(2), tf.ones({2, 1}, F64))
    assert.tf_error("TypeError", "solve: unknown option 'lower'",
      tf.linalg.solve, tf.eye(2), tf.ones({2, 1}), {lower = true})
    assert.tf_error("TypeError", "solve: option 'adjoint' expected boolean, got number",
      tf.linalg.solve, tf.eye(2), tf.ones({2, 1}), {adjoint = 1})
    assert.tf_error("TypeError", "solve: argument 3 ('adjoint') expected boolean, got number",
      tf.linalg.solve, tf.eye(2), tf.ones({2, 1}), 1)
  end)
end)

describe("tf.linalg.triangular_solve", function()
  it("solves with the lower triangle by default, ignoring the upper one", function()
    local a = {{2, 100}, {1, 4}}
    local x = tf.linalg.triangular_solve(tf.constant(a, F64), tf.constant({{2}, {9}}, F64))
    assert.tensor_near({{1}, {2}}, x, {atol = 1e-14})   -- 2x = 2; x + 4y = 9
  end)

  it("solves upper and adjoint systems", function()
    local a = {{2, 1}, {100, 4}}
    -- upper: [[2, 1], [0, 4]] x = [4, 8] -> y = 2, x = 1
    assert.tensor_near({{1}, {2}}, tf.linalg.triangular_solve(tf.constant(a, F64), tf.constant({{4}, {8}}, F64),
      {lower = false}), {atol = 1e-14})
    -- upper, adjoint: [[2, 0], [1, 4]] x = [2, 9] -> x = 1, y = 2
    assert.tensor_near({{1}, {2}}, tf.linalg.triangular_solve(tf.constant(a, F64), tf.constant({{2}, {9}}, F64),
      false, true), {atol = 1e-14})
  end)
end)

describe("tf.linalg.triangular_solve broadcasting", function()
  it("broadcasts the batch dims of matrix and rhs, as TensorFlow's", function()
    local a = {{2, 0}, {1, 4}}
    local b = {{{2}, {9}}, {{4}, {6}}, {{0}, {8}}}
    local x = tf.linalg.triangular_solve(tf.constant(a, F64), tf.constant(b, F64))
    assert.shape({3, 2, 1}, x)
    assert.tensor_near({{{1}, {2}}, {{2}, {1}}, {{0}, {2}}}, x, {atol = 1e-14})
    local y = tf.linalg.triangular_solve(tf.constant({{a}, {a}}, F64), tf.constant(b, F64))
    assert.shape({2, 3, 2, 1}, y)
    assert.tf_error("InvalidArgumentError", "triangular_solve: 'matrix' (.., n, n) and 'rhs' (.., n, k) must have "
      .. "broadcastable batch dimensions and the same n, got (2, 2, 2) and (3, 2, 1)",
      tf.linalg.triangular_solve, tf.zeros({2, 2, 2}, F64), tf.zeros({3, 2, 1}, F64))
  end)
end)

describe("tf.linalg.qr", function()
  for _, full in ipairs({false, true}) do
    it("gives orthonormal Q, upper R and Q R = A for tall and wide inputs (full_matrices=" .. tostring(full) .. ")",
      function()
        for _, mn in ipairs({{4, 3}, {3, 5}}) do
          local m, n = mn[1], mn[2]
          local a = random_matrix(m, n, 13)
          local q, r = tf.linalg.qr(tf.constant(a, F64), {full_matrices = full})
          local k = full and m or math.min(m, n)
          assert.shape({m, k}, q)
          assert.shape({k, n}, r)
          local qt, rt = q:totable(), r:totable()
          assert.tensor_near(eye(k), tf.constant(mmul(tr(qt), qt), F64), {atol = 1e-12})
          for i = 1, k do for j = 1, math.min(i - 1, n) do assert.are.equal(0, rt[i][j]) end end
          assert.tensor_near(a, tf.constant(mmul(qt, rt), F64), {atol = 1e-12})
        end
      end)
  end
end)

describe("tf.linalg.svd", function()
  it("returns s descending, u and v with A = U diag(s) V^T (TensorFlow's order s, u, v)", function()
    for _, mn in ipairs({{3, 3}, {4, 2}, {2, 5}}) do
      local m, n = mn[1], mn[2]
      local a = random_matrix(m, n, 14)
      local s, u, v = tf.linalg.svd(tf.constant(a, F64))
      local p = math.min(m, n)
      assert.shape({p}, s)
      assert.shape({m, p}, u)
      assert.shape({n, p}, v)
      local st, ut, vt = s:totable(), u:totable(), v:totable()
      for i = 2, p do assert.is_true(st[i - 1] >= st[i]) end
      local us = {}
      for i = 1, m do
        us[i] = {}
        for j = 1, p do us[i][j] = ut[i][j] * st[j] end
      end
      assert.tensor_near(a, tf.constant(mmul(us, tr(vt)), F64), {atol = 1e-12})
      assert.tensor_near(eye(p), tf.constant(mmul(tr(ut), ut), F64), {atol = 1e-12})
      assert.tensor_near(eye(p), tf.constant(mmul(tr(vt), vt), F64), {atol = 1e-12})
    end
  end)

  it("knows a hand-worked case: the singular values of [[3, 0], [4, 5]] are sqrt(45) and sqrt(5)", function()
    local s = tf.linalg.svd(tf.constant({{3, 0}, {4, 5}}, F64), {compute_uv = false})
    assert.tensor_near({math.sqrt(45), math.sqrt(5)}, s, {atol = 1e-12})
  end)

  it("gives square u and v with full_matrices, batched, in float32", function()
    local s, u, v = tf.linalg.svd(tf.ones({2, 4, 3}), {full_matrices = true})
    assert.shape({2, 3}, s)
    assert.shape({2, 4, 4}, u)
    assert.shape({2, 3, 3}, v)
    assert.are.equal(tf.float32, u.dtype)
    assert.tensor_near({{math.sqrt(12), 0, 0}, {math.sqrt(12), 0, 0}}, s, {atol = 1e-5})
  end)

  it("returns only s with compute_uv = false", function()
    assert.are.equal(1, select("#", tf.linalg.svd(tf.eye(3), {compute_uv = false})))
    assert.are.equal(3, select("#", tf.linalg.svd(tf.eye(3))))
  end)
end)

describe("NaN inputs", function()
  it("give NaN singular values/vectors and eigenvalues/vectors, not an error", function()
    local s, u = tf.linalg.svd(tf.constant({{0 / 0, 1}, {2, 3}}, F64))
    local e, v = tf.linalg.eigh(tf.constant({{0 / 0, 1}, {1, 3}}, F64))
    for _, t in ipairs({s, u, e, v}) do
      for _, x in ipairs(tf.reshape(t, {-1}):totable()) do assert.is_true(x ~= x) end
    end
  end)
  it("so do infinities (LAPACK's gesdd never returned on some: the Lua fuzzer, seed 92090)", function()
    local inf = 1 / 0
    local s, u, v = tf.linalg.svd(tf.constant({{-3.34, -inf, 1.15}, {-3.64, -1.51, 3.73}, {0, -0.77, 3.15},
                                               {-2.02, -1.27, -1.32}}, tf.float32))
    local e = tf.linalg.eigh(tf.constant({{inf, 1}, {1, 3}}, F64))
    for _, t in ipairs({s, u, v, e}) do
      for _, x in ipairs(tf.reshape(t, {-1}):totable()) do assert.is_true(x ~= x) end
    end
    local p = tf.linalg.pinv(tf.constant({{inf, 3.9}, {-inf, 1.5}, {2.12, -0.6}}))
    for _, x in ipairs(tf.reshape(p, {-1}):totable()) do assert.is_true(x ~= x) end
  end)
end)

describe("tf.linalg.eigh", function()
  it("gives ascending eigenvalues and orthonormal vectors with A V = V diag(e)", function()
    local a = spd(4, 15)
    for i = 1, 4 do a[i][i] = a[i][i] - 6 end   -- some negative eigenvalues
    local e, v = tf.linalg.eigh(tf.constant(a, F64))
    local et, vt = e:totable(), v:totable()
    for i = 2, 4 do assert.is_true(et[i - 1] <= et[i]) end
    local ve = {}
    for i = 1, 4 do
      ve[i] = {}
      for j = 1, 4 do ve[i][j] = vt[i][j] * et[j] end
    end
    assert.tensor_near(ve, tf.constant(mmul(a, vt), F64), {atol = 1e-12})
    assert.tensor_near(eye(4), tf.constant(mmul(tr(vt), vt), F64), {atol = 1e-12})
  end)

  it("knows [[2, 1], [1, 2]] has eigenvalues 1 and 3, and reads the lower triangle", function()
    assert.tensor_near({1, 3}, (tf.linalg.eigh(tf.constant({{2, -7}, {1, 2}}, F64))), {atol = 1e-14})
    assert.tensor_near({1, 3}, tf.linalg.eigvalsh(tf.constant({{2.0, 1.0}, {1.0, 2.0}})), {atol = 1e-6})
  end)
end)

describe("tf.linalg structure ops", function()
  local x = tf.reshape(tf.range(1, 13), {3, 4})

  it("band_part keeps num_lower diagonals below and num_upper above (negative: all)", function()
    assert.are.same({{1, 2, 0, 0}, {5, 6, 7, 0}, {0, 10, 11, 12}}, tf.linalg.band_part(x, 1, 1):totable())
    assert.are.same({{1, 0, 0, 0}, {5, 6, 0, 0}, {9, 10, 11, 0}}, tf.linalg.band_part(x, -1, 0):totable())
    assert.are.same({{1, 2, 3, 4}, {0, 6, 7, 8}, {0, 0, 11, 12}}, tf.linalg.band_part(x, 0, -1):totable())
  end)

  it("diag_part, diag and trace", function()
    assert.are.same({1, 6, 11}, tf.linalg.diag_part(x):totable())
    assert.are.same({{1, 0}, {0, 2}}, tf.linalg.diag(tf.constant({1, 2})):totable())
    assert.are.same({{{1, 0, 0}, {0, 2, 0}}}, tf.linalg.diag(tf.constant({{1, 2}}), {num_cols = 3}):totable())
    assert.are.equal(18, tf.linalg.trace(x):item())
    assert.are.same({5, 13}, tf.linalg.trace(tf.reshape(tf.range(1, 9), {2, 2, 2})):totable())
  end)

  it("matrix_transpose swaps the last two dims (adjoint for real dtypes)", function()
    assert.are.same({{1, 5, 9}, {2, 6, 10}, {3, 7, 11}, {4, 8, 12}}, tf.linalg.matrix_transpose(x):totable())
    assert.shape({2, 4, 3}, tf.linalg.adjoint(tf.zeros({2, 3, 4})))
  end)
end)

describe("tf.linalg composites", function()
  it("pinv satisfies the Penrose conditions", function()
    local a = random_matrix(4, 2, 40)
    local p = tf.linalg.pinv(tf.constant(a, F64)):totable()
    assert.tensor_near(a, tf.constant(mmul(mmul(a, p), a), F64), {atol = 1e-12})
    assert.tensor_near(p, tf.constant(mmul(mmul(p, a), p), F64), {atol = 1e-12})
    local ap = mmul(a, p)
    assert.tensor_near(ap, tf.constant(tr(ap), F64), {atol = 1e-12})
  end)

  it("lstsq solves the normal equations (tall) and gives the minimum-norm solution (wide)", function()
    local a, b = random_matrix(5, 3, 41), random_matrix(5, 1, 42)
    local x = tf.linalg.lstsq(tf.constant(a, F64), tf.constant(b, F64)):totable()
    local r = mmul(a, x)
    for i = 1, 5 do r[i][1] = r[i][1] - b[i][1] end
    assert.tensor_near({{0}, {0}, {0}}, tf.constant(mmul(tr(a), r), F64), {atol = 1e-10})   -- A^T (Ax - b) = 0
    local w = tf.linalg.lstsq(tf.constant({{1, 3, 5}, {2, 4, 6}}, F64), tf.constant({{1}, {2}}, F64))
    assert.tensor_near({{5 / 6}, {1 / 3}, {-1 / 6}}, w, {atol = 1e-12})
  end)

  it("matrix_rank counts singular values above the tolerance; set_diag replaces the diagonal", function()
    assert.are.equal(1, tf.linalg.matrix_rank(tf.constant({{1, 2}, {2, 4}}, F64)):item())
    assert.are.same({2, 1}, tf.linalg.matrix_rank(tf.constant({{{1, 0}, {0, 1}}, {{0, 0}, {0, 3}}}, F64)):totable())
    assert.are.same({{7, 2, 3}, {4, 8, 6}}, tf.linalg.set_diag(tf.constant({{1, 2, 3}, {4, 5, 6}}), {7, 8}):totable())
  end)
end)

describe("tf.norm matrix norms", function()
  local m = tf.constant({{1, -2}, {3, 4}}, F64)
  it("computes ord 1 (max column sum), inf (max row sum), 2 (largest singular value) and fro", function()
    assert.are.equal(6, tf.norm(m, {ord = 1, axis = {1, 2}}):item())
    assert.are.equal(7, tf.norm(m, {ord = math.huge, axis = {-2, -1}}):item())
    -- A^T A = [[10, 10], [10, 20]]: largest eigenvalue 15 + sqrt(125)
    assert.tensor_near(math.sqrt(15 + math.sqrt(125)), tf.norm(m, {ord = 2, axis = {1, 2}}), {atol = 1e-12})
    assert.tensor_near(math.sqrt(30), tf.linalg.norm(m, {ord = "fro", axis = {1, 2}}), {atol = 1e-12})
    assert.shape({1, 1}, tf.norm(m, {ord = 2, axis = {1, 2}, keepdims = true}))
  end)

  it("refuses an unknown matrix ord", function()
    assert.tf_error("ValueError", "norm: a matrix norm's 'ord' must be", tf.norm, m, {ord = 3, axis = {1, 2}})
  end)
end)

describe("tf.linalg inside tf.fn", function()
  it("traces with unknown dims and runs on any size", function()
    local f = tf.fn(function(a, b)
      local l = tf.linalg.cholesky(a)
      local s = tf.linalg.svd(a, {compute_uv = false})
      return tf.linalg.solve(a, b), tf.linalg.det(a), l, s
    end, {input_signature = {tf.TensorSpec({-1, -1, -1}, F64), tf.TensorSpec({-1, -1, 1}, F64)}})
    for _, n in ipairs({2, 3}) do
      local a = spd(n, 16 + n)
      local b = random_matrix(n, 1, 20)
      local x, d, l, s = f(tf.constant({a}, F64), tf.constant({b}, F64))
      assert.tensor_near(b, tf.constant(mmul(a, x:totable()[1]), F64), {atol = 1e-12})
      assert.tensor_near({det(a)}, d, {rtol = 1e-12})
      assert.shape({1, n, n}, l)
      assert.shape({1, n}, s)
    end
  end)

  it("runs every op traced over an unknown batch and size, as eagerly, in float32", function()
    local function all(a, b)
      local e, v = tf.linalg.eigh(a)
      local sign, logabs = tf.linalg.slogdet(a)
      return {tf.linalg.inv(a), e, v, tf.linalg.triangular_solve(a, b, {lower = false, adjoint = true}),
              tf.linalg.band_part(a, 0, 1), sign, logabs, tf.linalg.matrix_transpose(b),
              tf.linalg.diag(tf.linalg.diag_part(a)), tf.linalg.trace(a), tf.norm(a, {ord = 1, axis = {-2, -1}})}
    end
    local f = tf.fn(all, {input_signature = {tf.TensorSpec({-1, -1, -1}), tf.TensorSpec({-1, -1, -1})}})
    local a = tf.constant({spd(3, 30), spd(3, 31)}, tf.float32)
    local b = tf.constant({random_matrix(3, 2, 32), random_matrix(3, 2, 33)}, tf.float32)
    local traced, eager = f(a, b), all(a, b)
    for i = 1, #eager do assert.tensor_near(eager[i], traced[i], {atol = 1e-6}) end
    -- and the float32 results are right: inv(a) a = I
    local inv = traced[1]:totable()
    local at = a:totable()
    assert.tensor_near(eye(3), tf.constant(mmul(inv[2], at[2]), F64), {atol = 1e-5})
  end)

  it("infers partial shapes for every op", function()
    local f = tf.fn(function(a)
      local q, r = tf.linalg.qr(a)
      local s, u, v = tf.linalg.svd(a)
      assert.are.same({-1, 4, 3}, {q.shape[1] or -1, q.shape[2], q.shape[3]})
      assert.are.same({3, 3}, {r.shape[2], r.shape[3]})
      assert.are.same({4, 3, 3}, {u.shape[2], u.shape[3], v.shape[2]})
      assert.are.equal(3, s.shape[2])
      return tf.linalg.diag_part(a)
    end, {input_signature = {tf.TensorSpec({-1, 4, 3}, F64)}})
    assert.shape({1, 3}, f(tf.zeros({1, 4, 3}, F64)))
  end)

  it("differentiates through a traced svd and cholesky", function()
    local function loss(a)
      local t = tf.GradientTape()
      t:watch(a)
      local y = t:record(function()
        return tf.reduce_sum(tf.linalg.svd(a, {compute_uv = false})) + tf.reduce_sum(tf.linalg.cholesky(
          tf.matmul(a, a, {transpose_b = true}) + tf.eye(3, 3, nil, F64) * 3))
      end)
      return t:gradient(y, a)
    end
    local a = tf.constant(random_matrix(3, 3, 21), F64)
    local traced = tf.fn(loss)
    assert.tensor_near(loss(a), traced(a), {atol = 1e-12})
  end)
end)
