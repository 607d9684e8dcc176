-- CsvDataset's exclude_cols: 1-based increasing positions of the columns to
-- leave out (the others are read, as select_cols would), the column count
-- taken from the first line; its errors.
local tf = require("tf")
local support = require("spec.support")

local dir = support.tmpdir()
local path = dir .. "/t.csv"
support.spit(path, 'a,b,c,d\n1,"x,y",2.5,7\n3,z,-1,8\n')
local gz = dir .. "/t.csv.gz"
os.execute("gzip -c " .. path .. " > " .. gz)

local function rows(ds)
  local out = {}
  for a, b, c in ds:as_table_iterator() do out[#out + 1] = {a, b, c} end
  return out
end

describe("CsvDataset exclude_cols", function()
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("reads the other columns, as select_cols would", function()
    local CsvDataset = tf.data.experimental.CsvDataset
    local want = {{1, 2.5, 7}, {3, -1, 8}}
    assert.are.same(want, rows(CsvDataset(path, {0, 0.0, 0}, {header = true, exclude_cols = {2}})))
    assert.are.same(want, rows(CsvDataset(path, {0, 0.0, 0}, {header = true, select_cols = {1, 3, 4}})))
    assert.are.same(want, rows(CsvDataset(gz, {0, 0.0, 0}, {header = true, exclude_cols = tf.constant({2}),
                                                           compression_type = "GZIP"})))
    assert.are.same({{"x,y", 7}, {"z", 8}}, rows(CsvDataset(path, {"", 0}, {header = true, exclude_cols = {1, 3}})))
  end)

  it("errors: both given, not increasing, past the columns, wrong count of defaults", function()
    local CsvDataset = tf.data.experimental.CsvDataset
    assert.tf_error("InvalidArgumentError", "CsvDataset: 'select_cols' and 'exclude_cols' are mutually exclusive",
      CsvDataset, path, {0, 0}, {select_cols = {1, 2}, exclude_cols = {3}})
    assert.tf_error("InvalidArgumentError", "'exclude_cols' must be increasing 1-based column positions, got 1 at 2",
      CsvDataset, path, {0, 0}, {exclude_cols = {2, 1}})
    assert.tf_error("InvalidArgumentError", "'exclude_cols' names column 5, but " .. path .. " has 4 columns",
      CsvDataset, path, {0, 0, 0}, {exclude_cols = {5}})
    assert.tf_error("InvalidArgumentError", "CsvDataset: " .. path .. " has 4 columns, 1 excluded: 3 record_defaults " ..
      "expected, got 2", CsvDataset, path, {0, 0}, {exclude_cols = {2}})
    assert.tf_error("TypeError", "'exclude_cols' must be a list", CsvDataset, path, {0}, {exclude_cols = 2})
    assert.tf_error("NotFoundError", dir .. "/missing.csv", CsvDataset, dir .. "/missing.csv", {0},
      {exclude_cols = {1}, compression_type = "GZIP"})
  end)
end)
