--- Composite linear-algebra ops over the primitives of bindings/linalg.c
-- (cholesky, inv, det, slogdet, solve, triangular_solve, qr, svd, eigh,
-- band_part, diag, diag_part, matrix_transpose): tf.linalg.trace,
-- tf.linalg.logdet, tf.linalg.eigvalsh, set_diag, pinv, lstsq,
-- matrix_rank, tf.linalg.adjoint, tf.linalg.eye,
-- and the matrix norms of tf.linalg.norm / tf.norm (ord 1, 2, math.huge
-- over a pair of axes; the vector norms are nn_ops.lua's). Composites
-- need no gradient rule of their own.
return function(tf)
  local linalg = tf.linalg

  local function raise(kind, fmt, ...)
    tf.errors.raise(kind, string.format(fmt, ...), 3)
  end

  local function as_tensor(x, op, arg)
    if tf.is_tensor(x) then return x end
    if type(x) == "table" and getmetatable(x) and getmetatable(x).__tf_tensor then return x:value() end
    if x == nil then raise("TypeError", "%s: argument '%s' expected tensor, got nil", op, arg) end
    return tf.constant(x)
  end

  --- Sum of the main diagonal of each innermost matrix: shape x.shape[1..-3].
  function linalg.trace(x)
    x = as_tensor(x, "trace", "x")
    return tf.reduce_sum(linalg.diag_part(x), -1)
  end

  --- log(det(matrix)) of Hermitian positive-definite matrices, through the
  -- Cholesky factor: 2 * sum(log(diag(L))).
  function linalg.logdet(matrix)
    matrix = as_tensor(matrix, "logdet", "matrix")
    return tf.reduce_sum(tf.log(linalg.diag_part(linalg.cholesky(matrix))), -1) * 2
  end

  --- Eigenvalues of self-adjoint matrices (ascending).
  function linalg.eigvalsh(tensor)
    local e = linalg.eigh(tensor)
    return e
  end

  --- x with its main diagonal replaced by `diagonal` (shape x.shape[1..-3] .. {min(m, n)}).
  function linalg.set_diag(x, diagonal)
    x = as_tensor(x, "set_diag", "input")
    diagonal = tf.is_tensor(diagonal) and diagonal or tf.constant(diagonal, x.dtype)
    local d = x:_dims()
    local opts = d and {num_rows = d[#d - 1], num_cols = d[#d]} or nil
    return x - linalg.diag(linalg.diag_part(x), opts) + linalg.diag(diagonal, opts)
  end

  --- Moore-Penrose pseudo-inverse through the SVD: singular values at or
  -- below rcond * max(s) count as zero (rcond default 10 * max(m, n) * eps).
  function linalg.pinv(a, opts)
    a = as_tensor(a, "pinv", "a")
    opts = opts or {}
    local d = a:_dims()
    if not d or #d < 2 then raise("ValueError", "pinv: 'a' must have rank >= 2 and a known shape") end
    local eps = a.dtype == tf.float64 and 2.220446049250313e-16 or 1.1920929e-07
    local rcond = opts.rcond or 10 * math.max(d[#d - 1], d[#d]) * eps
    local s, u, v = linalg.svd(a)
    local cutoff = tf.reduce_max(s, {axis = -1, keepdims = true}) * rcond
    local keep = tf.greater(s, cutoff)
    local sinv = tf.where(keep, 1 / tf.where(keep, s, tf.ones_like(s)), tf.zeros_like(s))
    return tf.matmul(v * tf.expand_dims(sinv, -2), u, {transpose_b = true})
  end

  --- Least squares: argmin_x ||matrix x - rhs||^2 + l2_regularizer ||x||^2,
  -- through the Cholesky factor of the normal equations (TensorFlow's
  -- fast = true path); matrix (.., m, n), rhs (.., m, k).
  function linalg.lstsq(matrix, rhs, opts)
    matrix = as_tensor(matrix, "lstsq", "matrix")
    rhs = tf.is_tensor(rhs) and rhs or tf.constant(rhs, matrix.dtype)
    opts = opts or {}
    if opts.fast == false then raise("UnimplementedError", "lstsq: only fast=true (normal equations) is supported") end
    local d = matrix:_dims()
    if not d or #d < 2 then raise("ValueError", "lstsq: 'matrix' must have rank >= 2 and a known shape") end
    local m, n = d[#d - 1], d[#d]
    local l2 = opts.l2_regularizer or 0
    local batch = {}
    for i = 1, #d - 2 do batch[i] = d[i] end
    if m >= n then
      local gram = tf.matmul(matrix, matrix, {transpose_a = true})
      if l2 ~= 0 then gram = gram + tf.eye(n, n, #batch > 0 and batch or nil, matrix.dtype) * l2 end
      local l = linalg.cholesky(gram)
      local y = linalg.triangular_solve(l, tf.matmul(matrix, rhs, {transpose_a = true}))
      return linalg.triangular_solve(l, y, {adjoint = true})
    end
    local gram = tf.matmul(matrix, matrix, {transpose_b = true})
    if l2 ~= 0 then gram = gram + tf.eye(m, m, #batch > 0 and batch or nil, matrix.dtype) * l2 end
    local l = linalg.cholesky(gram)
    local y = linalg.triangular_solve(l, linalg.triangular_solve(l, rhs), {adjoint = true})
    return tf.matmul(matrix, y, {transpose_a = true})
  end

  --- Number of singular values above tol (default max(s) * max(m, n) * eps).
  function linalg.matrix_rank(a, opts)
    a = as_tensor(a, "matrix_rank", "a")
    opts = opts or {}
    local d = a:_dims()
    if not d or #d < 2 then raise("ValueError", "matrix_rank: 'a' must have rank >= 2 and a known shape") end
    local s = linalg.svd(a, {compute_uv = false})
    local tol = opts.tol
    if tol == nil then
      local eps = a.dtype == tf.float64 and 2.220446049250313e-16 or 1.1920929e-07
      tol = tf.reduce_max(s, {axis = -1, keepdims = true}) * (math.max(d[#d - 1], d[#d]) * eps)
    end
    return tf.reduce_sum(tf.cast(tf.greater(s, tol), tf.int32), -1)
  end

  linalg.adjoint = linalg.matrix_transpose   -- real dtypes only: the adjoint is the transpose
  linalg.eye = linalg.eye or tf.eye

  -- Matrix norms: ord 1 (max column sum), math.huge (max row sum) and 2
  -- (largest singular value) over a pair of axes; everything else goes to the
  -- vector/Frobenius norm defined in nn_ops.lua (loaded here if it is not yet).
  tf.core.internal.load_part("tf.nn_ops")
  local vector_norm = tf.core.internal.vector_norm
  local function norm(tensor, opts)
    local axis = type(opts) == "table" and opts.axis
    if type(axis) ~= "table" or #axis ~= 2 then return vector_norm(tensor, opts) end
    local ord = opts.ord or "euclidean"
    if ord == "euclidean" or ord == "fro" then return vector_norm(tensor, opts) end
    for k in pairs(opts) do
      if k ~= "ord" and k ~= "axis" and k ~= "keepdims" and k ~= "name" then
        raise("TypeError", "norm: unknown option '%s' (accepted: ord, axis, keepdims, name)", tostring(k))
      end
    end
    local x = as_tensor(tensor, "norm", "tensor")
    local rank = x.rank
    if rank == nil then raise("ValueError", "norm: a matrix norm needs the input's rank known") end
    local a0, a1 = axis[1], axis[2]
    if math.type(a0) ~= "integer" or math.type(a1) ~= "integer" then
      raise("TypeError", "norm: 'axis' must hold two integers")
    end
    local r0, r1 = a0 < 0 and a0 + rank + 1 or a0, a1 < 0 and a1 + rank + 1 or a1
    if r0 < 1 or r0 > rank or r1 < 1 or r1 > rank or r0 == r1 then
      raise("InvalidArgumentError", "norm: 'axis' {%d, %d} must name two different axes of a rank-%d tensor",
            a0, a1, rank)
    end
    local keep = opts.keepdims or false
    local absx = tf.abs(x)
    if ord == 1 then          -- max over columns of the sum over rows
      return tf.reduce_max(tf.reduce_sum(absx, {axis = r0, keepdims = true}), {axis = {r0, r1}, keepdims = keep})
    elseif ord == math.huge or ord == "inf" then
      return tf.reduce_max(tf.reduce_sum(absx, {axis = r1, keepdims = true}), {axis = {r0, r1}, keepdims = keep})
    elseif ord == 2 then      -- the largest singular value: the two axes go last
      local perm = {}
      for i = 1, rank do if i ~= r0 and i ~= r1 then perm[#perm + 1] = i end end
      perm[#perm + 1], perm[#perm + 2] = r0, r1
      local s = linalg.svd(tf.transpose(x, perm), {compute_uv = false})
      local n = tf.reduce_max(s, -1)
      if keep then
        local lo, hi = math.min(r0, r1), math.max(r0, r1)
        n = tf.expand_dims(tf.expand_dims(n, lo), hi)
      end
      return n
    end
    raise("ValueError", "norm: a matrix norm's 'ord' must be 'fro', 'euclidean', 1, 2 or math.huge, got %s",
          tostring(ord))
  end
  linalg.norm = norm
  tf.norm = norm
end
