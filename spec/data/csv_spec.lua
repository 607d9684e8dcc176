-- CSV: tf.io.decode_csv, tf.data.experimental.CsvDataset, make_csv_dataset
-- (core/csv.c): values against hand-written expectations, TensorFlow's
-- error texts, type inference.
local tf = require("tf")
local S = require("spec.support")
do   -- tf.io is img's module (lua/tf/io.lua loads tf.io_csv); without it install decode_csv directly
  local ok, io_ = pcall(function() return tf.io end)
  if not (ok and io_ and io_.decode_csv) then require("tf.io_csv")(tf, ok and io_ or nil) end
end
local E = tf.data.experimental

local function vals(...)
  local r = {}
  for i, t in ipairs({...}) do r[i] = t:totable() end
  return r
end

describe("tf.io.decode_csv", function()
  it("converts each column to its default's dtype", function()
    local a, b, c, d = tf.io.decode_csv({"1,2.5,x,7", "-3,1e3,yz,9000000000"},
      {0, 0.0, "", tf.constant(0, tf.int64)})
    assert.equal(tf.int32, a.dtype)
    assert.equal(tf.float32, b.dtype)
    assert.equal(tf.string, c.dtype)
    assert.equal(tf.int64, d.dtype)
    assert.same({{1, -3}, {2.5, 1000}, {"x", "yz"}, {7, 9000000000}}, vals(a, b, c, d))
  end)

  it("keeps the records' shape", function()
    local a = tf.io.decode_csv(tf.constant({{"1"}, {"2"}}), {0})
    assert.same({{1}, {2}}, a:totable())
    local s = tf.io.decode_csv(tf.constant("5"), {0})
    assert.equal(0, s.rank)
    assert.equal(5, s:item())
  end)

  it("fills empty fields and na_value from the defaults", function()
    local a, b = tf.io.decode_csv({",", "NA,4", "2,"}, {-1, tf.constant({7.0}, tf.float64)}, {na_value = "NA"})
    assert.same({{-1, -1, 2}, {7, 4, 7}}, vals(a, b))
    assert.equal(tf.float64, b.dtype)
  end)

  it("reads RFC 4180 quotes: delimiters, doubled quotes and line breaks inside", function()
    local a, b = tf.io.decode_csv({'"a,b","say ""hi"""', '"line1\nline2",""'}, {"", "d"})
    assert.same({{"a,b", "line1\nline2"}, {'say "hi"', "d"}}, vals(a, b))   -- "" is missing, as in TensorFlow
  end)

  it("use_quote_delim = false makes quotes data", function()
    local a, b = tf.io.decode_csv({'"a,b"'}, {"", ""}, {use_quote_delim = false})
    assert.same({{'"a'}, {'b"'}}, vals(a, b))
  end)

  it("field_delim and select_cols (1-based, increasing)", function()
    local a, b = tf.io.decode_csv({"1|2|3|4"}, {0, ""}, {field_delim = "|", select_cols = {2, 4}})
    assert.same({{2}, {"4"}}, vals(a, b))
  end)

  it("parses floats as strtod does, to the last bit", function()
    local cases = {"0.1", "3.14159265358979", "1e-7", "123456789012345678", "-0", "7e22", "8e-23",
                   "0.30000000000000004", "1.17549435e-38"}
    local recs = {}
    for i, c in ipairs(cases) do recs[i] = c end
    local f64 = tf.io.decode_csv(recs, {tf.constant(0, tf.float64)})
    local f32 = tf.io.decode_csv(recs, {0.0})
    local v64, v32 = f64:totable(), f32:totable()
    for i, c in ipairs(cases) do
      assert.equal(tonumber(c) + 0.0, v64[i])
      assert.equal(string.unpack("<f", string.pack("<f", tonumber(c))), v32[i])
    end
  end)

  it("raises TensorFlow's errors naming the record", function()
    assert.tf_error("InvalidArgumentError", "Expect 3 fields but have 2 in record 0", function()
      tf.io.decode_csv({"1,2"}, {0, 0, 0})
    end)
    assert.tf_error("InvalidArgumentError", "Expect 1 fields but have 2 in record 1", function()
      tf.io.decode_csv({"1", "1,2"}, {0})
    end)
    assert.tf_error("InvalidArgumentError", "Field 1 is required but missing in record 0!", function()
      tf.io.decode_csv({"1,"}, {0, tf.int32})
    end)
    assert.tf_error("InvalidArgumentError", "Field 0 in record 1 is not a valid int32: 2.5", function()
      tf.io.decode_csv({"1", "2.5"}, {0})
    end)
    assert.tf_error("InvalidArgumentError", "Field 0 in record 0 is not a valid int32: 3000000000", function()
      tf.io.decode_csv({"3000000000"}, {0})
    end)
    assert.tf_error("InvalidArgumentError", "Field 0 in record 0 is not a valid float: abc", function()
      tf.io.decode_csv({"abc"}, {0.0})
    end)
    assert.tf_error("InvalidArgumentError", "Unquoted fields cannot have quotes inside in record 0", function()
      tf.io.decode_csv({'a"b'}, {""})
    end)
    assert.tf_error("InvalidArgumentError", "Quote inside a string has to be escaped by another quote in record 0",
      function() tf.io.decode_csv({'"a"b'}, {""}) end)
    assert.tf_error("InvalidArgumentError", "Quoted field has to end with quote followed by delim or end in record 0",
      function() tf.io.decode_csv({'"ab'}, {""}) end)
    assert.tf_error("InvalidArgumentError", "decode_csv: 'field_delim' must be one character", function()
      tf.io.decode_csv({"a"}, {""}, {field_delim = ",,"})
    end)
    assert.tf_error("InvalidArgumentError", "decode_csv: record_defaults[1] has dtype bool", function()
      tf.io.decode_csv({"a"}, {tf.constant(true)})
    end)
    assert.tf_error("InvalidArgumentError", "'select_cols' must be increasing 1-based column positions", function()
      tf.io.decode_csv({"a,b"}, {"", ""}, {select_cols = {2, 1}})
    end)
  end)

  it("runs inside tf.fn as a graph op", function()
    local f = tf.fn(function(r) return tf.io.decode_csv(r, {0, 0.0}) end)
    local a, b = f(tf.constant({"4,0.5", "6,1.5"}))
    assert.same({{4, 6}, {0.5, 1.5}}, vals(a, b))
  end)
end)

describe("CsvDataset", function()
  local dir
  setup(function()
    dir = S.tmpdir()
    S.spit(dir .. "/a.csv", 'id,score,name\r\n1,0.5,"x, y"\r\n2,,b\r\n\r\n3,1.25,"q""q"\r\n')
    S.spit(dir .. "/b.csv", "id,score,name\n4,2,c\n")
  end)
  teardown(function() os.execute("rm -rf " .. S.shell_quote(dir)) end)

  local function rows(ds)
    local out = {}
    for a, b, c in ds do out[#out + 1] = {a:item(), b:item(), c and c:item()} end
    return out
  end

  it("reads the records of every file, header skipped, blank lines skipped", function()
    local ds = E.CsvDataset({dir .. "/a.csv", dir .. "/b.csv"}, {0, -1.0, ""}, {header = true})
    assert.same({{1, 0.5, "x, y"}, {2, -1, "b"}, {3, 1.25, 'q"q'}, {4, 2, "c"}}, rows(ds))
  end)

  it("select_cols picks columns; batch slices the parsed columns", function()
    local ds = E.CsvDataset({dir .. "/a.csv", dir .. "/b.csv"}, {tf.int64, ""}, {header = true, select_cols = {1, 3}})
    local bs = {}
    for ids, names in ds:batch(3) do bs[#bs + 1] = {ids:totable(), names:totable()} end
    assert.same({{{1, 2, 3}, {"x, y", "b", 'q"q'}}, {{4}, {"c"}}}, bs)
  end)

  it("reads GZIP files", function()
    os.execute("gzip -k " .. S.shell_quote(dir .. "/b.csv"))
    local ds = E.CsvDataset(dir .. "/b.csv.gz", {0, 0.0, ""}, {header = true, compression_type = "GZIP"})
    assert.same({{4, 2, "c"}}, rows(ds))
  end)

  it("names the file and the record in errors", function()
    S.spit(dir .. "/bad.csv", "1,2\n3\n")
    assert.tf_error("InvalidArgumentError", dir .. "/bad.csv: Expect 2 fields but have 1 in record 1", function()
      rows(E.CsvDataset(dir .. "/bad.csv", {0, 0}))
    end)
    assert.tf_error("NotFoundError", "CsvDataset: " .. dir .. "/none.csv: cannot open", function()
      rows(E.CsvDataset(dir .. "/none.csv", {0}))
    end)
    assert.tf_error("UnimplementedError", "inside tf.fn", function()
      tf.fn(function() for _ in E.CsvDataset(dir .. "/b.csv", {0, 0, ""}):iter() do end end)()
    end)
  end)
end)

describe("make_csv_dataset", function()
  local dir
  setup(function()
    dir = S.tmpdir()
    local lines = {"x,n,label,tag"}
    for i = 1, 10 do lines[#lines + 1] = string.format("%g,%d,%d,t%d", i / 4, i, i % 2, i) end
    S.spit(dir .. "/d.csv", table.concat(lines, "\n") .. "\n")
  end)
  teardown(function() os.execute("rm -rf " .. S.shell_quote(dir)) end)

  it("gives dicts of columns with types inferred as TensorFlow (int32, float32, string)", function()
    local ds = E.make_csv_dataset(dir .. "/d.csv", 4, {shuffle = false, num_epochs = 1})
    local got = {}
    for e in ds do got[#got + 1] = e end
    assert.equal(3, #got)
    assert.equal(tf.float32, got[1].x.dtype)
    assert.equal(tf.int32, got[1].n.dtype)
    assert.equal(tf.string, got[1].tag.dtype)
    assert.same({0.25, 0.5, 0.75, 1}, got[1].x:totable())
    assert.same({9, 10}, got[3].n:totable())
    assert.same({"t9", "t10"}, got[3].tag:totable())
  end)

  it("label_name splits off the label; select_columns; num_epochs repeats", function()
    local ds = E.make_csv_dataset(dir .. "/d.csv", 5, {label_name = "label", select_columns = {"n", "label"},
      shuffle = false, num_epochs = 2})
    local n = 0
    for f, y in ds do
      n = n + 1
      assert.same({"n"}, (function() local k = {} for a in pairs(f) do k[#k + 1] = a end return k end)())
      assert.same(n % 2 == 1 and {1, 0, 1, 0, 1} or {0, 1, 0, 1, 0}, y:totable())
    end
    assert.equal(4, n)
  end)

  it("shuffles with a seed reproducibly, each row once per epoch", function()
    local function order()
      local r = {}
      for f in E.make_csv_dataset(dir .. "/d.csv", 10, {shuffle_seed = 3, num_epochs = 1}) do
        r = f.n:totable()
      end
      return r
    end
    local a, b = order(), order()
    assert.same(a, b)
    local sorted = {table.unpack(a)}
    table.sort(sorted)
    assert.same({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, sorted)
    assert.are_not.same({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, a)
  end)

  it("errors: no file, unknown label", function()
    assert.tf_error("InvalidArgumentError", "make_csv_dataset: No files matched pattern: " .. dir .. "/zz*.csv",
      function() E.make_csv_dataset(dir .. "/zz*.csv", 2) end)
    assert.tf_error("InvalidArgumentError", "label_name \"y\" is not among the columns (x, n, label, tag)",
      function() E.make_csv_dataset(dir .. "/d.csv", 2, {label_name = "y"}) end)
  end)
end)
