-- examples/csv_regression.lua: a linear regression trained from a CSV file
-- with tf.data.experimental.make_csv_dataset. The script writes the file
-- first (y = 2 x1 - 3 x2 + 0.5 plus a little noise, with a header line);
-- make_csv_dataset infers the column types from it, splits off the label
-- column and gives batches of {column name = values}.
-- Environment: CSV_REGRESSION_ROWS (default 2000), CSV_REGRESSION_EPOCHS (20).
local tf = require("tf")
tf.random.set_seed(3)
local rows = tonumber(os.getenv("CSV_REGRESSION_ROWS") or "2000")
local epochs = tonumber(os.getenv("CSV_REGRESSION_EPOCHS") or "20")
local base = os.tmpname()
local path = base .. ".csv"

-- the data file
local f = assert(io.open(path, "w"))
f:write("x1,x2,note,y\n")
local seed = 1
local function rnd()   -- a small LCG in [0, 1), so the file is the same every run
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end
for i = 1, rows do
  local x1, x2 = rnd() * 2 - 1, rnd() * 2 - 1
  local y = 2 * x1 - 3 * x2 + 0.5 + (rnd() - 0.5) * 0.02
  f:write(string.format("%.5f,%.5f,\"row %d, ok\",%.5f\n", x1, x2, i, y))
end
f:close()

local ds = tf.data.experimental.make_csv_dataset(path, 32, {
  label_name = "y", select_columns = {"x1", "x2", "y"}, num_epochs = 1, shuffle_seed = 5})
-- {x1 = (32,), x2 = (32,)}, y (32,) -> features (32, 2), y (32, 1)
local train = ds:map(function(features, y)
  return tf.stack({features.x1, features.x2}, 2), tf.expand_dims(y, 2)
end)

local model = tf.keras.Sequential{tf.keras.layers.Dense{1}}
model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.05}, loss = "mse"}
local h = model:fit(train, {epochs = epochs, verbose = 0})
local loss = h.history.loss
print(string.format("loss: first epoch %.5f, last epoch %.5f", loss[1], loss[#loss]))
local w = model.layers[1].kernel:value():totable()
local b = model.layers[1].bias:value():totable()
print(string.format("learned: y = %.3f x1 + %.3f x2 + %.3f (true: 2, -3, 0.5)", w[1][1], w[2][1], b[1]))
os.remove(path)
os.remove(base)
