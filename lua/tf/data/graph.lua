--- tf.data inside tf.fn: random access to a dataset's elements by a
-- (symbolic) 1-based position, for graph loops. Each stage that has a graph
-- form gives {n =, elem = function(i), gather = function(idx) (optional)}:
-- n a Lua integer or an int32 scalar tensor, elem(i) the packed element at
-- position i, gather(idx) the batched elements at a vector of positions.
-- Used by the __tf_for protocol (docs/autograph.md) and ds:reduce; see
-- docs/data.md ("Inside tf.fn"). Installed by lua/tf/data/init.lua, which
-- passes the helpers it shares ('I').
return function(tf, I)
  local pack, unpack = table.pack, table.unpack
  local sfmt = string.format
  local Dataset, raise, check_self, check_fn = I.Dataset, I.raise, I.check_self, I.check_fn
  local tracing, iter_of, gather_rows, flatten_elem = I.tracing, I.iter_of, I.gather_rows, I.flatten_elem
  local to_struct, no_graph, INF = I.to_struct, I.no_graph, I.INF

  -- {==== graph helpers (iteration inside tf.fn)
  local function gen_int(n) return tf.constant(n, tf.int32) end

  --- The first dimension of a tensor as a Lua integer, or an int32 scalar
  -- tensor when it is unknown while tracing.
  local function rows_of(t)
    local n = t.shape[1]
    if n then return n end
    local ok, sh = pcall(tf.shape, t)
    if ok then return tf.cast(sh[1], tf.int32) end
    local ones = tf.cast(tf.ones_like(t), tf.int32)
    local col = tf.reduce_sum(ones, {axis = 1})
    if t.rank == 1 then return col end
    return tf.reduce_max(col)
  end

  local function t_min(a, b)
    if type(a) == "number" and type(b) == "number" then return math.min(a, b) end
    return tf.minimum(type(a) == "number" and gen_int(a) or a, type(b) == "number" and gen_int(b) or b)
  end
  local function t_max0(a)
    if type(a) == "number" then return math.max(a, 0) end
    return tf.maximum(a, 0)
  end

  -- }====

  local function source_rows(d)
    if d._n == nil then return rows_of(d._flat[1]) end
    return d._n
  end

  -- {==== graph access (iteration inside tf.fn)
  local graphs = {}
  local function graph_of(d) return graphs[d.kind](d) end

  local function as_pos(i)
    if type(i) == "number" then return gen_int(i) end
    if i.dtype ~= tf.int32 then return tf.cast(i, tf.int32) end
    return i
  end

  graphs.TensorSlices = function(d)
    return {
      n = source_rows(d),
      elem = function(i)
        local out = {}
        for j, t in ipairs(d._flat) do out[j] = tf.gather(t, as_pos(i)) end
        return d._rebuild(out)
      end,
      gather = function(idx) return gather_rows(d, idx) end,
    }
  end
  graphs.Tensors = function(d)
    return {n = 1, elem = function() return d._elem end}
  end
  graphs.Range = function(d)
    local function val(i)
      local p = tf.cast(as_pos(i), d._dtype)
      return tf.constant(d._start - d._step, d._dtype) + p * tf.constant(d._step, d._dtype)
    end
    return {n = d._count, elem = function(i) return {n = 1, val(i)} end,
            gather = function(idx) return {n = 1, val(idx)} end}
  end
  graphs.Generator = function()
    no_graph("from_generator", "a Lua generator cannot run in a graph: iterate the dataset outside tf.fn, or " ..
      "build the dataset from tensors (from_tensor_slices)")
  end
  graphs.Zip = function(d)
    local gs, n = {}, nil
    for i, x in ipairs(d._inputs) do
      gs[i] = graph_of(x)
      n = n == nil and gs[i].n or t_min(n, gs[i].n)
    end
    local function join(parts)
      local e = {n = #parts}
      for i, x in ipairs(parts) do e[i] = x.n == 1 and x[1] or {unpack(x, 1, x.n)} end
      return e
    end
    local gather
    local all = true
    for _, g in ipairs(gs) do if not g.gather then all = false end end
    if all then
      gather = function(idx)
        local parts = {}
        for i, g in ipairs(gs) do parts[i] = g.gather(idx) end
        return join(parts)
      end
    end
    return {n = n, elem = function(i)
      local parts = {}
      for i2, g in ipairs(gs) do parts[i2] = g.elem(i) end
      return join(parts)
    end, gather = gather}
  end
  graphs.Shuffle = function()
    no_graph("shuffle", "a shuffled dataset cannot be iterated in a graph yet: iterate it outside tf.fn and pass " ..
      "the batches to the traced step")
  end
  graphs.Filter = function()
    no_graph("filter", "a filtered dataset has no known length for a graph loop: iterate it outside tf.fn")
  end
  graphs.Unbatch = function()
    no_graph("unbatch", "iterate an unbatched dataset outside tf.fn")
  end
  graphs.PaddedBatch = function()
    no_graph("padded_batch", "element shapes vary: iterate the dataset outside tf.fn")
  end
  graphs.Cache = function(d) return graph_of(d._input) end
  graphs.Prefetch = graphs.Cache
  graphs.Concatenate = function()
    no_graph("concatenate", "iterate the dataset outside tf.fn")
  end
  graphs.Take = function(d)
    local g = graph_of(d._input)
    if d._count == -1 then return g end
    return {n = t_min(g.n, d._count), elem = g.elem, gather = g.gather}
  end
  graphs.Skip = function(d)
    local g = graph_of(d._input)
    local k = d._count
    if k == -1 then return {n = 0, elem = g.elem} end
    return {n = t_max0(type(g.n) == "number" and g.n - k or g.n - k), elem = function(i) return g.elem(as_pos(i) + k) end,
            gather = g.gather and function(idx) return g.gather(as_pos(idx) + k) end}
  end
  graphs.Repeat = function(d)
    local g = graph_of(d._input)
    local c = d._count
    if c == -1 then
      no_graph("repeat", "a dataset repeated forever has no end for a graph loop: give repeat_ a count, or take(n)")
    end
    local m = g.n
    local function wrap(i) return tf.floormod(as_pos(i) - 1, type(m) == "number" and gen_int(m) or m) + 1 end
    return {n = type(m) == "number" and m * c or m * c, elem = function(i) return g.elem(wrap(i)) end,
            gather = g.gather and function(idx) return g.gather(wrap(idx)) end}
  end
  graphs.Enumerate = function(d)
    local g = graph_of(d._input)
    local function idx(i) return tf.cast(as_pos(i), tf.int64) + (d._start - 1) end
    local function join(i, e)
      local r = {n = e.n + 1, idx(i)}
      for c = 1, e.n do r[c + 1] = e[c] end
      return r
    end
    return {n = g.n, elem = function(i) return join(i, g.elem(i)) end,
            gather = g.gather and function(ix) return join(ix, g.gather(ix)) end}
  end
  graphs.Map = function(d)
    local g = graph_of(d._input)
    return {n = g.n, elem = function(i)
      local e = g.elem(i)
      return pack(d._fn(unpack(e, 1, e.n)))
    end}
  end
  graphs.Batch = function(d)
    local g = graph_of(d._input)
    local B = d._size
    local n = g.n
    local nb
    if type(n) == "number" then
      if d._drop then nb = n // B
      else
        if n % B ~= 0 then
          no_graph("batch", sfmt("the last batch of %d elements in batches of %d is partial: use " ..
            "batch(%d, {drop_remainder = true}), or iterate outside tf.fn", n, B, B))
        end
        nb = n // B
      end
    else
      if not d._drop then
        no_graph("batch", "the dataset's length is not known while tracing: use drop_remainder = true")
      end
      nb = n // B
    end
    local offs = tf.range(1, B + 1)
    local function positions(i) return (as_pos(i) - 1) * B + offs end
    local elem
    if g.gather then
      elem = function(i) return g.gather(positions(i)) end
    else
      -- an inner loop writing each element into TensorArrays, then stacked
      elem = function(i)
        local base = (as_pos(i) - 1) * B
        local e1 = g.elem(base + 1)
        local flat1, rebuild = flatten_elem(e1)
        local tas = {}
        for j, t in ipairs(flat1) do
          tas[j] = tf.TensorArray{dtype = t.dtype, size = B, element_shape = t.shape}:write(1, t)
        end
        local r = tf.while_loop(function(k) return tf.less_equal(k, B) end, function(k, ...)
          local e = g.elem(base + k)
          local fl = flatten_elem(e)
          local nt = {}
          local ta_in = {...}
          for j, t in ipairs(fl) do nt[j] = ta_in[j]:write(k, t) end
          return {k + 1, unpack(nt)}
        end, {tf.constant(2), unpack(tas)})
        local out = {}
        for j = 1, #flat1 do out[j] = r[j + 1]:stack() end
        local e = rebuild(out)
        return e
      end
    end
    return {n = nb, elem = elem}
  end

  local function start_pos()
    -- symbolic while tracing, so that loop:while_ builds one graph loop
    return tf.constant(0, tf.int32) + 1
  end

  --- The __tf_for protocol (docs/autograph.md): AutoGraph calls this for
  -- `for x, y in ds:iter() do ... end` in a converted function. While
  -- tracing: one graph loop whose state is the position; eagerly: a Lua
  -- loop over the elements.
  local function tf_for(d, loop)
    check_self(d, "__tf_for")
    if type(loop) ~= "table" or type(loop.while_) ~= "function" then
      raise("TypeError", "__tf_for: expected AutoGraph's loop object (docs/autograph.md), got %s", type(loop))
    end
    if tracing() then
      local g = graph_of(d)
      local n = g.n
      local nt = type(n) == "number" and gen_int(n) or n
      return loop:while_(function(i) return tf.less_equal(i, nt) end, function(i)
        local e = g.elem(i)
        return {i + 1}, unpack(e, 1, e.n)
      end, {start_pos()})
    end
    local it = iter_of(d)
    local cur
    return loop:while_(function()
      cur = it()
      return cur ~= nil
    end, function() return {}, unpack(cur, 1, cur.n) end, {})
  end
  Dataset.__tf_for = tf_for

  --- ds:reduce(initial_state, reduce_func): folds the elements:
  -- state = reduce_func(state, values...). Inside tf.fn it is one
  -- tf.while_loop over the position (the dataset's graph access).
  function Dataset:reduce(initial_state, reduce_func)
    check_self(self, "reduce")
    check_fn(reduce_func, "reduce")
    if initial_state == nil then raise("TypeError", "reduce: 'initial_state' is required") end
    if tracing() then
      local g = graph_of(self)
      local n = g.n
      local nt = type(n) == "number" and gen_int(n) or n
      local r = tf.while_loop(function(i) return tf.less_equal(i, nt) end, function(i, state)
        local e = g.elem(i)
        return {i + 1, (reduce_func(state, unpack(e, 1, e.n)))}
      end, {start_pos(), to_struct(initial_state, "reduce")})
      return r[2]
    end
    if self:cardinality() == INF then
      raise("InvalidArgumentError", "reduce: the dataset is infinite (repeat_() without a count?): it would never end")
    end
    local state = to_struct(initial_state, "reduce")
    local it = iter_of(self)
    while true do
      local e = it()
      if e == nil then break end
      state = reduce_func(state, unpack(e, 1, e.n))
    end
    return state
  end
  -- }====

  return {tf_for = tf_for, graph_of = graph_of, graphs = graphs}
end
