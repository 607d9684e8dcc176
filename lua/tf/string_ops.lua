--- tf.strings for data pipelines: split, length, substr, to_number,
-- regex_full_match, regex_replace (PCRE2) and format, over the engine's
-- strings family (core/ops/strings.c; not differentiable). Arguments are
-- TensorFlow's, positionally or in a trailing options table; positions
-- are 1-based (substr's `pos`). See docs/strings.md.
local op_args = require("tf.op_args")

return function(tf)
  local internal = tf.core.internal
  local strings = tf.strings

  local function raise_at(level, kind, fmt, ...)
    tf.errors.raise(kind, string.format(fmt, ...), level + 1)
  end

  local function args(op, names, n, ...)
    local r = op_args.parse(tf.errors.raise, op, names, n, ...)   -- not a tail call: errors count this frame
    return r
  end

  local function unit_of(op, unit)
    if unit == nil or unit == "BYTE" then return false end
    if unit == "UTF8_CHAR" then return true end
    raise_at(3, "ValueError", "%s: 'unit' must be 'BYTE' or 'UTF8_CHAR', got %s", op, tostring(unit))
  end

  local function need_string(op, arg, v)
    if type(v) ~= "string" and not tf.is_tensor(v) then
      raise_at(3, "TypeError", "%s: '%s' must be a string or a string tensor, got %s", op, arg, type(v))
    end
    return v
  end

  --- Length of each string: bytes, or UTF-8 characters with unit "UTF8_CHAR".
  -- tf.strings.length(input [, unit] [, {unit =, name =}]) -> int32, input's shape
  function strings.length(...)
    local a = args("length", {"input", "unit", "name"}, 1, ...)
    return internal.strings_length(a.input, unit_of("length", a.unit))
  end

  --- Substrings: `len` units from the 1-BASED position `pos` (negative:
  -- from the end, -1 the last unit), cut at the end of the string.
  -- pos/len: integers or int tensors of input's shape. A position outside
  -- 1..n+1 / -n..-1 is an InvalidArgumentError, as TensorFlow's.
  -- tf.strings.substr(input, pos, len [, unit] [, {...}])
  function strings.substr(...)
    local a = args("substr", {"input", "pos", "len", "unit", "name"}, 3, ...)
    for _, k in ipairs({"pos", "len"}) do
      local v = a[k]
      if not tf.is_tensor(v) and math.type(v) ~= "integer" and type(v) ~= "table" then
        raise_at(2, "TypeError", "substr: '%s' must be an integer or an integer tensor, got %s", k, tostring(v))
      end
    end
    return internal.strings_substr(a.input, a.pos, a.len, unit_of("substr", a.unit))
  end

  --- Numbers parsed from strings (the whole string, spaces around allowed):
  -- tf.strings.to_number(string_tensor [, out_type = tf.float32] [, {...}])
  function strings.to_number(...)
    local a = args("to_number", {"string_tensor", "out_type", "name"}, 1, ...)
    return internal.strings_to_number(a.string_tensor, a.out_type)
  end

  --- Whether each string matches `pattern` as a whole (PCRE2 syntax, UTF-8).
  -- tf.strings.regex_full_match(input, pattern [, {name =}]) -> bool
  function strings.regex_full_match(...)
    local a = args("regex_full_match", {"input", "pattern", "name"}, 2, ...)
    need_string("regex_full_match", "pattern", a.pattern)
    return internal.strings_regex_full_match(a.input, a.pattern)
  end

  --- Replace matches of `pattern` with `rewrite` (TensorFlow's rewrite
  -- syntax: \1..\9 insert groups, \0 the match, \\ a backslash); every
  -- match, or the first with replace_global = false.
  -- tf.strings.regex_replace(input, pattern, rewrite [, replace_global = true] [, {...}])
  function strings.regex_replace(...)
    local a = args("regex_replace", {"input", "pattern", "rewrite", "replace_global", "name"}, 3, ...)
    need_string("regex_replace", "pattern", a.pattern)
    need_string("regex_replace", "rewrite", a.rewrite)
    local global = a.replace_global
    if global == nil then global = true end
    return internal.strings_regex_replace(a.input, a.pattern, a.rewrite, global)
  end

  --- A scalar string: `template` with each `placeholder` ("{}") replaced by
  -- the next input, formatted as TensorFlow prints tensors ("[1 2 3]",
  -- nested brackets, at most `summarize` entries from each end of a dim
  -- with "..." between; -1 shows everything). `inputs`: a tensor or a list.
  -- tf.strings.format(template, inputs [, placeholder] [, summarize] [, {...}])
  function strings.format(...)
    local a = args("format", {"template", "inputs", "placeholder", "summarize", "name"}, 1, ...)
    need_string("format", "template", a.template)
    local inputs = a.inputs
    if inputs == nil then
      inputs = {}
    elseif tf.is_tensor(inputs) or type(inputs) ~= "table" or getmetatable(inputs) ~= nil then
      inputs = {inputs}
    end
    local s = a.summarize or 3
    if math.type(s) ~= "integer" or s < -1 then
      raise_at(2, "ValueError", "format: 'summarize' must be an integer >= -1, got %s", tostring(s))
    end
    local ph = a.placeholder or "{}"
    if type(ph) ~= "string" or #ph == 0 or #ph > 63 or ph:find("\0", 1, true) then
      raise_at(2, "ValueError", "format: 'placeholder' must be a string of 1 to 63 bytes")
    end
    return internal.strings_format(a.template, ph, s, table.unpack(inputs))
  end

  --- Split strings at `sep` (nil or "": runs of whitespace, empty parts
  -- dropped), at most `maxsplit` times (-1: no limit). TensorFlow returns a
  -- RaggedTensor; here:
  --   * without `pad` (eager only): Lua tables: a scalar input gives a list
  --     of strings, a vector input a list of such lists;
  --   * with `pad = s`: a string tensor padded with s to the longest row
  --     ([..., max parts]; what RaggedTensor.to_tensor(s) gives), and the
  --     int32 number of parts per element. Works inside tf.fn.
  -- tf.strings.split(input [, sep] [, maxsplit] [, {sep =, maxsplit =, pad =, name =}])
  function strings.split(...)
    local a = args("split", {"input", "sep", "maxsplit", "pad", "name"}, 1, ...)
    local sep = a.sep
    if sep ~= nil and type(sep) ~= "string" then
      raise_at(2, "TypeError", "split: 'sep' must be a string or nil, got %s", type(sep))
    end
    local maxsplit = a.maxsplit or -1
    if math.type(maxsplit) ~= "integer" or maxsplit < -1 then
      raise_at(2, "ValueError", "split: 'maxsplit' must be an integer >= -1, got %s", tostring(maxsplit))
    end
    if a.pad ~= nil and type(a.pad) ~= "string" then
      raise_at(2, "TypeError", "split: 'pad' must be a string, got %s", type(a.pad))
    end
    local x = a.input
    if type(x) == "table" and not tf.is_tensor(x) then x = tf.constant(x) end
    need_string("split", "input", x)
    local parts, counts = internal.strings_split(x, sep, maxsplit, a.pad or "")
    if a.pad ~= nil then return parts, counts end
    if parts:is_symbolic() then
      raise_at(2, "UnimplementedError", "split: inside tf.fn the result must be a tensor: give {pad = \"\"} for a "
               .. "padded string tensor")
    end
    local p, c = parts:totable(), counts:totable()
    local function trim(row, n)
      local r = {}
      for i = 1, n do r[i] = row[i] end
      return r
    end
    if type(c) == "number" then return trim(p, c) end
    local r = {}
    for i = 1, #c do r[i] = trim(p[i], c[i]) end
    return r
  end

  -- {==== Case, strip, reduce_join
  local function encoding_of(op, e)
    if e == nil or e == "" then return false end
    if type(e) == "string" and e:lower():gsub("[-_]", "") == "utf8" then return true end
    raise_at(3, "ValueError", "%s: 'encoding' must be '' (ASCII) or 'utf-8', got %s", op, tostring(e))
  end

  local function string_input(op, x)
    if type(x) == "table" and not tf.is_tensor(x) then x = tf.constant(x) end
    need_string(op, "input", x)
    return x
  end

  --- Lowercase: ASCII letters, or with encoding "utf-8" also the letters of
  -- Latin-1, Latin Extended-A, Greek and Cyrillic (other characters and
  -- invalid UTF-8 bytes are kept). tf.strings.lower(input [, encoding] [, {...}])
  function strings.lower(...)
    local a = args("lower", {"input", "encoding", "name"}, 1, ...)
    return internal.strings_case(string_input("lower", a.input), false, encoding_of("lower", a.encoding))
  end

  --- Uppercase, as lower. tf.strings.upper(input [, encoding] [, {...}])
  function strings.upper(...)
    local a = args("upper", {"input", "encoding", "name"}, 1, ...)
    return internal.strings_case(string_input("upper", a.input), true, encoding_of("upper", a.encoding))
  end

  --- ASCII whitespace removed at both ends. tf.strings.strip(input [, {name =}])
  function strings.strip(...)
    local a = args("strip", {"input", "name"}, 1, ...)
    return internal.strings_strip(string_input("strip", a.input))
  end

  --- Joins strings along `axis` (1-based, negative from the end; a list of
  -- axes; nil: every axis) with `separator` between them; keepdims keeps
  -- the joined axes with length 1.
  -- tf.strings.reduce_join(inputs [, axis] [, keepdims] [, separator] [, {...}])
  function strings.reduce_join(...)
    local a = args("reduce_join", {"inputs", "axis", "keepdims", "separator", "name"}, 1, ...)
    local x = a.inputs
    if type(x) == "table" and not tf.is_tensor(x) then x = tf.constant(x) end
    need_string("reduce_join", "inputs", x)
    local sep = a.separator or ""
    need_string("reduce_join", "separator", sep)
    local keep = a.keepdims and true or false
    if a.axis == nil then return internal.strings_reduce_join(x, -1, keep, sep) end
    local rank = x.shape:rank()
    local axes = type(a.axis) == "table" and not tf.is_tensor(a.axis) and a.axis or {a.axis}
    local seen, list = {}, {}
    for _, ax in ipairs(axes) do
      if math.type(ax) ~= "integer" then
        raise_at(2, "TypeError", "reduce_join: 'axis' must be an integer or a list of integers, got %s", tostring(ax))
      end
      local n = rank and rank > 0 and rank or 1
      if rank == nil and ax < 0 then
        raise_at(2, "InvalidArgumentError", "reduce_join: a negative 'axis' needs a known rank")
      end
      if ax == 0 or ax > n or ax < -n then
        raise_at(2, "InvalidArgumentError", "reduce_join: 'axis' %d is out of range for rank %d (axes are 1-based: "
                 .. "1..%d or -%d..-1)", ax, rank or -1, n, n)
      end
      local z = ax > 0 and ax - 1 or n + ax
      if seen[z] then raise_at(2, "InvalidArgumentError", "reduce_join: 'axis' %d is given twice", ax) end
      seen[z] = true
      list[#list + 1] = z
    end
    table.sort(list, function(p, q) return p > q end)   -- last axis first: row-major order of the joined elements
    for _, z in ipairs(list) do
      -- without keepdims, a later (smaller) axis keeps its index: only larger axes were removed
      x = internal.strings_reduce_join(x, z, keep, sep)
    end
    return x
  end
  -- }====

  -- {==== ngrams
  local function ragged_from_lists(op, lists)
    local n, width = #lists, 0
    for _, row in ipairs(lists) do
      if type(row) ~= "table" then
        raise_at(4, "TypeError", "%s: a list of lists of strings expected, got a %s row", op, type(row))
      end
      if #row > width then width = #row end
    end
    local flat, lens = {}, {}
    for i, row in ipairs(lists) do
      local r = {}
      for j = 1, width do r[j] = row[j] or "" end
      flat[i] = r
      lens[i] = #row
    end
    return flat, lens, n, width
  end

  local function lists_from_ragged(p, c)
    local r = {}
    for i = 1, #c do
      local row = {}
      for j = 1, c[i] do row[j] = p[i][j] end
      r[i] = row
    end
    return r
  end

  --- Word n-grams of the last axis of `data`, joined with `separator`.
  -- ngram_width: an integer or a list (the n-grams of each width, in
  -- order); pad_values: a string or {left, right} put padding_width times
  -- (default width - 1, capped there) at both ends; preserve_short_sequences:
  -- a row too short for any n-gram gives one of the whole (padded) row.
  -- data: a string tensor [..., n] (returns [..., n-grams]); with {lengths =
  -- l} (split's counts) the rows are ragged: returns the n-grams padded with
  -- "" and their counts; a Lua list of lists of strings (split's table form)
  -- gives a Lua list of lists.
  -- tf.strings.ngrams(data, ngram_width [, separator] [, pad_values] [, padding_width]
  --                   [, preserve_short_sequences] [, {lengths =, name =}])
  function strings.ngrams(...)
    local a = args("ngrams", {"data", "ngram_width", "separator", "pad_values", "padding_width",
                              "preserve_short_sequences", "lengths", "name"}, 2, ...)
    local widths = a.ngram_width
    if math.type(widths) == "integer" then widths = {widths} end
    if type(widths) ~= "table" or #widths == 0 then
      raise_at(2, "TypeError", "ngrams: 'ngram_width' must be an integer or a list of integers, got %s", tostring(a.ngram_width))
    end
    for _, w in ipairs(widths) do
      if math.type(w) ~= "integer" or w < 1 then
        raise_at(2, "ValueError", "ngrams: 'ngram_width' must be >= 1, got %s", tostring(w))
      end
    end
    local sep = a.separator or " "
    need_string("ngrams", "separator", sep)
    local left, right, pw = "", "", 0
    if a.pad_values ~= nil then
      local pv = a.pad_values
      if type(pv) == "string" then left, right = pv, pv
      elseif type(pv) == "table" and type(pv[1]) == "string" and type(pv[2]) == "string" then left, right = pv[1], pv[2]
      else raise_at(2, "TypeError", "ngrams: 'pad_values' must be a string or a pair of strings") end
      pw = a.padding_width or -1
      if math.type(pw) ~= "integer" or (pw < 1 and pw ~= -1) then
        raise_at(2, "ValueError", "ngrams: 'padding_width' must be an integer >= 1, got %s", tostring(a.padding_width))
      end
    elseif a.padding_width ~= nil then
      raise_at(2, "ValueError", "ngrams: 'padding_width' is set but 'pad_values' is not")
    end
    local preserve = a.preserve_short_sequences and true or false
    local data = a.data
    if type(data) == "table" and not tf.is_tensor(data) and type(data[1]) == "table" then
      local flat, lens = ragged_from_lists("ngrams", data)
      local g, c = internal.strings_ngrams(tf.constant(flat, tf.string), lens, widths, sep, left, right, pw, preserve)
      return lists_from_ragged(g:totable(), c:totable())
    end
    if type(data) == "table" and not tf.is_tensor(data) then
      if #data == 0 then raise_at(2, "InvalidArgumentError", "ngrams: 'data' is an empty list") end
      data = tf.constant(data)
    end
    need_string("ngrams", "data", data)
    local g, c = internal.strings_ngrams(data, a.lengths, widths, sep, left, right, pw, preserve)
    if a.lengths ~= nil then return g, c end
    return g
  end
  -- }====

  -- {==== Unicode
  local ERRORS = {strict = 0, replace = 1, ignore = 2}

  local function unicode_opts(op, a, enc_key)
    local enc = a[enc_key]
    if type(enc) ~= "string" or enc:upper():gsub("_", "-") ~= "UTF-8" then
      raise_at(3, "InvalidArgumentError", "%s: '%s' must be 'UTF-8' (the one encoding luatf supports), got %s", op,
               enc_key, tostring(enc))
    end
    local e = ERRORS[a.errors or "replace"]
    if not e then
      raise_at(3, "ValueError", "%s: 'errors' must be 'strict', 'replace' or 'ignore', got %s", op, tostring(a.errors))
    end
    local r = a.replacement_char or 0xFFFD
    if math.type(r) ~= "integer" then
      raise_at(3, "TypeError", "%s: 'replacement_char' must be an integer, got %s", op, tostring(r))
    end
    return e, r
  end

  local function decode(op, split, ...)
    local names = {"input", "input_encoding", "errors", "replacement_char", "pad", "name"}
    if not split then table.insert(names, 5, "replace_control_characters") end
    local a = args(op, names, 2, ...)
    local e, r = unicode_opts(op, a, "input_encoding")
    if a.replace_control_characters then
      raise_at(2, "UnimplementedError", "%s: 'replace_control_characters' is not supported", op)
    end
    local x = string_input(op, a.input)
    local pad = a.pad
    if pad ~= nil and (split and type(pad) ~= "string" or not split and math.type(pad) ~= "integer") then
      raise_at(2, "TypeError", "%s: 'pad' must be %s", op, split and "a string" or "an integer")
    end
    local chars, counts = internal.strings_unicode_decode(x, e, r, split, pad or (split and "" or 0))
    if pad ~= nil then return chars, counts end
    if chars:is_symbolic() then
      raise_at(2, "UnimplementedError", "%s: inside tf.fn the result must be a tensor: give {pad = %s} for a padded "
               .. "tensor", op, split and '""' or "0")
    end
    local p, c = chars:totable(), counts:totable()
    if type(c) == "number" then
      local row = {}
      for i = 1, c do row[i] = p[i] end
      return row
    end
    return lists_from_ragged(p, c)
  end

  --- The UTF-8 characters of each string (as strings: their bytes in the
  -- input). errors: "replace" (default: a bad sequence is one character,
  -- its bytes), "ignore" (dropped) or "strict" (InvalidArgumentError).
  -- Results as tf.strings.split: Lua tables, or with {pad = s} a padded
  -- tensor and the counts. tf.strings.unicode_split(input, "UTF-8" [, errors]
  -- [, replacement_char] [, {pad =, name =}])
  function strings.unicode_split(...)
    return decode("unicode_split", true, ...)
  end

  --- The code points of each string (int32), as unicode_split; a bad
  -- sequence gives replacement_char (U+FFFD) under "replace". With {pad =
  -- n}: a padded int32 tensor and the counts.
  function strings.unicode_decode(...)
    return decode("unicode_decode", false, ...)
  end

  --- Strings from code points: an int32 tensor [..., n] (each row one
  -- string; {lengths =} gives ragged rows), a Lua list of code points (one
  -- string) or a list of such lists (a vector). Invalid code points
  -- (negative, > 0x10FFFF, surrogates) follow `errors` (default "replace").
  -- tf.strings.unicode_encode(input, "UTF-8" [, errors] [, replacement_char] [, {lengths =}])
  function strings.unicode_encode(...)
    local a = args("unicode_encode", {"input", "output_encoding", "errors", "replacement_char", "lengths", "name"}, 2, ...)
    local e, r = unicode_opts("unicode_encode", a, "output_encoding")
    local x, lengths = a.input, a.lengths
    if type(x) == "table" and not tf.is_tensor(x) then
      if type(x[1]) == "table" then
        local n, width = #x, 0
        for _, row in ipairs(x) do if #row > width then width = #row end end
        local flat, lens = {}, {}
        for i, row in ipairs(x) do
          local q = {}
          for j = 1, width do q[j] = row[j] or 0 end
          flat[i] = q
          lens[i] = #row
        end
        if width == 0 then
          local out = {}
          for i = 1, n do out[i] = "" end
          return tf.constant(out, tf.string)
        end
        x, lengths = tf.constant(flat, tf.int32), lens
      elseif #x == 0 then
        return tf.constant("")
      else
        x = tf.constant(x, tf.int32)
      end
    end
    if not tf.is_tensor(x) then
      raise_at(2, "TypeError", "unicode_encode: 'input' must be an int32 tensor or a list of code points, got %s", type(x))
    end
    if x.dtype == tf.int64 then x = tf.cast(x, tf.int32) end
    return internal.strings_unicode_encode(x, lengths, e, r)
  end
  -- }====

  -- {==== Hashing
  local function buckets(op, n)
    if math.type(n) ~= "integer" or n < 1 then
      raise_at(3, "InvalidArgumentError", "%s: 'num_buckets' must be an integer >= 1, got %s", op, tostring(n))
    end
    return n
  end

  --- Each string's farmhash Fingerprint64 mod num_buckets (int64): the
  -- values TensorFlow gives. tf.strings.to_hash_bucket_fast(input, num_buckets [, {...}])
  function strings.to_hash_bucket_fast(...)
    local a = args("to_hash_bucket_fast", {"input", "num_buckets", "name"}, 2, ...)
    local n = buckets("to_hash_bucket_fast", a.num_buckets)
    return internal.strings_hash_bucket(string_input("to_hash_bucket_fast", a.input), n, false)
  end

  --- SipHash-2-4 keyed by `key` (two non-negative integers) mod num_buckets,
  -- as TensorFlow's. tf.strings.to_hash_bucket_strong(input, num_buckets, key [, {...}])
  function strings.to_hash_bucket_strong(...)
    local a = args("to_hash_bucket_strong", {"input", "num_buckets", "key", "name"}, 3, ...)
    local n = buckets("to_hash_bucket_strong", a.num_buckets)
    local k = a.key
    if type(k) ~= "table" or #k ~= 2 or math.type(k[1]) ~= "integer" or math.type(k[2]) ~= "integer" then
      raise_at(2, "InvalidArgumentError", "to_hash_bucket_strong: 'key' must be a list of 2 integers")
    end
    return internal.strings_hash_bucket(string_input("to_hash_bucket_strong", a.input), n, true, k[1], k[2])
  end
  -- }====
end
