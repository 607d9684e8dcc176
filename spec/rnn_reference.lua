-- spec/rnn_reference.lua: step-by-step LSTM and GRU in plain Lua (float64,
-- nested tables), Keras's formulas, gate orders and mask semantics: a
-- masked step keeps the states and outputs the previous step's output
-- (zeros before the first, or always with zero_output_for_mask). Shared by
-- the fused-op specs and the layer specs.
local R = {}

local function sig(v) return 1 / (1 + math.exp(-v)) end
local tanh = function(v) return (math.exp(v) - math.exp(-v)) / (math.exp(v) + math.exp(-v)) end
R.sigmoid, R.tanh = sig, tanh

local function copy(v) return table.move(v, 1, #v, 1, {}) end

-- sum_k a[k] * M[k][col]
local function dotcol(a, M, col)
  local s = 0
  for k = 1, #a do s = s + a[k] * M[k][col] end
  return s
end

local function order(T, back)
  local ts = {}
  for s = 1, T do ts[s] = back and T - s + 1 or s end
  return ts
end

--- x[b][t][i], h0[b][j], c0[b][j], K[i][4U], RK[j][4U], bias[4U];
--- opts: mask[b][t] (booleans), go_backwards, zero_output_for_mask.
--- Returns y[b][s][j] (processing order), h[b][j], c[b][j].
function R.lstm(x, h0, c0, K, RK, bias, opts)
  opts = opts or {}
  local B, T, U = #x, #x[1], #h0[1]
  local y, hs, cs = {}, {}, {}
  for b = 1, B do
    local h, c, prev = copy(h0[b]), copy(c0[b]), {}
    for j = 1, U do prev[j] = 0 end
    y[b] = {}
    for s, t in ipairs(order(T, opts.go_backwards)) do
      local m = not opts.mask or opts.mask[b][t]
      local hn, cn = {}, {}
      for j = 1, U do
        local z = {}
        for g = 0, 3 do
          local col = g * U + j
          z[g] = dotcol(x[b][t], K, col) + dotcol(h, RK, col) + bias[col]
        end
        local i, f, gg, o = sig(z[0]), sig(z[1]), tanh(z[2]), sig(z[3])
        cn[j] = f * c[j] + i * gg
        hn[j] = o * tanh(cn[j])
      end
      if m then h, c, prev = hn, cn, hn
      elseif opts.zero_output_for_mask then
        prev = {}
        for j = 1, U do prev[j] = 0 end
      end
      y[b][s] = copy(prev)
    end
    hs[b], cs[b] = h, c
  end
  return y, hs, cs
end

--- GRU: K[i][3U], RK[j][3U]; bias (reset_after, the default) {input row,
--- recurrent row} or (reset_after = false) one row of 3U.
function R.gru(x, h0, K, RK, bias, opts)
  opts = opts or {}
  local ra = opts.reset_after ~= false
  local B, T, U = #x, #x[1], #h0[1]
  local bi = ra and bias[1] or bias
  local br = ra and bias[2] or nil
  local y, hs = {}, {}
  for b = 1, B do
    local h, prev = copy(h0[b]), {}
    for j = 1, U do prev[j] = 0 end
    y[b] = {}
    for s, t in ipairs(order(T, opts.go_backwards)) do
      local m = not opts.mask or opts.mask[b][t]
      local xt = x[b][t]
      local z, r = {}, {}
      for j = 1, U do
        local rz, rr = dotcol(h, RK, j), dotcol(h, RK, U + j)
        if ra then rz, rr = rz + br[j], rr + br[U + j] end
        z[j] = sig(dotcol(xt, K, j) + bi[j] + rz)
        r[j] = sig(dotcol(xt, K, U + j) + bi[U + j] + rr)
      end
      local rh = {}
      for j = 1, U do rh[j] = r[j] * h[j] end
      local hn = {}
      for j = 1, U do
        local inner
        if ra then inner = r[j] * (dotcol(h, RK, 2 * U + j) + br[2 * U + j])
        else inner = dotcol(rh, RK, 2 * U + j) end
        local hh = tanh(dotcol(xt, K, 2 * U + j) + bi[2 * U + j] + inner)
        hn[j] = z[j] * h[j] + (1 - z[j]) * hh
      end
      if m then h, prev = hn, hn
      elseif opts.zero_output_for_mask then
        prev = {}
        for j = 1, U do prev[j] = 0 end
      end
      y[b][s] = copy(prev)
    end
    hs[b] = h
  end
  return y, hs
end

--- A nested table of 'dims' filled from generator 'rnd' scaled by 'scale'.
function R.fill(rnd, dims, scale)
  local function build(level)
    local t = {}
    for i = 1, dims[level] do
      if level == #dims then t[i] = rnd() * (scale or 1) else t[i] = build(level + 1) end
    end
    return t
  end
  return build(1)
end

return R
