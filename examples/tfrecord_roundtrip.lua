--- A TFRecord round trip: tf.train.Example records (a float vector, an int64
-- label, a name, a variable-length list of token ids and a sequence of
-- pairs) are written to a few GZIP-compressed TFRecord files, read back in a
-- tf.data pipeline (TFRecordDataset over the files, interleaved;
-- batch; map(parse_example)), and a tiny model is trained on them.
-- The files are what TensorFlow writes and reads (docs/tfrecord.md).
-- TFRECORD_EXAMPLES and TFRECORD_EPOCHS shrink the run (the tests use a reduced one).
--   lua5.4 examples/tfrecord_roundtrip.lua
local tf = require("tf")
if not tf.io or not tf.io.TFRecordWriter then require("tf.io_tfrecord")(tf) end

local N = tonumber(os.getenv("TFRECORD_EXAMPLES") or "") or 1200
local EPOCHS = tonumber(os.getenv("TFRECORD_EPOCHS") or "") or 10
local NFILES = 3

-- {==== Writing: Examples with features of each kind
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
math.randomseed(3)
local files = {}
for f = 1, NFILES do
  files[f] = string.format("%s/train-%05d-of-%05d.tfrecord.gz", dir, f - 1, NFILES)
  local w <close> = tf.io.TFRecordWriter(files[f], tf.io.TFRecordOptions{compression_type = "GZIP"})
  for i = f, N, NFILES do
    local x = {}
    for k = 1, 4 do x[k] = math.random() * 2 - 1 end
    local label = (x[1] + x[2] - x[3] > 0) and 1 or 0   -- what the model has to learn
    local tokens = {}
    for k = 1, math.random(0, 5) do tokens[k] = math.random(1, 100) end
    w:write(tf.train.Example{features = {
      x = {float_list = x},
      label = {int64_list = {label}},
      name = {bytes_list = {"example-" .. i}},
      tokens = {int64_list = tokens},                      -- any length: a VarLenFeature
      pairs = {float_list = {x[1], x[2], x[3], x[4]}},     -- a sequence of 2 pairs
    }})
  end
end
print(("wrote %d Examples to %d files (GZIP)"):format(N, NFILES))
-- }====

-- {==== Reading: a pipeline of file records -> batches -> parsed features
local spec = {
  x = tf.io.FixedLenFeature({4}, tf.float32),
  label = tf.io.FixedLenFeature({1}, tf.int64),             -- [batch, 1], as the model's output
  name = tf.io.FixedLenFeature({}, tf.string, "?"),
  tokens = tf.io.VarLenFeature(tf.int64),
  pairs = tf.io.FixedLenSequenceFeature({2}, tf.float32, true),
}
local records = tf.data.TFRecordDataset(files, {compression_type = "GZIP", num_parallel_reads = NFILES})
local first = tf.io.parse_example(records:batch(4):take(1):as_list()[1], spec)
print("names: " .. table.concat(first.name:totable(), " "))
print("x: " .. tostring(first.x.shape) .. ", pairs: " .. tostring(first.pairs.shape) ..
      ", tokens: dense_shape " .. table.concat(first.tokens.dense_shape:totable(), "x") ..
      " (" .. first.tokens.values.shape[1] .. " values)")

local train = records:shuffle(256, 1):batch(32):map(function(serialized)
  local p = tf.io.parse_example(serialized, spec)
  return p.x, tf.cast(p.label, tf.float32)
end)
-- }====

-- {==== Training
tf.random.set_seed(1)
local model = tf.keras.Sequential{
  tf.keras.layers.Dense{8, activation = "relu"},
  tf.keras.layers.Dense{1, activation = "sigmoid"},
}
model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.05}, loss = "binary_crossentropy",
              metrics = {"accuracy"}}
local history = model:fit(train, {epochs = EPOCHS, verbose = 0})
local loss, acc = history.history.loss, history.history.accuracy
print(("loss: first epoch %.4f, last epoch %.4f; accuracy %.3f"):format(loss[1], loss[#loss], acc[#acc]))
for _, f in ipairs(files) do os.remove(f) end
os.remove(dir)
-- }====
